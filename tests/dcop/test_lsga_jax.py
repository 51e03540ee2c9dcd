"""LSGA-DSA in JAX agrees with the numpy solver: same best assignment, same cost."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relic_envs
from tests.dcop.small import DCOPS, small

jax = pytest.importorskip("jax")

from baselines.dcop.lsga import LSGA, LSGARun  # noqa: E402
from baselines.dcop.lsga_jax import evaluate_lsga  # noqa: E402


def numpy_answers(name, instances, lsga):
    bench = relic_envs.get_benchmark(name)
    answers = []
    for instance in instances:
        run = LSGARun(bench, instance, lsga)
        for _ in range(50):
            run.sweep()
        answers.append((run.best_cost, run.best))
    return answers


@pytest.mark.parametrize("name", DCOPS)
def test_lsga_matches_numpy_on_test_split(name):
    instances = relic_envs.splits(name).test_instances()[:10]
    result = evaluate_lsga(name, instances)
    reference = numpy_answers(name, instances, LSGA())
    np.testing.assert_allclose(result.costs, [c for c, _ in reference], rtol=1e-6)
    for got, (_, expected) in zip(result.x, reference):
        np.testing.assert_array_equal(got, expected)


@settings(max_examples=6, deadline=None)
@given(
    st.sampled_from(DCOPS),
    st.integers(0, 2**32 - 1),
    st.integers(2, 6),
    st.sampled_from([1, 3, 5, 7, 60]),  # 60: no GA step within the 50 sweeps
    st.sampled_from([0.0, 0.3, 1.0]),
    st.sampled_from([0.0, 0.05, 0.5]),
)
def test_lsga_matches_numpy_on_small_instances(name, seed, population, generation, crossover, mutation):
    lsga = LSGA(population=population, p=0.5, generation=generation, crossover=crossover, mutation=mutation)
    instance = small(name, seed)
    result = evaluate_lsga(name, [instance], lsga)
    (cost, best), = numpy_answers(name, [instance], lsga)
    np.testing.assert_allclose(result.costs[0], cost, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(result.x[0], best)
