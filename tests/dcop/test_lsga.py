"""LSGA-DSA's pieces: the roulette, the crossover's block copy, its counter-based draws."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relic_envs
from baselines.dcop.dsa import DSA
from baselines.dcop.lsga import LSGA, LSGARun, crossover_cover, roulette_cdf, uniform_values
from baselines.dcop.sweep import run_sweeps


def test_roulette_cdf_by_hand():
    # S = 6, K = 3: f = (6 - c) / (2 * 6) = 5/12, 4/12, 3/12.
    np.testing.assert_allclose(roulette_cdf(np.array([1.0, 2.0, 3.0])), [5 / 12, 9 / 12, 1.0])
    # All costs zero: uniform.
    np.testing.assert_allclose(roulette_cdf(np.zeros(4)), [0.25, 0.5, 0.75, 1.0])
    # A negative cost would make another individual's fitness negative: clipped at 0.
    cdf = roulette_cdf(np.array([-5.0, 1.0, 10.0]))
    assert np.all(np.diff(cdf) >= 0) and cdf[-1] == 1.0


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_crossover_cover_equals_copying_blocks_centre_by_centre(seed):
    """The vectorised cover gives what copying each centre's block in order gives."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 15))
    pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.3], np.int64).reshape(-1, 2)
    centre = rng.random(n) < 0.4
    parent_of = rng.integers(0, 3, size=n)
    parents = rng.integers(0, 5, size=(3, n))
    x = rng.integers(0, 5, size=n)

    expected = x.copy()
    for c in np.flatnonzero(centre):
        block = [c] + [b for a, b in pairs if a == c] + [a for a, b in pairs if b == c]
        expected[block] = parents[parent_of[c], block]

    src = np.concatenate([pairs[:, 0], pairs[:, 1]])
    dst = np.concatenate([pairs[:, 1], pairs[:, 0]])
    cover = crossover_cover(centre, src, dst)
    got = x.copy()
    take = cover >= 0
    got[take] = parents[parent_of[cover[take]], np.flatnonzero(take)]
    np.testing.assert_array_equal(got, expected)


def test_uniform_values_stay_in_the_domain_at_the_edges():
    u = np.array([0.0, 0.5, 1.0 - 2.0**-24])
    np.testing.assert_array_equal(uniform_values(u, 3), [0, 1, 2])


@pytest.mark.parametrize("name", ["dgc", "shds"])
def test_individual_zero_walks_dsa_b_until_the_first_genetic_step(name):
    """Its coins are the instance's u, so without a GA step it is plain DSA-B."""
    bench = relic_envs.get_benchmark(name)
    instance = relic_envs.splits(name).test_instances()[0]
    run = LSGARun(bench, instance, LSGA(population=3, generation=1000))
    dsa = run_sweeps(name, DSA(p=0.7, variant="B"), [instance])[0]
    for _ in range(50):
        run.sweep()
    assert bench.problem.cost(instance, run.population[0]) == pytest.approx(dsa.final)
    assert run.best_cost <= dsa.final + 1e-9


def test_runs_are_deterministic_and_differ_across_instances():
    bench = relic_envs.get_benchmark("dgc")
    a, b = relic_envs.splits("dgc").test_instances()[:2]
    first, again, other = (LSGARun(bench, i, LSGA(population=4)) for i in (a, a, b))
    for run in (first, again, other):
        for _ in range(10):
            run.sweep()
    np.testing.assert_array_equal(first.population, again.population)
    assert not np.array_equal(first.population[1:], other.population[1:])
