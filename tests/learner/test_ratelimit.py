"""The shared LLM rate limiter: its window arithmetic, and one limit held across processes on a real socket."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from relic_envs.errors import InvalidConfig
from relic_learner.llm.ratelimit import RateLimiter, estimate_tokens


class FakeTime:
    """A wall clock that only moves when the limiter sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def _limiter(tmp_path, t: FakeTime, **kw) -> RateLimiter:
    return RateLimiter(tmp_path / "rate.json", clock=t.clock, sleep=t.sleep, **kw)


def test_requests_beyond_rpm_wait_for_the_oldest_to_leave_the_window(tmp_path):
    t = FakeTime()
    limiter = _limiter(tmp_path, t, rpm=3, window_s=60)
    for _ in range(3):
        limiter.finish(limiter.acquire())
        t.now += 1.0  # requests at 1000, 1001, 1002, each answered at once
    assert t.slept == []
    limiter.finish(limiter.acquire())  # the 4th waits until 1000 + 60, when the first leaves
    assert t.now == pytest.approx(1060.0) and sum(t.slept) == pytest.approx(57.0)
    limiter.acquire()  # the 5th waits for the second (1001 + 60)
    assert t.now == pytest.approx(1061.0)


def test_a_request_counts_from_when_it_ends_and_blocks_while_in_flight(tmp_path):
    """The window runs from a request's end: a slow request can never share a window with the next at the server."""
    t = FakeTime()
    limiter = _limiter(tmp_path, t, rpm=1, window_s=60)
    slot = limiter.acquire()
    t.now = 1500.0  # still in flight long after its admission's window
    assert limiter.wait_time() == pytest.approx(6.0)  # a poll (window / 10): its end is not known yet
    limiter.finish(slot)
    assert limiter.wait_time() == pytest.approx(60.0)  # 60 s after it ended, not after it was admitted
    t.now = 1560.0
    assert limiter.wait_time() == 0


def test_a_request_whose_process_died_stops_blocking_after_stale_s(tmp_path, caplog):
    t = FakeTime()
    limiter = _limiter(tmp_path, t, rpm=1, window_s=60, stale_s=300)
    limiter.acquire()  # never finished: the cell crashed mid-request
    t.now = 1299.0
    assert limiter.wait_time() == pytest.approx(6.0)
    t.now = 1300.0  # taken as ended at 1000 + 300
    assert limiter.wait_time() == pytest.approx(60.0)
    with caplog.at_level("WARNING"):
        limiter.acquire()
    assert t.now == pytest.approx(1360.0) and "in flight for over 300 s" in caplog.text


def test_tokens_are_settled_to_the_reported_usage(tmp_path):
    t = FakeTime()
    limiter = _limiter(tmp_path, t, tpm=100, window_s=60)
    slot = limiter.acquire(30)
    assert limiter.wait_time(60) == 0  # 30 + 60 fits under 100
    limiter.finish(slot, 90)  # the endpoint reported 90 tokens
    assert limiter.wait_time(20) == pytest.approx(60.0)  # 90 + 20 does not fit until the first leaves
    t.now += 10
    limiter.acquire(20)
    assert t.now == pytest.approx(1060.0)


def test_a_request_bigger_than_the_budget_goes_alone_into_an_empty_window(tmp_path):
    t = FakeTime()
    limiter = _limiter(tmp_path, t, tpm=10, window_s=5)
    limiter.finish(limiter.acquire(50))  # an empty window admits it
    limiter.acquire(1)
    assert t.now == pytest.approx(1005.0)


def test_an_unreadable_file_is_an_empty_window_with_a_warning(tmp_path, caplog):
    t = FakeTime()
    (tmp_path / "rate.json").write_text('[[1000.0, 5, "ab"], [trunc')
    limiter = _limiter(tmp_path, t, rpm=1)
    with caplog.at_level("WARNING"):
        limiter.acquire()
    assert "unreadable" in caplog.text and t.slept == []
    assert len(json.loads((tmp_path / "rate.json").read_text())) == 1


@pytest.mark.parametrize("kw, match", [(dict(), "rpm or tpm"), (dict(rpm=0), "rpm"), (dict(tpm=1.5), "tpm"),
                                       (dict(rpm=True), "rpm"), (dict(rpm=1, window_s=0), "window_s")])
def test_bad_limits_are_rejected_by_name(tmp_path, kw, match):
    with pytest.raises(InvalidConfig, match=match):
        RateLimiter(tmp_path / "r.json", **kw)


def test_estimate_counts_characters_and_the_completion_cap():
    assert estimate_tokens([{"role": "user", "content": "x" * 9}], None) == 3
    assert estimate_tokens([{"role": "user", "content": "abcd"}], 100) == 101


_WORKER = textwrap.dedent("""
    import sys
    from relic_learner.llm import OpenAIClient, RateLimiter, PROPOSAL
    base_url, path, rpm, window, calls, name = sys.argv[1:]
    limiter = RateLimiter(path, rpm=int(rpm), window_s=float(window))
    # The SDK's first request pays its lazy imports between admission and sending; pay them outside the limit.
    OpenAIClient("fake-model", base_url=base_url, api_key="test").complete([{"role": "user", "content": "warm-up"}],
                                                                             PROPOSAL)
    client = OpenAIClient("fake-model", base_url=base_url, api_key="test", rate_limiter=limiter)
    for k in range(int(calls)):
        client.complete([{"role": "user", "content": f"{name} {k}"}], PROPOSAL)
""")


def test_one_limit_holds_across_concurrent_processes(openai_server, tmp_path):
    """Four processes, each with its own client, share rpm=4 per 0.5 s; the server sees the limit."""
    openai_server.responder = lambda body: "ok"
    rpm, window, calls, procs = 4, 0.5, 4, 4
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    workers = [subprocess.Popen([sys.executable, "-c", _WORKER, openai_server.base_url, str(tmp_path / "rate.json"),
                                 str(rpm), str(window), str(calls), f"w{k}"], env=env) for k in range(procs)]
    assert all(w.wait(timeout=120) == 0 for w in workers)
    times = sorted(r["time"] for r in openai_server.requests if r["body"]["messages"][0]["content"] != "warm-up")
    assert len(times) == procs * calls
    # Any rpm + 1 consecutive arrivals span at least one window. This is causality, not speed: a
    # request is admitted a window after the earlier one's answer came back, which the server
    # sent after stamping it; so no load on the machine can make it fail.
    spans = [times[k + rpm] - times[k] for k in range(len(times) - rpm)]
    assert min(spans) >= window - 1e-6, spans
    assert times[-1] - times[0] >= (procs * calls // rpm - 1) * window - 1e-6
