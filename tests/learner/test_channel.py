"""The role-worker channel: what crosses keeps its exact type, and nothing else crosses."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from relic_learner import channel
from relic_learner.channel import ChannelError, Unsendable, decode_reply, encode_reply, encode_value


def _roundtrip(value):
    ((ok, back),) = decode_reply(encode_reply([["ok", encode_value(value)]]), 1)
    assert ok
    return back


@pytest.mark.parametrize("value", [
    None, True, 3, -2.5, float("inf"), [1, 2.0, None], (1, (2, 3)), {1: 0.5, -(2**63): [4]},
    np.arange(6, dtype=np.int32).reshape(2, 3), np.array([0.5, np.nan]), np.array([], dtype=bool), np.int8(-3),
    np.float32(1.5), np.zeros((2, 0, 3)),
])
def test_values_keep_their_exact_types(value):
    back = _roundtrip(value)
    assert type(back) is type(value)
    if isinstance(value, np.ndarray):
        assert back.dtype == value.dtype and back.shape == value.shape
        np.testing.assert_array_equal(back, value)
    elif isinstance(value, float) and value != value:
        assert back != back
    else:
        assert back == value


@given(st.recursive(st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False),
                    lambda kids: st.lists(kids, max_size=4) | st.tuples(kids, kids), max_leaves=20))
def test_plain_data_round_trips(value):
    assert _roundtrip(value) == value


class Sub(list):
    pass


@pytest.mark.parametrize("value", [Sub([1]), np.array([object()]), np.array(["s"]), np.datetime64("2020"),
                                   object(), [[[[[[[[[[1]]]]]]]]]], np.zeros(3).view(np.recarray),
                                   "text", {"a": 1}, {(2, 3): 1}, {1.0: 1}, {True: 1}, 2**63, [-(2**63) - 1]])
def test_what_is_not_plain_data_is_not_sent(value):
    with pytest.raises(Unsendable):
        encode_value(value)


@pytest.mark.parametrize("raw", [
    pickle.dumps([["ok", None]]),                      # never unpickled
    b"not json", b"[" * 100_000 + b"]" * 100_000,      # too deep for the parser
    json.dumps([["ok", None], ["ok", None]]).encode(),  # more answers than requests
    json.dumps([["fail", "score", "0.0"]]).encode(),    # a reason a worker may not give
    json.dumps([["ok", ["a", "|O", [1], [0]]]]).encode(),
    json.dumps([["ok", ["a", "<i8", [3], [1, 2]]]]).encode(),
    json.dumps([["ok", ["a", "<i8", [1], ["x"]]]]).encode(),
    json.dumps([["ok", ["a", "|u1", [1], [300]]]]).encode(),
    json.dumps([["ok", ["d", [[["l", []], 1]]]]]).encode(),  # an unhashable key
    json.dumps([["ok", ["d", [[["g", "<i8", 1], 1]]]]]).encode(),  # keys are plain int64s
    json.dumps([["ok", ["d", [[2**63, 1]]]]]).encode(),
    json.dumps([["ok", ["s", "text"]]]).encode(),  # actions are numbers
    json.dumps([["ok", 2**64]]).encode(),
    json.dumps([["ok", ["l", [1] * (2**19)]]]).encode(),  # more values than a reply may hold
    json.dumps([["ok", ["l"] + [[]] * 2]]).encode(),
    json.dumps([["ok", {"kind": "result"}]]).encode(),
    json.dumps([["ok", ["l", [["l", [["l", [["l", [["l", [["l", [["l", [["l", [["l", [1]]]]]]]]]]]]]]]]]]]]).encode(),
    b" " * (channel.MAX_REPLY_BYTES + 1),
])
def test_anything_else_is_a_channel_error(raw):
    with pytest.raises(ChannelError):
        decode_reply(raw, 1)


def test_a_failure_keeps_its_reason_and_a_bounded_detail():
    ((ok, (reason, detail)),) = decode_reply(encode_reply([["fail", "timeout", "x" * 10_000]]), 1)
    assert not ok and reason == "timeout" and len(detail) == 2000


def test_large_arrays_cross_once_also_inside_a_dict_argument():
    # MAPP's role B gets graph={"dist_mat": (n, n), "nodes": [...]}: the matrix is sent to
    # the child once, then named by its key; the child hands every call its own copy.
    dist = np.arange(64 * 64, dtype=np.float64).reshape(64, 64)
    kwargs = {"graph": {"dist_mat": dist, "nodes": [(0, 0.5, 0.5, 1.0)]}, "budget": 3.0}
    table, held = channel.ShareTable(), {}
    first, second = table.compact(kwargs), table.compact(kwargs)
    assert type(first["graph"]["dist_mat"]) is channel.Shared and first["graph"]["dist_mat"].array is not None
    assert second["graph"]["dist_mat"].array is None  # the second step names it only
    assert len(pickle.dumps(second)) < 1000 < dist.nbytes
    for sent in (first, second):
        got = channel.expand(pickle.loads(pickle.dumps(sent)), held)
        assert np.array_equal(got["graph"]["dist_mat"], dist) and got["graph"]["nodes"] == [(0, 0.5, 0.5, 1.0)]
        got["graph"]["dist_mat"][0, 0] = -1.0  # a program scribbling on its copy changes nothing held
    assert channel.expand(second, held)["graph"]["dist_mat"][0, 0] == 0.0


def _digests(monkeypatch) -> list[int]:
    import hashlib

    calls, real = [], hashlib.blake2b

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(hashlib, "blake2b", counting)
    return calls


def test_an_unchangeable_array_is_known_by_identity_and_a_changed_one_is_sent_again(monkeypatch):
    digests = _digests(monkeypatch)
    table, held = channel.ShareTable(), {}
    fixed = np.arange(1024, dtype=np.float64)
    fixed.setflags(write=False)  # as every instance array is
    live = np.arange(1024, dtype=np.float64)  # a writeable array the referee may change in place
    sent = [table.compact({"fixed": fixed, "live": live}) for _ in range(3)]
    assert len(digests) == 1 + 3  # the fixed array once, the live one at every step
    assert [s["fixed"].array is None for s in sent] == [False, True, True]
    for s in sent:
        assert np.array_equal(channel.expand(s, held)["fixed"], fixed)
    live[0] = -5.0  # the same object, new content: it must cross again, not be named by its old key
    again = table.compact({"fixed": fixed, "live": live})
    assert again["live"].array is not None and channel.expand(again, held)["live"][0] == -5.0
    assert channel.expand(sent[-1], held)["live"][0] == 0.0  # what that step sent, not the change


def test_a_parameter_whose_arrays_never_repeat_stops_being_digested(monkeypatch):
    # DCOP's per-sweep uniforms ``u`` differ at every step: after SHARE_PROBE digests that
    # found no repeat they are sent as they are, and still arrive exactly.
    digests = _digests(monkeypatch)
    table, held = channel.ShareTable(), {}
    rng = np.random.default_rng(0)
    steps = [rng.random(1024) for _ in range(channel.SHARE_PROBE + 10)]
    out = [table.compact({"u": u}) for u in steps]
    assert len(digests) == channel.SHARE_PROBE
    assert all(type(o["u"]) is channel.Shared for o in out[:channel.SHARE_PROBE])
    assert all(type(o["u"]) is np.ndarray for o in out[channel.SHARE_PROBE:])
    for o, u in zip(out, steps):
        assert np.array_equal(channel.expand(pickle.loads(pickle.dumps(o)), held)["u"], u)


# -- issue 54, item 4: what a reply may cost the referee ------------------------------

def _cost(raw: bytes, n: int = 1) -> tuple[float, int]:
    """CPU seconds and bytes allocated (peak, by tracemalloc) decoding ``raw``; a ChannelError is fine."""
    import time
    import tracemalloc

    tracemalloc.start()
    started = time.process_time()
    try:
        decode_reply(raw, n)
    except ChannelError:
        pass
    spent = time.process_time() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return spent, peak


COSTLY = {
    # every key hashes to 0 as a Python int: 2**61 - 1 is the modulus of int hashing
    "colliding int keys": lambda: json.dumps([["ok", ["d", [[k * (2**61 - 1), 0] for k in range(150_000)]]]]),
    "colliding tuple keys": lambda: json.dumps([["ok", ["d", [[["t", [k, -k]], 0] for k in range(100_000)]]]]),
    "colliding float keys": lambda: json.dumps([["ok", ["d", [[float(k * (2**61 - 1)), 0] for k in range(150_000)]]]]),
    "nested empty lists": lambda: "[[\"ok\", [" + ",".join(["[]"] * (channel.MAX_REPLY_BYTES // 3)) + "]]]",
    "deep lists": lambda: "[[\"ok\", " + "[" * 2_000_000 + "]" * 2_000_000 + "]]",
    "long ints": lambda: "[[\"ok\", [\"l\", [" + ",".join(["9" * 4000] * 1000) + "]]]]",
    "long strings as keys": lambda: json.dumps([["ok", ["d", [[["s", "x" * 1000 + str(k)], 0] for k in range(3000)]]]]),
}


@pytest.mark.parametrize("case", sorted(COSTLY))
def test_a_reply_costs_the_referee_a_bounded_amount(case):
    raw = COSTLY[case]().encode()[:channel.MAX_REPLY_BYTES]
    spent, peak = _cost(raw)
    # Bounds with room for a slow machine; before issue 54 the first cost 25.8 s, the fourth 450 MB.
    assert spent < 2.0, spent
    assert peak < 80 * 2**20, peak


def test_a_full_honest_reply_still_decodes():
    values = np.arange(2**16, dtype=np.int64)
    raw = encode_reply([["ok", encode_value(values)] for _ in range(7)])
    assert [np.array_equal(v, values) for _, v in decode_reply(raw, 7)] == [True] * 7


def test_an_honest_worker_names_an_oversized_step_as_type_failures():
    raw = encode_reply([["ok", encode_value(np.zeros(2**18))], ["ok", encode_value(np.zeros(2**18))], ["fail", "timeout", "t"]])
    assert decode_reply(raw, 3) == [(False, ("type", decode_reply(raw, 3)[0][1][1])), (False, ("type", decode_reply(raw, 3)[0][1][1])),
                                    (False, ("timeout", "t"))]
    assert "reply limit" in decode_reply(raw, 3)[0][1][1]
