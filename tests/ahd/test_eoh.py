"""EoH-ind. on RELIC's evaluator: the paper's call accounting, role isolation, its operators, resume."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from baselines.ahd import METHODS, PLANNED, SearchConfig, method
from baselines.ahd._search import Candidate, thought_of
from baselines.ahd.eoh import OPERATORS, EoHInd, Population
from relic_envs.errors import InvalidConfig
from relic_learner.llm import OpenAIClient
from relic_learner.llm.mutate import mutate_program

FENCE = re.compile(r"```python\n(.*?)```", re.S)
FUNCTIONS = {"A": "select_values_A", "B": "select_values_B", "C": "select_values_C"}


def scripted_reply(body: dict) -> str:
    """A reply that depends only on the request: a thought and a mutant of the last program shown, or junk."""
    user = body["messages"][-1]["content"]
    h = int(hashlib.sha256(user.encode()).hexdigest(), 16)
    if h % 9 == 0:
        return "I would rather explain the idea in words."  # no function: an invalid proposal, still charged
    parent = FENCE.findall(user)[-1]
    return f"{{Scripted idea {h % 1000}.}}\n```python\n{mutate_program(parent, random.Random(h)).source}\n```"


def _client(server, tmp_path):
    return OpenAIClient("fake-model", base_url=server.base_url, api_key="test", backoff_s=0.0,
                        cache_dir=str(tmp_path / "cache"))


@pytest.mark.slow
def test_full_budget_counts_the_papers_calls_and_keeps_roles_isolated(openai_server, tmp_path):
    openai_server.responder = scripted_reply
    openai_server.status(500).status(429, retry_after=0).malformed()  # faults: retried, then one charged
    client = _client(openai_server, tmp_path)
    search = EoHInd(SearchConfig(method="eoh", env="dgc", llm="openai:fake-model", seed=2), tmp_path / "run",
                    llm=client)
    search.learn()
    ledger = client.ledger.snapshot()
    proposals = [e for e in search.run.events() if e["kind"] == "proposal"]
    # Appendix D, "LLM Invocation Accounting": 150 candidate calls, no auxiliary call.
    assert len(proposals) == 150 and ledger["calls"] == {"proposal": 150, "auxiliary": 0}
    assert [p["operator"] for p in proposals[:10]] == list(OPERATORS) * 2
    assert any(p["status"] == "invalid" for p in proposals) and any(p["status"] == "ok" for p in proposals)
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


def test_operators_select_parents_by_rank_and_keep_the_best_distinct():
    pop = Population([Candidate(i, f"src{i}", f"t{i}", score, 1) for i, score in enumerate([1.0, 5.0, 3.0, 5.0])])
    pop.manage(size=2)
    assert [c.id for c in pop.members] == [1, 2]  # duplicates of a score dropped (id 3), best 2 kept
    draws = [pop.select(1, np.random.default_rng(k))[0].id for k in range(4000)]
    # prob_rank: weights 1/(0+1+2) and 1/(1+1+2), i.e. 4/7 and 3/7
    assert abs(draws.count(1) / len(draws) - 4 / 7) < 0.03
    assert len({c.id for c in pop.select(2, np.random.default_rng(0))}) == 2


def test_thought_is_the_braced_sentence_before_the_code():
    assert thought_of("{Greedy by ratio.}\n```python\ndef f(x):\n    return {1: 2}\n```") == "Greedy by ratio."
    assert thought_of("Pick the nearest.\ndef f(x):\n    return 1") == "Pick the nearest."
    assert thought_of("```python\ndef f(x):\n    return {}\n```") == ""


def test_registry_and_config_errors(tmp_path):
    assert method("eoh") is EoHInd and set(METHODS) == {"eoh"}
    for name in PLANNED:
        with pytest.raises(NotImplementedError, match=name):
            method(name)
    with pytest.raises(ValueError, match="unknown comparator"):
        method("nope")
    with pytest.raises(InvalidConfig, match="proposals"):
        SearchConfig(method="eoh", env="dgc", proposals=0)
    with pytest.raises(InvalidConfig, match="env"):
        SearchConfig(method="eoh", env="nope")
    with pytest.raises(InvalidConfig, match="method"):
        EoHInd(SearchConfig(method="hifo", env="dgc"), tmp_path / "x")


_RUN = """
import sys
from baselines.ahd import SearchConfig
from baselines.ahd.eoh import EoHInd
out = sys.argv[1]
if len(sys.argv) > 2:
    EoHInd.resume(out).learn()
else:
    EoHInd(SearchConfig(method="eoh", env="dgc", batches=2, proposals=4, seed=7, workers=1), out).learn()
"""


def _run(*args, **kw):
    return subprocess.Popen([sys.executable, "-c", _RUN, *map(str, args)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, **kw)


def test_sigkill_and_resume_gives_the_uninterrupted_run(tmp_path):
    whole, broken = tmp_path / "whole", tmp_path / "broken"
    assert _run(whole).wait(timeout=600) == 0
    lines = (whole / "events.jsonl").read_text().splitlines()
    proc = _run(broken)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if (broken / "events.jsonl").exists() and len((broken / "events.jsonl").read_text().splitlines()) >= 9:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert _run(broken, "--resume").wait(timeout=600) == 0
    for role in "ABC":
        assert (broken / "team" / f"{role}.py").read_text() == (whole / "team" / f"{role}.py").read_text()
    assert _events((broken / "events.jsonl").read_text()) == _events("\n".join(lines))


def _events(text: str) -> list[dict]:
    """Events without wall-clock fields (timestamps, call latency)."""
    out = []
    for line in text.splitlines():
        event = {k: v for k, v in json.loads(line).items() if k != "time"}
        if "ledger" in event:
            event["ledger"] = {k: v for k, v in event["ledger"].items() if k != "latency_s"}
        out.append(event)
    return out
