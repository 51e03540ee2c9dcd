"""``core.jax_select``: the first true index as a min reduction equals numpy's ``argmax``, and
``first_argmax``/``first_argmin`` equal ``jnp.argmax``/``jnp.argmin`` (ties, infinities, NaN)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

jax = pytest.importorskip("jax")

from relic_envs.core.jax_select import first_argmax, first_argmin, first_true, narrowest_int  # noqa: E402


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.sampled_from([1, 5, 126, 127, 300]),
       st.sampled_from([0.0, 0.01, 0.5]), st.sampled_from([0, -1]))
def test_first_true_is_argmax_of_the_mask_or_the_length(seed, rows, n, density, axis):
    # Lengths either side of int8's limit: the indices change type at 127.
    mask = np.random.default_rng(seed).random((n, rows) if axis == 0 else (rows, n)) < density
    want = np.where(mask.any(axis=axis), mask.argmax(axis=axis), n)
    got = np.asarray(first_true(jax.numpy.asarray(mask), axis=axis))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)


def test_narrowest_int_holds_its_top():
    assert [narrowest_int(t) for t in (0, 126, 127, 32766, 32767)] == [np.int8, np.int8, np.int16, np.int16, np.int32]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 3), st.sampled_from([1, 2, 50, 300]),
       st.sampled_from(["ties", "inf", "nan"]))
def test_first_argmax_and_argmin_are_jnp_argmax_and_argmin(seed, rows, n, special):
    # Few distinct values make ties; infinities and NaN are where the two forms could part.
    rng = np.random.default_rng(seed)
    values = rng.integers(-2, 3, (rows, n)).astype(np.float64)
    if special != "ties":
        spots = rng.random((rows, n)) < 0.2
        values[spots] = rng.choice([np.inf, -np.inf] if special == "inf" else [np.nan], spots.sum())
    with jax.enable_x64(True):
        x = jax.numpy.asarray(values)
        for ours, theirs in ((first_argmax, jax.numpy.argmax), (first_argmin, jax.numpy.argmin)):
            np.testing.assert_array_equal(np.asarray(jax.vmap(ours)(x)), np.asarray(jax.vmap(theirs)(x)))
