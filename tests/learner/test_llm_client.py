"""The LLM client contract, driven through the real ``openai`` SDK against a local server.

Every fault the scripted server can inject is either retried (and the retry logged
and counted) or charged as one failed logical call; nothing else ever escapes.
"""

from __future__ import annotations

import json
import logging
import pickle
import random
import socket

import pytest

from relic_envs.errors import InvalidConfig
from relic_learner.llm import (
    CallLedger,
    Completion,
    LLMCallFailed,
    OfflineClient,
    OpenAIClient,
    ResponseCache,
    make_client,
)

MESSAGES = [
    {"role": "system", "content": "You are an expert algorithm designer."},
    {"role": "user", "content": "Write select_values_A."},
]
FAST = dict(api_key="dummy-local-key", timeout_s=2.0, max_retries=2, backoff_s=0.001, backoff_max_s=0.01)
TIMEOUT_S = 0.5  # only the timeout tests use it; a slow action sleeps far longer


def client_for(server, **kw) -> OpenAIClient:
    return OpenAIClient("fake-model", base_url=server.base_url, **{**FAST, **kw})


def retry_logs(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "retrying in" in r.getMessage()]


# -- the happy path ------------------------------------------------------------------------
def test_reply_is_returned_with_usage_and_counted_once(openai_server):
    openai_server.reply("```python\ndef f(x):\n    return x\n```", prompt_tokens=5, completion_tokens=3)
    client = client_for(openai_server)
    out = client.complete(MESSAGES, "proposal", tag="lift")
    assert isinstance(out, Completion)
    assert out.text.startswith("```python") and out.purpose == "proposal" and out.model == "fake-model"
    assert (out.prompt_tokens, out.completion_tokens, out.attempts, out.cached) == (5, 3, 1, False)
    body = openai_server.requests[0]["body"]
    assert body["model"] == "fake-model" and body["messages"] == MESSAGES and body["temperature"] == 1.0
    assert openai_server.requests[0]["headers"]["authorization"] == "Bearer dummy-local-key"
    snap = client.ledger.snapshot()
    assert snap["calls"] == {"auxiliary": 0, "proposal": 1} and snap["by_tag"] == {"lift": 1}
    assert (snap["attempts"], snap["retries"], snap["prompt_tokens"], snap["completion_tokens"]) == (1, 0, 5, 3)


# -- retryable faults ----------------------------------------------------------------------
RETRYABLE = [
    ("rate_limited", lambda s: s.status(429)),
    ("server_error", lambda s: s.status(500)),
    ("server_error", lambda s: s.status(502)),
    ("server_error", lambda s: s.status(503)),
    ("malformed", lambda s: s.malformed()),
    ("timeout", lambda s: s.slow(30.0)),
]


@pytest.mark.parametrize("reason,inject", RETRYABLE, ids=[f"{r}-{i}" for i, (r, _) in enumerate(RETRYABLE)])
def test_a_transient_fault_is_retried_logged_and_counted_as_one_call(openai_server, caplog, reason, inject):
    inject(openai_server)
    openai_server.reply("recovered")
    client = client_for(openai_server, timeout_s=TIMEOUT_S)
    with caplog.at_level(logging.WARNING, logger="relic_learner.llm.openai"):
        out = client.complete(MESSAGES, "proposal")
    assert out.text == "recovered" and out.attempts == 2
    assert len(openai_server.requests) == 2
    logs = retry_logs(caplog)
    assert len(logs) == 1 and reason in logs[0]
    led = client.ledger
    assert led.calls["proposal"] == 1 and led.attempts == 2 and led.retries == 1
    assert sum(led.failures.values()) == 0 and led.failed_calls["proposal"] == 0


PERSISTENT = [
    ("rate_limited", lambda s: s.status(429), 2),
    ("server_error", lambda s: s.status(500), 2),
    ("timeout", lambda s: s.slow(30.0), 1),  # each attempt waits TIMEOUT_S: keep it to two
]


@pytest.mark.parametrize("reason,inject,max_retries", PERSISTENT, ids=[r for r, _, _ in PERSISTENT])
def test_a_persistent_fault_fails_after_bounded_retries(openai_server, caplog, reason, inject, max_retries):
    for _ in range(max_retries + 2):  # one more than the client may use
        inject(openai_server)
    client = client_for(openai_server, timeout_s=TIMEOUT_S, max_retries=max_retries)
    with caplog.at_level(logging.WARNING, logger="relic_learner.llm.openai"):
        with pytest.raises(LLMCallFailed) as info:
            client.complete(MESSAGES, "auxiliary", tag="distill")
    assert info.value.reason == reason and info.value.attempts == max_retries + 1
    assert len(openai_server.requests) == max_retries + 1 and openai_server.pending == 1
    assert len(retry_logs(caplog)) == max_retries
    led = client.ledger
    assert led.calls["auxiliary"] == 1 and led.failed_calls["auxiliary"] == 1 and led.by_tag["distill"] == 1
    assert led.failures[reason] == 1 and led.attempts == max_retries + 1 and led.retries == max_retries


def test_a_malformed_body_is_retried_only_once(openai_server):
    openai_server.malformed().malformed().reply("never reached")
    client = client_for(openai_server, max_retries=4)
    with pytest.raises(LLMCallFailed) as info:
        client.complete(MESSAGES, "proposal")
    assert info.value.reason == "malformed" and info.value.attempts == 2
    assert openai_server.pending == 1 and client.ledger.failures["malformed"] == 1


def test_connection_refused_is_retried_then_fails(caplog):
    with socket.socket() as sock:  # a port nothing listens on once this socket closes
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = OpenAIClient("fake-model", base_url=f"http://127.0.0.1:{port}/v1", **FAST)
    with caplog.at_level(logging.WARNING, logger="relic_learner.llm.openai"):
        with pytest.raises(LLMCallFailed) as info:
            client.complete(MESSAGES, "proposal")
    assert info.value.reason == "connection" and info.value.attempts == FAST["max_retries"] + 1
    assert len(retry_logs(caplog)) == FAST["max_retries"] and client.ledger.failures["connection"] == 1


# -- charged at once -------------------------------------------------------------------------
NOT_RETRIED = [
    ("auth", lambda s: s.status(401)),
    ("auth", lambda s: s.status(403)),
    ("bad_request", lambda s: s.status(400)),
    ("bad_request", lambda s: s.status(404)),
    ("empty", lambda s: s.empty("")),
    ("empty", lambda s: s.empty("   \n")),
    ("empty", lambda s: s.empty(None)),
]


@pytest.mark.parametrize("reason,inject", NOT_RETRIED, ids=[f"{r}-{i}" for i, (r, _) in enumerate(NOT_RETRIED)])
def test_a_permanent_fault_is_charged_at_once(openai_server, reason, inject):
    inject(openai_server)
    openai_server.reply("must stay unused")
    client = client_for(openai_server)
    with pytest.raises(LLMCallFailed) as info:
        client.complete(MESSAGES, "proposal", tag="bridge")
    assert info.value.reason == reason and info.value.attempts == 1
    assert len(openai_server.requests) == 1 and openai_server.pending == 1
    led = client.ledger
    assert led.calls["proposal"] == 1 and led.failed_calls["proposal"] == 1 and led.failures[reason] == 1
    assert led.retries == 0


def test_retry_after_is_honoured_and_capped(openai_server, caplog):
    openai_server.status(429, retry_after=0.004).status(503, retry_after=120).reply("done")
    client = client_for(openai_server, backoff_s=0.001, backoff_max_s=0.02)
    with caplog.at_level(logging.WARNING, logger="relic_learner.llm.openai"):
        assert client.complete(MESSAGES, "proposal").text == "done"
    logs = retry_logs(caplog)
    assert "retrying in 0.004 s (Retry-After)" in logs[0]
    assert "retrying in 0.020 s (Retry-After)" in logs[1]  # 120 s asked, capped at backoff_max_s


def test_a_random_mix_of_faults_never_escapes_and_counts_every_attempt(openai_server):
    rng = random.Random(7)
    actions = [
        lambda s: s.reply("ok"),
        lambda s: s.status(429, retry_after=0),
        lambda s: s.status(500),
        lambda s: s.status(401),
        lambda s: s.status(400),
        lambda s: s.malformed(),
        lambda s: s.empty(""),
    ]
    for _ in range(80):
        rng.choice(actions)(openai_server)
    client = client_for(openai_server, max_retries=1)
    failed = 0
    for i in range(25):
        try:
            out = client.complete(MESSAGES, "proposal" if i % 3 else "auxiliary")
            assert out.text == "ok"
        except LLMCallFailed as exc:
            failed += 1
            assert exc.reason in {"rate_limited", "server_error", "auth", "bad_request", "malformed", "empty"}
    led = client.ledger
    assert led.total_calls == 25 and sum(led.failed_calls.values()) == failed == sum(led.failures.values())
    assert led.attempts == len(openai_server.requests) and led.retries == led.attempts - 25
    assert 0 < failed < 25 and openai_server.unscripted == 0


# -- cache -------------------------------------------------------------------------------------
def test_an_identical_request_is_served_from_the_cache(openai_server, tmp_path):
    openai_server.reply("first", prompt_tokens=4, completion_tokens=2).reply("second")
    client = client_for(openai_server, cache_dir=tmp_path)
    first = client.complete(MESSAGES, "proposal", cache_salt=[0, 1])
    again = client.complete(MESSAGES, "proposal", cache_salt=[0, 1])
    assert (first.text, first.cached) == ("first", False)
    assert (again.text, again.cached, again.attempts, again.prompt_tokens) == ("first", True, 0, 4)
    assert len(openai_server.requests) == 1
    led = client.ledger
    assert led.calls["proposal"] == 2 and led.cache_hits == 1 and led.prompt_tokens == 4 and led.attempts == 1
    # A resumed run (new client, same directory) replays the stored answer too.
    resumed = client_for(openai_server, cache_dir=tmp_path)
    assert resumed.complete(MESSAGES, "proposal", cache_salt=[0, 1]).cached
    assert len(openai_server.requests) == 1


def test_the_cache_salt_and_sampling_parameters_make_distinct_draws(openai_server, tmp_path):
    openai_server.reply("draw 1").reply("draw 2").reply("draw 3")
    client = client_for(openai_server, cache_dir=tmp_path)
    a = client.complete(MESSAGES, "proposal", cache_salt=[0, 1]).text
    b = client.complete(MESSAGES, "proposal", cache_salt=[0, 2]).text
    hotter = client_for(openai_server, cache_dir=tmp_path, temperature=0.2)
    c = hotter.complete(MESSAGES, "proposal", cache_salt=[0, 1]).text
    assert (a, b, c) == ("draw 1", "draw 2", "draw 3") and len(openai_server.requests) == 3
    assert client.complete(MESSAGES, "proposal", cache_salt=[0, 2]).text == "draw 2"


def test_an_auth_failure_is_not_recorded(openai_server, tmp_path):
    openai_server.status(401).reply("fine")
    client = client_for(openai_server, cache_dir=tmp_path)
    with pytest.raises(LLMCallFailed):
        client.complete(MESSAGES, "proposal")
    assert client.complete(MESSAGES, "proposal").text == "fine" and len(openai_server.requests) == 2


def test_a_failure_is_recorded_and_replayed_unless_asked_again(openai_server, tmp_path):
    openai_server.empty().reply("fine")
    client = client_for(openai_server, cache_dir=tmp_path)
    with pytest.raises(LLMCallFailed) as first:
        client.complete(MESSAGES, "proposal")
    assert first.value.reason == "empty" and not first.value.cached
    with pytest.raises(LLMCallFailed) as replayed:  # a rerun: the same failure, no request
        client_for(openai_server, cache_dir=tmp_path).complete(MESSAGES, "proposal")
    assert replayed.value.reason == "empty" and replayed.value.cached and replayed.value.attempts == 0
    assert len(openai_server.requests) == 1
    again = client_for(openai_server, cache_dir=tmp_path, replay_failures=False)
    assert again.complete(MESSAGES, "proposal").text == "fine" and len(openai_server.requests) == 2
    assert client.complete(MESSAGES, "proposal").text == "fine"  # the fresh answer replaced the record
    assert len(openai_server.requests) == 2


@pytest.mark.parametrize("garbage", ["{not json", json.dumps({"version": 1, "request": {}, "response": {}}), "[]"])
def test_a_corrupt_cache_entry_is_ignored_and_replaced(openai_server, tmp_path, garbage):
    openai_server.reply("fresh")
    client = client_for(openai_server, cache_dir=tmp_path)
    path = client.cache.path(client.cache_request(MESSAGES))
    path.parent.mkdir(parents=True)
    path.write_text(garbage)
    out = client.complete(MESSAGES, "proposal")
    assert (out.text, out.cached, len(openai_server.requests)) == ("fresh", False, 1)
    assert ResponseCache(tmp_path).get(client.cache_request(MESSAGES))["text"] == "fresh"


# -- ledger ------------------------------------------------------------------------------------
def test_proposal_and_auxiliary_calls_are_counted_apart(openai_server):
    for i in range(5):
        openai_server.reply(f"r{i}")
    client = client_for(openai_server)
    for tag in ("lift", "bridge", "reflect"):
        client.complete(MESSAGES, "proposal", tag=tag)
    client.complete(MESSAGES, "auxiliary", tag="distill")
    client.complete(MESSAGES, "auxiliary", tag="cross_distill")
    snap = client.ledger.snapshot()
    assert snap["calls"] == {"auxiliary": 2, "proposal": 3} and snap["total_calls"] == 5
    assert snap["by_tag"] == {"bridge": 1, "cross_distill": 1, "distill": 1, "lift": 1, "reflect": 1}


def test_a_ledger_snapshot_round_trips_through_json_and_a_resumed_run_continues(openai_server):
    openai_server.status(500).reply("a").status(401).reply("b")
    client = client_for(openai_server)
    client.complete(MESSAGES, "proposal", tag="lift")
    with pytest.raises(LLMCallFailed):
        client.complete(MESSAGES, "auxiliary")
    snap = json.loads(json.dumps(client.ledger.snapshot()))
    resumed = client_for(openai_server, ledger=CallLedger.from_snapshot(snap))
    assert resumed.ledger.snapshot() == snap
    resumed.complete(MESSAGES, "proposal", tag="lift")
    after = resumed.ledger.snapshot()
    assert after["calls"] == {"auxiliary": 1, "proposal": 2} and after["by_tag"] == {"lift": 2}
    assert after["failures"] == {"auth": 1} and after["retries"] == 1 and after["attempts"] == 4
    fresh = CallLedger()
    fresh.restore(after)
    assert fresh.snapshot() == after


@pytest.mark.parametrize(
    "bad",
    [{}, {"version": 99}, {"version": 1, "calls": {}}, "nope"],
)
def test_restoring_a_bad_snapshot_raises_value_error(bad):
    with pytest.raises(ValueError, match="snapshot"):
        CallLedger().restore(bad)


def test_restoring_a_snapshot_with_a_negative_or_unknown_count_raises():
    snap = CallLedger().snapshot()
    with pytest.raises(ValueError, match="retries"):
        CallLedger().restore({**snap, "retries": -1})
    with pytest.raises(ValueError, match="unknown keys"):
        CallLedger().restore({**snap, "calls": {"proposal": 1, "mystery": 2}})


# -- validation ----------------------------------------------------------------------------------
@pytest.mark.parametrize("purpose", ["proposals", "PROPOSAL", "", None, "reflect"])
def test_an_unknown_purpose_is_rejected_before_any_request(openai_server, purpose):
    client = client_for(openai_server)
    with pytest.raises(ValueError, match="'proposal', 'auxiliary'"):
        client.complete(MESSAGES, purpose)
    assert openai_server.requests == [] and client.ledger.total_calls == 0


@pytest.mark.parametrize(
    "messages,error",
    [
        ("hello", TypeError),
        ([], ValueError),
        ([{"role": "robot", "content": "x"}], ValueError),
        ([{"role": "user", "content": 3}], TypeError),
        (["user: x"], TypeError),
    ],
)
def test_bad_messages_are_rejected_before_any_request(openai_server, messages, error):
    client = client_for(openai_server)
    with pytest.raises(error, match="messages"):
        client.complete(messages, "proposal")
    assert openai_server.requests == [] and client.ledger.total_calls == 0


def test_bad_tag_and_salt_are_rejected(openai_server):
    client = client_for(openai_server)
    with pytest.raises(ValueError, match="tag"):
        client.complete(MESSAGES, "proposal", tag="")
    with pytest.raises(TypeError, match="cache_salt"):
        client.complete(MESSAGES, "proposal", cache_salt=object())
    assert openai_server.requests == []


def test_a_missing_key_names_the_environment_variable(monkeypatch):
    monkeypatch.delenv("RELIC_TEST_LLM_KEY", raising=False)
    with pytest.raises(InvalidConfig, match="RELIC_TEST_LLM_KEY"):
        OpenAIClient("m", api_key_env="RELIC_TEST_LLM_KEY")
    monkeypatch.setenv("RELIC_TEST_LLM_KEY", "sk-from-env")
    assert OpenAIClient("m", api_key_env="RELIC_TEST_LLM_KEY", base_url="http://127.0.0.1:9/v1").model == "m"


def test_the_key_from_the_environment_is_sent(openai_server, monkeypatch):
    monkeypatch.setenv("RELIC_TEST_LLM_KEY", "sk-from-env")
    openai_server.reply("ok")
    kw = {k: v for k, v in FAST.items() if k != "api_key"}
    client = OpenAIClient("fake-model", base_url=openai_server.base_url, api_key_env="RELIC_TEST_LLM_KEY", **kw)
    client.complete(MESSAGES, "proposal")
    assert openai_server.requests[0]["headers"]["authorization"] == "Bearer sk-from-env"


@pytest.mark.parametrize(
    "kw,name",
    [
        ({"temperature": 3.0}, "temperature"),
        ({"timeout_s": 0}, "timeout_s"),
        ({"max_retries": -1}, "max_retries"),
        ({"max_retries": 1.5}, "max_retries"),
        ({"backoff_s": 2.0, "backoff_max_s": 1.0}, "backoff_max_s"),
        ({"max_tokens": 0}, "max_tokens"),
    ],
)
def test_out_of_range_settings_are_rejected_by_name(kw, name):
    with pytest.raises(InvalidConfig, match=name):
        OpenAIClient("m", api_key="dummy", **kw)


def test_describe_names_model_and_endpoint(openai_server):
    text = client_for(openai_server).describe()
    assert text.startswith("openai:fake-model @ ") and openai_server.base_url in text and "\n" not in text


def test_make_client_builds_each_backend_and_rejects_other_specs(openai_server, caplog):
    client = make_client("openai:fake-model", base_url=openai_server.base_url, api_key="dummy")
    assert isinstance(client, OpenAIClient) and client.model == "fake-model"
    assert isinstance(make_client("offline", seed=3), OfflineClient)
    for spec in ("gpt-4o", "openai:", "anthropic:claude", ""):
        with pytest.raises(ValueError, match="'offline', 'openai:MODEL'"):
            make_client(spec)
    with pytest.raises(TypeError):
        make_client("offline", temperature=0.5)  # the offline backend takes no sampling settings


def test_llm_call_failed_survives_pickling():
    exc = pickle.loads(pickle.dumps(LLMCallFailed("rate_limited", "HTTP 429", attempts=3)))
    assert (exc.reason, exc.attempts) == ("rate_limited", 3) and "HTTP 429" in str(exc)
    with pytest.raises(ValueError, match="reason"):
        LLMCallFailed("flaky", "x", attempts=1)
