"""Every comparator on RELIC's evaluator: the paper's call accounting (Appendix D), role isolation, resume."""

from __future__ import annotations

import ast
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
    parent = next(p for p in reversed(FENCE.findall(user)) if _parses(p))  # MOTIF's last challenger may be junk
    return f"{{Scripted idea {h % 1000}.}}\n```python\n{mutate_program(parent, random.Random(h)).source}\n```"


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except SyntaxError:
        return False
    return True


@dataclasses.dataclass(frozen=True)
class _Evaluation:
    ok: bool
    mean_score: float | None
    mean_objective: float | None
    status: object
    results: tuple = ()  # no rollouts behind a hash (repair_shares of none: None)


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


def test_reevo_reference_schedule_is_reevos_iteration_and_makes_102_calls():
    kinds = [schedule(n, "reference") for n in range(50)]
    assert kinds[:4] == ["init"] * 4
    # one ReEvo iteration: 10 short-term reflections + crossovers, 1 long-term reflection, 5 mutations under it
    assert kinds[4:19] == ["crossover"] * 10 + ["mutation"] + ["reuse"] * 4
    assert 3 * sum(k in ("crossover", "mutation") for k in kinds) == 102  # not the paper's 138


def _run(name, server, tmp_path, **config):
    server.responder = scripted_reply
    client = _client(server, tmp_path)
    search = METHODS[name](SearchConfig(method=name, env=ENV, llm="openai:fake-model", **config), tmp_path / "run",
                           llm=client, evaluator=HashEvaluator(seed_source(ENV, "A")))
    return search, client


def test_reevo_reference_schedule_switch_counts_102_auxiliary_calls(openai_server, tmp_path):
    search, client = _run("reevo", openai_server, tmp_path, seed=2, schedule="reference")
    search.learn()
    assert client.ledger.snapshot()["calls"] == {"proposal": 150, "auxiliary": 102}
    with pytest.raises(InvalidConfig, match="schedule"):
        EoHInd(SearchConfig(method="eoh", env=ENV, schedule="reference"), tmp_path / "x")
    with pytest.raises(InvalidConfig, match="schedule"):
        SearchConfig(method="reevo", env=ENV, schedule="mine")


AUX_SHORT = {"eoh": 0, "reevo": 3 * (6 - 4), "mcts_ahd": 0, "hifo": 3 * 2, "motif": 0}  # 2 batches x 3 proposals


@pytest.mark.parametrize("name", sorted(METHODS))
def test_programs_are_rescored_when_a_teammate_improved_mid_batch_at_no_llm_call(name, openai_server, tmp_path):
    """Every program a role ranks, selects or credits by carries its score in the *current* team.

    With the hash evaluator the seed team scores 0, so A's first valid child improves the
    team within batch 1; B's and C's programs were scored with A's seed and must be
    re-scored (evaluations only) before they are used.
    """
    stale: list[tuple] = []

    class Checked(METHODS[name]):
        def prompt(self, role, h, rng):
            batch = self.batch()
            for c in self.programs(role):
                r = self.evaluator.evaluate(self.team(**{role: c.source}), batch)
                if c.score != (r.mean_score if r.ok else float("-inf")):
                    stale.append((self.state.b, role, h, c.id, c.score))
            return super().prompt(role, h, rng)

    openai_server.responder = scripted_reply
    client = _client(openai_server, tmp_path)
    search = Checked(SearchConfig(method=name, env=ENV, llm="openai:fake-model", seed=2, batches=2, proposals=3),
                     tmp_path / "run", llm=client, evaluator=HashEvaluator(seed_source(ENV, "A")))
    search.learn()
    assert stale == []
    events = list(search.run.events())
    rescored = {(e["b"], e["role"]) for e in events if e["kind"] == "rescore" and e["reason"] == "team_changed"}
    improved = [(e["b"], e["role"]) for e in events if e["kind"] == "proposal" and e.get("incumbent")]
    # every role whose block follows a teammate's improvement in the same batch was re-scored (the events show it)
    due = {(b, later) for b, role in improved for later in "ABC" if later > role}
    assert due and due <= rescored
    # No extra LLM call: exactly the proposals and the method's own auxiliary calls.
    assert client.ledger.snapshot()["calls"] == {"proposal": 18, "auxiliary": AUX_SHORT[name]}
    assert len([r for r in openai_server.requests if "body" in r]) == 18 + AUX_SHORT[name]


def test_reevo_reflections_carry_the_task_and_the_function_contract(openai_server, tmp_path):
    from baselines.ahd.reevo import REFLECTOR

    search, _ = _run("reevo", openai_server, tmp_path, seed=2, batches=1, proposals=7)
    search.learn()
    reflections = [r["body"]["messages"] for r in openai_server.requests
                   if "body" in r and r["body"]["messages"][0]["content"] == REFLECTOR]
    assert len(reflections) == 3 * 3  # proposals 4, 5, 6 of each role: crossover, crossover, mutation
    kinds = {"short": 0, "long": 0}
    for messages in reflections:
        text = messages[-1]["content"]
        role = next(r for r, fn in FUNCTIONS.items() if f"Signature: def {fn}(" in text)
        assert search.targets[role] in text  # task, signature, contract, seed description, hint
        contract = search.signatures[role].describe()
        assert contract in text and text.index(contract) < text.index("fewer than")
        kinds["short" if "[Worse code]" in text else "long"] += 1
    assert kinds == {"short": 6, "long": 3}


def test_motif_requests_carry_the_last_challenger_the_baseline_score_and_the_return_clause(openai_server, tmp_path):
    search, _ = _run("motif", openai_server, tmp_path, seed=2, batches=1, proposals=5)
    search.learn()
    sent = [r["body"]["messages"][-1]["content"] for r in openai_server.requests if "body" in r]
    sources = {(role, c.id): c.source for role in search.roles for c in search.programs(role)}
    proposals = [e for e in search.run.events() if e["kind"] == "proposal"]
    assert len(sent) == len(proposals) == 15
    checked = 0
    for k, (text, p) in enumerate(zip(sent, proposals)):
        assert "return to the baseline" in text and "baseline's team score (" in text
        if p["h"] == 0:
            assert "[Last challenger" not in text
            continue
        previous = proposals[k - 1]
        section = text.split("[Last challenger", 1)[1]
        if previous["status"] == "ok":
            assert f"```python\n{sources[(p['role'], previous['child'])].rstrip()}\n```" in section
            checked += 1
        else:
            assert section.startswith(" (invalid)")
    assert checked >= 6


def test_motif_propagates_a_baseline_update_to_every_arena_within_the_batch(openai_server, tmp_path):
    seen = []

    def on_step(state):
        if state.phase == "propose" and state.role_index == 1 and state.h == 0:  # A's block just ended
            seen.append((state.incumbent_score, {r: a.baseline for r, a in state.roles.items()}))

    openai_server.responder = scripted_reply
    search = METHODS["motif"](SearchConfig(method="motif", env=ENV, llm="openai:fake-model", seed=2, batches=1,
                                           proposals=3), tmp_path / "run", llm=_client(openai_server, tmp_path),
                              evaluator=HashEvaluator(seed_source(ENV, "A")), on_step=on_step)
    search.learn()
    (score, baselines), = seen
    assert score > 0.0  # A improved the seed team (score 0)
    assert baselines == {"A": score, "B": score, "C": score}
    assert any(e["kind"] == "baseline" and e["role"] == "A" for e in search.run.events())


def test_motif_baseline_code_its_score_and_the_goal_move_together(openai_server, tmp_path):
    """The code shown as the baseline is the program whose team score the prompt gives it, and the goal's
    threshold is that score, also after a proposal improved the team mid-block (issue 55: the new
    incumbent's code stood under the old score). As in the reference's controller, the baseline moves at
    the end of the block (``Controller._check_and_update_baseline``), code and score together."""
    baseline = re.compile(r"\[Baseline implementation\] team score (\S+) \(higher is better\)\n```python\n(.*?)```", re.S)
    shown: list[tuple] = []

    class Recorded(METHODS["motif"]):
        def prompt(self, role, h, rng):
            offer = super().prompt(role, h, rng)
            text = offer.messages[-1]["content"]
            score, code = baseline.search(text).groups()
            goal = re.search(r"baseline's team score \((\S+)\)", text).group(1)
            program, = [c for c in self.programs(role) if c.source.rstrip() == code.rstrip()]
            fresh = self.evaluator.evaluate(self.team(**{role: program.source}), self.batch())
            shown.append((self.state.b, role, h, score, goal, f"{fresh.mean_score:.6g}", program.id,
                          self.state.incumbent[role].id))
            return offer

    openai_server.responder = scripted_reply
    search = Recorded(SearchConfig(method="motif", env=ENV, llm="openai:fake-model", seed=2, batches=2, proposals=5),
                      tmp_path / "run", llm=_client(openai_server, tmp_path), evaluator=HashEvaluator(seed_source(ENV, "A")))
    search.learn()
    assert len(shown) == 30
    for b, role, h, score, goal, fresh, *_ in shown:
        assert score == goal == fresh, (b, role, h)
    # the case of the issue: the incumbent improved earlier in the block, and the baseline stayed put
    improved = [(e["b"], e["role"], e["h"]) for e in search.run.events()
                if e["kind"] == "proposal" and e.get("incumbent") and e["h"] < 4]
    later = [s for s in shown if any(s[:2] == i[:2] and s[2] > i[2] for i in improved)]
    assert improved and later and any(program != incumbent for *_, program, incumbent in later)


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


def test_a_mid_batch_rescore_scores_an_incumbent_the_method_pruned(tmp_path):
    """EoH's survival can drop the incumbent (a tie with an older program); its score must still be fresh."""
    evaluator = HashEvaluator(seed_source(ENV, "A"))
    search = EoHInd(SearchConfig(method="eoh", env=ENV, batches=1, proposals=2, seed=0), tmp_path / "run",
                    evaluator=evaluator)
    search.step()  # batch 1 starts: the seeds are every role's incumbent and population
    s, batch = search.state, search.batch()
    mutant = {r: mutate_program(s.incumbent[r].source, random.Random(k)).source for k, r in enumerate("AB")}
    s.roles["B"].members = [search.new_candidate("B", mutant["B"], "", 0.0, "m1")]  # the seed B pruned
    s.incumbent["A"] = search.new_candidate("A", mutant["A"], "", 0.0, "m1")  # A improved: the team changed
    search._refresh("B")
    team = evaluator.evaluate(search.team(), batch)
    assert team.ok and s.incumbent_score == team.mean_score == s.incumbent["B"].score
    assert [e["reason"] for e in search.run.events() if e["kind"] == "rescore"] == ["team_changed"]
