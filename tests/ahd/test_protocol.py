"""Every comparator on RELIC's evaluator: the paper's call accounting (Appendix D), role isolation, resume."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import types

import pytest

import relic_envs
from baselines.ahd import METHODS, SearchConfig, method
from baselines.ahd._search import thought_of
from baselines.ahd.eoh import OPERATORS, EoHInd
from baselines.ahd.reevo import schedule
from relic_envs.errors import InvalidConfig
from relic_envs.seeds import seed_source
from relic_learner.llm import OpenAIClient
from relic_learner.llm.mutate import mutate_program

FENCE = re.compile(r"```python\n(.*?)```", re.S)
ENV = "mapp_pc"  # the cheapest team evaluation of the suite (about 0.2 s per mixed batch)
FUNCTIONS = {r: s.function for r, s in relic_envs.get_benchmark(ENV).signatures("paper").items()}
AUXILIARY = {"eoh": 0, "reevo": 138, "mcts_ahd": 0, "hifo": 15, "motif": 0}  # Appendix D, Table "Logical LLM invocations per complete three-role run"


def scripted_reply(body: dict) -> str:
    """A reply that depends only on the request: a thought and a mutant of the last program shown, or junk;
    reflection text for a request that shows no program to mutate into (auxiliary calls)."""
    user = body["messages"][-1]["content"]
    h = int(hashlib.sha256(user.encode()).hexdigest(), 16)
    if "Extract one or two" in user:  # HiFo's insight distillation
        return f"- Scripted principle number {h % 1000}: prefer options that keep later choices open."
    if "fewer than" in user and "words" in user:  # ReEvo's reflections
        return f"Scripted hint {h % 1000}: weigh distance against value."
    if h % 9 == 0:
        return "I would rather explain the idea in words."  # no function: an invalid proposal, still charged
    parent = FENCE.findall(user)[-1]
    return f"{{Scripted idea {h % 1000}.}}\n```python\n{mutate_program(parent, random.Random(h)).source}\n```"


@dataclasses.dataclass(frozen=True)
class _Evaluation:
    ok: bool
    mean_score: float | None
    mean_objective: float | None
    status: object


class HashEvaluator:
    """A stand-in for the sandboxed evaluator: a score that is a fixed function of the team and the batch.

    Call accounting depends only on what the search asks, not on how long a team takes to play,
    so the full-budget runs use this (1/13 of the teams are "invalid", to exercise charging);
    the resume tests below play real teams.
    """

    def __init__(self, seed_a):
        self.seed_a = seed_a  # teams with the seed A score 0 and are valid: the incumbent team never fails

    def evaluate(self, team, batch):
        if team["A"] == self.seed_a:
            return _Evaluation(True, 0.0, 0.0, None)
        h = int(hashlib.sha256(("|".join(team[r] for r in sorted(team)) + batch.digest).encode()).hexdigest(), 16)
        if h % 13 == 0:
            return _Evaluation(False, None, None, types.SimpleNamespace(reason="runtime", detail="hash says no"))
        return _Evaluation(True, (h % 10_000) / 100.0, (h % 10_000) / 100.0, None)

    def evaluate_many(self, teams, batch):
        return [self.evaluate(t, batch) for t in teams]

    def close(self):
        pass


def _client(server, tmp_path):
    return OpenAIClient("fake-model", base_url=server.base_url, api_key="test", backoff_s=0.0,
                        cache_dir=str(tmp_path / "cache"))


@pytest.mark.parametrize("name", sorted(METHODS))
def test_full_budget_counts_the_papers_calls_and_keeps_roles_isolated(name, openai_server, tmp_path):
    openai_server.responder = scripted_reply
    openai_server.status(500).status(429, retry_after=0).malformed()  # faults: retried, then one charged
    client = _client(openai_server, tmp_path)
    evaluator = HashEvaluator(seed_source(ENV, "A"))
    search = METHODS[name](SearchConfig(method=name, env=ENV, llm="openai:fake-model", seed=2), tmp_path / "run",
                           llm=client, evaluator=evaluator)
    search.learn()
    ledger = client.ledger.snapshot()
    proposals = [e for e in search.run.events() if e["kind"] == "proposal"]
    # Appendix D, "LLM Invocation Accounting": 150 candidate calls for every method, the method's auxiliary calls.
    assert len(proposals) == 150 and ledger["calls"] == {"proposal": 150, "auxiliary": AUXILIARY[name]}
    assert ledger["failed_calls"] == {"proposal": 0, "auxiliary": 0}
    if name == "eoh":
        assert [p["operator"] for p in proposals[:10]] == list(OPERATORS) * 2
    if name == "mcts_ahd":
        kinds = [p["operator"] for p in proposals if p["role"] == "A"]
        assert kinds[:3] == ["e1"] * 3 and {"e2", "m1", "m2", "s1"} <= set(kinds)
    if name == "motif":
        assert {p["operator"] for p in proposals} == {"counter", "learning", "innovation"}
    if name == "reevo":
        kinds = [p["operator"] for p in proposals if p["role"] == "A"]
        assert kinds[:4] == ["init"] * 4 and "crossover" in kinds and "mutation" in kinds
    reasons = {p.get("reason") for p in proposals if p["status"] == "invalid"}
    assert {"signature", "runtime"} <= reasons and any(p["status"] == "ok" for p in proposals)  # both charged
    # Role isolation: a role's requests name its own function only and hold none of its teammates' programs.
    sent = [r["body"]["messages"][-1]["content"] for r in openai_server.requests if "body" in r]
    assert len(sent) >= 150
    by_role = {role: [t for t in sent if f"def {fn}(" in t or f"Signature: {fn}(" in t] for role, fn in FUNCTIONS.items()}
    for role, texts in by_role.items():
        assert texts, role
        others = [fn for r, fn in FUNCTIONS.items() if r != role]
        assert not any(fn in t for t in texts for fn in others), f"role {role} saw a teammate's function"
    team = (tmp_path / "run" / "team")
    assert sorted(p.name for p in team.iterdir()) == ["A.py", "B.py", "C.py"]


def test_thought_is_the_braced_sentence_before_the_code():
    assert thought_of("{Greedy by ratio.}\n```python\ndef f(x):\n    return {1: 2}\n```") == "Greedy by ratio."
    assert thought_of("Pick the nearest.\ndef f(x):\n    return 1") == "Pick the nearest."
    assert thought_of("```python\ndef f(x):\n    return {}\n```") == ""


def test_registry_and_config_errors(tmp_path):
    assert method("eoh") is EoHInd and set(METHODS) == set(AUXILIARY)
    with pytest.raises(ValueError, match="unknown comparator"):
        method("nope")
    with pytest.raises(InvalidConfig, match="proposals"):
        SearchConfig(method="eoh", env="dgc", proposals=0)
    with pytest.raises(InvalidConfig, match="env"):
        SearchConfig(method="eoh", env="nope")
    with pytest.raises(InvalidConfig, match="method"):
        EoHInd(SearchConfig(method="reevo", env="dgc"), tmp_path / "x")


def test_reevo_schedule_gives_one_reflection_per_proposal_after_warm_up():
    kinds = [schedule(n) for n in range(50)]
    assert kinds[:4] == ["init"] * 4
    assert kinds[4:10] == ["crossover", "crossover", "mutation"] * 2  # ReEvo's 2:1 crossover to mutation
    assert 3 * sum(k != "init" for k in kinds) == 138  # Appendix D: 138 auxiliary calls per run


CONFIG = dict(env="mapp_pc", batches=2, proposals=3, seed=7, workers=1)
_KILLED_RUN = f"""
import sys
from baselines.ahd import METHODS, SearchConfig
name, out = sys.argv[1], sys.argv[2]
METHODS[name](SearchConfig(method=name, **{CONFIG!r}), out).learn()
"""


@pytest.mark.parametrize("name", ["eoh", "mcts_ahd", "hifo", "motif", "reevo"])
@pytest.mark.parametrize("point", ["event:9"])
def test_sigkill_and_resume_gives_the_uninterrupted_run(name, point, tmp_path):
    whole, broken = tmp_path / "whole", tmp_path / "broken"
    METHODS[name](SearchConfig(method=name, **CONFIG), whole).learn()
    # The killed run SIGKILLs itself at the 9th event (relic_learner.killpoints): mid-proposal of role A.
    env = {**os.environ, "RELIC_KILL_AT": point}
    out = subprocess.run([sys.executable, "-c", _KILLED_RUN, name, str(broken)], env=env, timeout=600,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert out.returncode == -signal.SIGKILL and not (broken / "team").exists()
    METHODS[name].resume(broken).learn()
    for role in "ABC":
        assert (broken / "team" / f"{role}.py").read_text() == (whole / "team" / f"{role}.py").read_text()
    assert _events((broken / "events.jsonl").read_text()) == _events((whole / "events.jsonl").read_text())


def _events(text: str) -> list[dict]:
    """Events without wall-clock fields (timestamps, call latency)."""
    out = []
    for line in text.splitlines():
        event = {k: v for k, v in json.loads(line).items() if k != "time"}
        if "ledger" in event:
            event["ledger"] = {k: v for k, v in event["ledger"].items() if k != "latency_s"}
        out.append(event)
    return out
