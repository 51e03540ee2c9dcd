"""Exact resume for every backend (DESIGN §11): a run killed anywhere and resumed ends
with the same run directory as an uninterrupted one.

The fast tests "kill" in-process: the kill hook (:mod:`relic_learner.killpoints`)
raises at the n-th occurrence of a point instead of sending SIGKILL, the Relic object
and its LLM client are dropped (all in-memory state is lost, as in a dead process),
and a fresh client resumes from the run directory. One shared evaluator keeps the
cost low (its cache only saves recomputing identical, deterministic rollouts). The
slow test sends a real SIGKILL through ``RELIC_KILL_AT`` in a ``relic learn`` process.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from relic_learner import killpoints
from relic_learner.evaluate import TeamEvaluator
from relic_learner.llm import OfflineClient, OpenAIClient
from relic_learner.llm.mutate import mutate_program
from relic_learner.relic import Relic, RelicConfig

ENV = "hmtsp"  # among the cheapest benchmarks to roll out; its batch 2 has Lift, Bridge and a distill
CONFIG = RelicConfig(env=ENV, batches=2, proposals=2, seed=5, workers=1)
OPENAI_CONFIG = dataclasses.replace(CONFIG, llm="openai:fake-model")
FENCE = re.compile(r"```python\n(.*?)```", re.S)
OUTPUTS = ("team/A.py", "team/B.py", "team/C.py", "public_tree.json", "trees.json", "curve.json", "operators.md")
LEDGER_COUNTS = ("calls", "by_tag", "failed_calls", "failures")


class _Killed(BaseException):
    """What the in-process kill raises (a BaseException, so no ``except Exception`` in the search catches it)."""


def scripted_reply(body: dict) -> str:
    """A pure function of the request: mutants of the parent, some junk, fixed principles."""
    user = body["messages"][-1]["content"]
    h = int(hashlib.sha256(user.encode()).hexdigest(), 16)
    if body["messages"][0]["role"] == "system":
        if h % 7 == 0:
            return "I would rather explain the idea in words."  # an invalid proposal
        return f"```python\n{mutate_program(FENCE.findall(user)[-1], random.Random(h)).source}\n```"
    if "Extract the core algorithmic principle" in user:
        return f"Repair the largest conflicts first (variant {h % 97})."
    return f"TYPE: STRATEGY\nPRINCIPLE: Move only where the measured gain is clear (variant {h % 89})."


@pytest.fixture(scope="module")
def evaluator():
    with TeamEvaluator(ENV, sandbox=False, workers=1) as ev:
        yield ev


def _offline(run: Path) -> OfflineClient:
    return OfflineClient(seed=CONFIG.seed)


def _openai_factory(server):
    def make(run: Path) -> OpenAIClient:  # the run's own cache, as Relic makes it for --llm openai:...
        return OpenAIClient("fake-model", base_url=server.base_url, api_key="test", backoff_s=0.0,
                            cache_dir=str(run / "llm_cache"))
    return make


def comparable(run: Path) -> dict:
    """A run directory minus what may differ: event times, whether a reply came from the cache,
    latency/attempt/token sums (a redone step's replies are cache hits)."""
    events = []
    for line in (run / "events.jsonl").read_text().replace(str(run), "RUN").splitlines():  # the cache's path
        event = json.loads(line)
        event.pop("time")
        event.pop("cached", None)
        if event["kind"] == "run_end":
            event["ledger"] = {k: event["ledger"][k] for k in LEDGER_COUNTS}
        events.append(event)
    saved = {p.relative_to(run).as_posix(): p.read_bytes() for d in ("transcripts", "invalid") if (run / d).exists()
             for p in sorted((run / d).iterdir())}
    return {"events": events, "saved": saved, **{name: (run / name).read_bytes() for name in OUTPUTS}}


def _kill_at(monkeypatch, point: str, n: int) -> None:
    seen = {"count": 0}

    def reached(name: str) -> None:
        if name == point:
            seen["count"] += 1
            if seen["count"] == n:
                raise _Killed(f"{point}:{n}")

    monkeypatch.setattr(killpoints, "reached", reached)


def _kill_points(whole: Path) -> list[tuple[str, int]]:
    """Mid-proposal (an LLM reply in batch 2's proposals), mid-batch-end (after batch 2's first
    Reveal event) and during a checkpoint write (after the first proposal of batch 2)."""
    events = [json.loads(line) for line in (whole / "events.jsonl").read_text().splitlines()]
    reveal = next(e["seq"] for e in events if e["kind"] == "reveal" and e["b"] == 2)
    distills = sum(e["kind"] == "distill" and e["b"] == 1 for e in events)
    calls_in_b1 = 3 * CONFIG.proposals + distills + 3 + 3  # proposals, distill, reveal, cross-distill (none fail)
    checkpoints_before = 1 + 3 * CONFIG.proposals + 1 + 1  # batch 1's start, proposals, end; batch 2's start
    return [("llm", calls_in_b1 + 3), ("event", reveal + 1), ("checkpoint", checkpoints_before + 1)]


def _check_resume(tmp_path, monkeypatch, evaluator, make_client, point: str, n: int, whole: Path,
                  config: RelicConfig = CONFIG) -> None:
    broken = tmp_path / f"broken-{point}"
    _kill_at(monkeypatch, point, n)
    with pytest.raises(_Killed):
        Relic(config, broken, llm=make_client(broken), evaluator=evaluator).learn()
    assert not (broken / "team").exists()
    monkeypatch.setattr(killpoints, "reached", lambda name: None)
    Relic.resume(broken, llm=make_client(broken), evaluator=evaluator).learn()
    assert comparable(broken) == comparable(whole), f"resume after a kill at {point}:{n} differs"


def _whole(tmp_path, evaluator, make_client, config: RelicConfig = CONFIG) -> Path:
    whole = tmp_path / "whole"
    Relic(config, whole, llm=make_client(whole), evaluator=evaluator).learn()
    return whole


def test_offline_backend_resumes_exactly_wherever_it_is_killed(tmp_path, monkeypatch, evaluator):
    """The offline backend's principles depend on the mutants it made; they must be in the checkpoint."""
    whole = _whole(tmp_path, evaluator, _offline)
    for point, n in _kill_points(whole):
        _check_resume(tmp_path, monkeypatch, evaluator, _offline, point, n, whole)


def test_openai_backend_resumes_exactly_wherever_it_is_killed(tmp_path, monkeypatch, evaluator, openai_server):
    openai_server.responder = scripted_reply
    make = _openai_factory(openai_server)
    whole = _whole(tmp_path, evaluator, make, OPENAI_CONFIG)
    for point, n in _kill_points(whole):
        _check_resume(tmp_path, monkeypatch, evaluator, make, point, n, whole, OPENAI_CONFIG)


def test_kill_hook_rejects_a_malformed_spec(monkeypatch):
    monkeypatch.setenv(killpoints.ENV, "midway")
    with pytest.raises(ValueError, match="POINT:N"):
        killpoints.reached("llm")


@pytest.mark.slow
def test_real_sigkill_then_resume_from_the_command_line(tmp_path, evaluator):
    """The hook itself: ``RELIC_KILL_AT`` SIGKILLs a ``relic learn`` process mid-proposal of batch 2."""
    whole = _whole(tmp_path, evaluator, _offline)
    point, n = _kill_points(whole)[0]
    out = tmp_path / "cli"
    cmd = [sys.executable, "-m", "relic_learner.cli", "learn", "--env", ENV, "--batches", "2", "--proposals", "2",
           "--seed", "5", "--workers", "1", "--out", str(out), "--quiet"]
    env = {k: v for k, v in os.environ.items() if k != killpoints.ENV}
    killed = subprocess.run(cmd, env={**env, killpoints.ENV: f"{point}:{n}"}, capture_output=True, timeout=600)
    assert killed.returncode == -9 and not (out / "team").exists()
    resume = [sys.executable, "-m", "relic_learner.cli", "learn", "--out", str(out), "--resume", "--quiet"]
    subprocess.run(resume, env=env, check=True, capture_output=True, timeout=600)
    assert comparable(out) == comparable(whole)
