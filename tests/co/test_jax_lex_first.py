"""``co._jax_decisions.lex_first`` (one variadic reduction) picks what the numpy seeds'
``ids[np.lexsort((..., secondary, primary))[0]]`` picks, ties and empty masks included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

jax = pytest.importorskip("jax")

from relic_envs.co._jax_decisions import lex_first  # noqa: E402


def numpy_lex_first(mask, keys):
    ids = np.flatnonzero(mask)
    if ids.size == 0:
        return -1
    return int(ids[np.lexsort(tuple(k[ids] for k in reversed(keys)))[0]])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 7, 300]), st.integers(1, 3),
       st.sampled_from([0.0, 0.2, 1.0]), st.sampled_from([2, 1000]), st.booleans())
@example(seed=0, n=7, n_keys=2, density=1.0, spread=2, infinite=True)
def test_lex_first_is_the_first_of_a_stable_lexsort(seed, n, n_keys, density, spread, infinite):
    # Few distinct key values (spread 2) make ties on every key; infinite keys on the mask
    # must still beat the ids off it.
    rng = np.random.default_rng(seed)
    mask = rng.random(n) < density
    keys = [rng.integers(-spread, spread, n).astype(np.float64) for _ in range(n_keys)]
    if infinite:
        keys[0][rng.random(n) < 0.5] = np.inf
    with jax.enable_x64(True):
        got = int(jax.jit(lex_first)(jax.numpy.asarray(mask), *map(jax.numpy.asarray, keys)))
    assert got == numpy_lex_first(mask, keys)


def test_lex_first_under_vmap_and_integer_keys():
    mask = np.array([[True, True, False, True], [False, False, False, False], [False, True, True, True]])
    primary = np.array([[3, 1, 0, 1], [0, 0, 0, 0], [5, 2, 2, 2]])
    secondary = np.array([[0, 4, 0, 2], [0, 0, 0, 0], [9, 7, 3, 3]])
    got = np.asarray(jax.vmap(lex_first)(mask, primary, secondary))
    np.testing.assert_array_equal(got, [3, -1, 2])
