"""shrinking_while gives every instance exactly the iterations a plain vmapped while_loop gives it."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from relic_envs.core.jax_loop import shrinking_while  # noqa: E402


def running(data, carry):
    return carry["i"] < data["length"]


def body(data, carry):
    # A value that depends on the order of the iterations, so a skipped, repeated or
    # misplaced one shows: h <- h * 31 + x[i] (mod 2^31), plus a per-instance trace.
    i = carry["i"]
    h = (carry["h"] * 31 + data["x"][i]) % (2**31 - 1)
    return {"i": i + 1, "h": h, "trace": carry["trace"].at[i].set(h)}


def idle_body(data, carry):
    """``body`` that returns a finished instance's carry unchanged (``idle_when_done``)."""
    done = ~running(data, carry)
    return jax.tree.map(lambda new, old: jnp.where(done, old, new), body(data, carry), carry)


def plain(data, carry):
    return jax.vmap(lambda d, c: jax.lax.while_loop(lambda c: running(d, c), lambda c: body(d, c), c))(data, carry)


def batch(lengths, rng):
    n = len(lengths)
    data = {"length": jnp.asarray(lengths, jnp.int32), "x": jnp.asarray(rng.integers(0, 1000, (n, 64)), jnp.int32)}
    carry = {"i": jnp.zeros(n, jnp.int32), "h": jnp.asarray(rng.integers(0, 1000, n), jnp.int32),
             "trace": jnp.zeros((n, 64), jnp.int32)}
    return data, carry


@settings(max_examples=25, deadline=None)
@given(lengths=st.lists(st.integers(0, 64), min_size=1, max_size=200), stages=st.integers(1, 4),
       factor=st.integers(2, 5), floor=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_same_final_carry_as_a_vmapped_while_loop(lengths, stages, factor, floor, seed):
    data, carry = batch(lengths, np.random.default_rng(seed))
    want = plain(data, carry)
    got = jax.jit(lambda d, c: shrinking_while(running, body, d, c, stages=stages, factor=factor, floor=floor))(
        data, carry)
    for key in want:
        np.testing.assert_array_equal(np.asarray(got[key]), np.asarray(want[key]), err_msg=key)
    np.testing.assert_array_equal(np.asarray(got["i"]), np.asarray(lengths))


def test_a_long_tail_is_run_on_a_smaller_batch():
    # One instance of 1024 runs 50 iterations, the rest 10: after the first stage the
    # batch is 256, then 64, then 16, and the last stage runs on 16 instances only.
    lengths = [10] * 1023 + [50]
    data, carry = batch(lengths, np.random.default_rng(0))
    text = jax.jit(lambda d, c: shrinking_while(running, body, d, c, stages=3, factor=4)).lower(data, carry).as_text()
    assert "tensor<16x64xi32>" in text and "tensor<256x64xi32>" in text
    got = shrinking_while(running, body, data, carry, stages=3, factor=4)
    np.testing.assert_array_equal(np.asarray(got["h"]), np.asarray(plain(data, carry)["h"]))


@settings(max_examples=25, deadline=None)
@given(lengths=st.lists(st.integers(0, 64), min_size=1, max_size=200), stages=st.integers(0, 4),
       seed=st.integers(0, 2**16))
def test_a_body_that_idles_when_done_needs_no_freeze(lengths, stages, seed):
    data, carry = batch(lengths, np.random.default_rng(seed))
    want = plain(data, carry)
    got = jax.jit(lambda d, c: shrinking_while(running, idle_body, d, c, stages=stages, idle_when_done=True))(
        data, carry)
    for key in want:
        np.testing.assert_array_equal(np.asarray(got[key]), np.asarray(want[key]), err_msg=key)


def test_idle_when_done_trusts_the_body():
    # The flag skips the loop's own freeze: a body that does not idle keeps counting on
    # the instance that finished first (so the promise is what keeps results exact).
    data, carry = batch([1, 5], np.random.default_rng(0))
    got = shrinking_while(running, body, data, carry, stages=0, idle_when_done=True)
    assert np.asarray(got["i"]).tolist() == [5, 5]
    kept = shrinking_while(running, body, data, carry, stages=0)
    assert np.asarray(kept["i"]).tolist() == [1, 5]
