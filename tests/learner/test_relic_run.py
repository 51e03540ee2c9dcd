"""End-to-end RELIC runs through the real ``openai`` client and a local scripted server:
the paper's call accounting (Appendix D.4), and kill-and-resume equivalence (DESIGN §11)."""

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
from pathlib import Path

import pytest

from relic_learner.llm import OpenAIClient
from relic_learner.llm.mutate import mutate_program
from relic_learner.relic import Relic, RelicConfig

FENCE = re.compile(r"```python\n(.*?)```", re.S)


def scripted_reply(body: dict) -> str:
    """A reply that depends only on the request: mutants of the parent, some junk, fixed principles."""
    messages = body["messages"]
    user = messages[-1]["content"]
    h = int(hashlib.sha256(user.encode()).hexdigest(), 16)
    if messages[0]["role"] == "system":  # a proposal: the parent program is the fenced block
        if h % 10 == 0:
            return "I would rather explain the idea in words."  # no function: an invalid proposal
        parent = FENCE.findall(user)[-1]
        return f"Here it is:\n```python\n{mutate_program(parent, random.Random(h)).source}\n```"
    if "Extract the core algorithmic principle" in user:
        return "Repair the largest conflicts first and leave settled parts alone."
    return ("TYPE: STRATEGY\nPRINCIPLE: Move only where the measured gain is clear.\n"
            "TYPE: COORDINATION\nPRINCIPLE: Let roles act on different parts of the problem.")


@pytest.mark.heavy  # the same accounting at a small budget runs by default (test_relic_invariants)
def test_paper_budget_call_accounting(openai_server, tmp_path):
    openai_server.responder = scripted_reply
    openai_server.status(500).status(429, retry_after=0)  # two retried faults: attempts, not logical calls
    client = OpenAIClient("fake-model", base_url=openai_server.base_url, api_key="test", backoff_s=0.0,
                          cache_dir=str(tmp_path / "cache"))
    config = RelicConfig(env="dgc", llm="openai:fake-model", seed=3)  # 3 roles x 5 batches x 10 proposals
    relic = Relic(config, tmp_path / "run", llm=client)
    relic.learn()
    ledger = client.ledger.snapshot()
    events = relic.run.events()
    proposals = [e for e in events if e["kind"] == "proposal"]
    positive = {(e["b"], e["role"]) for e in proposals if e["status"] == "ok" and e["gain"] > 0}
    assert len(proposals) == 150 and ledger["calls"]["proposal"] == 150
    assert ledger["calls"]["auxiliary"] == 30 + len(positive)  # Reveal + cross-distill + D+
    assert sum(e["kind"] == "distill" for e in events) == len(positive)
    assert ledger["by_tag"]["reveal"] == 15 and ledger["by_tag"]["cross_distill"] == 15
    assert len(openai_server.requests) == 180 + len(positive) + 2  # the two faults were retried
    assert any(e["status"] == "invalid" and e["reason"] == "signature" for e in proposals)  # junk was charged
    assert 0 < len(positive) <= 15
    run = Path(relic.run.path)
    for name in ("team/A.py", "public_tree.json", "operators.md", "config.json", "trees.json"):
        assert (run / name).exists(), name


def _learn_cmd(out: Path, base_url: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "relic_learner.cli", "learn", "--env", "dgc", "--llm", "openai:fake-model",
            "--base-url", base_url, "--batches", "2", "--proposals", "3", "--seed", "5", "--workers", "1",
            "--out", str(out), "--quiet", *extra]


@pytest.mark.slow  # ~40 s on 2 cores; test_resume_exact.py covers the kill points fast, this one kills from outside
def test_kill_and_resume_gives_the_uninterrupted_result(openai_server, tmp_path):
    openai_server.responder = scripted_reply
    env = {**os.environ, "OPENAI_API_KEY": "test"}
    whole, broken = tmp_path / "whole", tmp_path / "broken"
    subprocess.run(_learn_cmd(whole, openai_server.base_url), env=env, check=True, timeout=600,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    total = len((whole / "events.jsonl").read_text().splitlines())

    proc = subprocess.Popen(_learn_cmd(broken, openai_server.base_url), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    events = broken / "events.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if events.exists() and len(events.read_text().splitlines()) >= total // 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (broken / "team").exists()

    resume = [sys.executable, "-m", "relic_learner.cli", "learn", "--out", str(broken), "--resume", "--quiet"]
    subprocess.run(resume, env=env, check=True, timeout=600, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for role in "ABC":
        assert (broken / "team" / f"{role}.py").read_text() == (whole / "team" / f"{role}.py").read_text()
    kinds = lambda path: [json.loads(line)["kind"] for line in (path / "events.jsonl").read_text().splitlines()]  # noqa: E731
    assert kinds(broken) == kinds(whole) and len(kinds(broken)) == total
    end = lambda path: json.loads((path / "events.jsonl").read_text().splitlines()[-1])  # noqa: E731
    assert end(broken)["score"] == end(whole)["score"]
