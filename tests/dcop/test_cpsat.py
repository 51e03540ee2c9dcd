"""CP-SAT optimum references: exact on tiny instances, and the shipped cache is honest."""

from __future__ import annotations

import numpy as np
import pytest

import relic_envs
from baselines.dcop.cpsat import load_cache
from tests.dcop.small import DCOPS, brute_force, tiny


@pytest.mark.parametrize("name", DCOPS)
@pytest.mark.parametrize("seed", [0, 1])
def test_cpsat_equals_brute_force_on_tiny_instances(name, seed):
    pytest.importorskip("ortools")
    from baselines.dcop.cpsat import solve_cpsat

    inst = tiny(name, seed)
    prob = relic_envs.get_benchmark(name).problem
    best = brute_force(prob, inst)
    result = solve_cpsat(name, inst, time_limit=20.0, workers=1)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(prob.cost(inst, result.x))
    # Optimal for the rounded model: within the documented rounding slack of the true optimum.
    assert best - 1e-9 <= result.objective <= best + result.slack + 1e-9
    assert result.bound <= best + 1e-9


@pytest.mark.parametrize("name", DCOPS)
def test_cached_optimum_matches_the_simulator_on_every_test_instance(name):
    cache = load_cache(name)
    assert cache is not None, f"missing CP-SAT cache for {name}: run relic-baselines optimum --write {name}"
    instances = relic_envs.splits(name).test_instances()
    prob = relic_envs.get_benchmark(name).problem
    assert cache.x.shape[0] == len(instances) == 50
    for k, inst in enumerate(instances):
        objective = prob.cost(inst, cache.x[k])
        assert cache.objective[k] == pytest.approx(objective, abs=1e-9)
        # The rounded model under-estimates the true cost by at most the slack; with
        # status "feasible" its auxiliary variables need not be tight, so it may be above.
        assert cache.model_objective[k] >= objective - cache.slack[k] - 1e-6
        assert cache.bound[k] <= objective + 1e-6
        if cache.status[k] == "optimal":
            assert cache.model_objective[k] <= objective + 1e-6
            assert cache.bound[k] >= objective - cache.slack[k] - 1e-6
    assert set(np.unique(cache.status)) <= {"optimal", "feasible"}
    assert cache.meta["time_limit_s"] > 0 and cache.meta["ortools"] and cache.meta["benchmark"] == name


def test_solver_rejects_bad_arguments():
    pytest.importorskip("ortools")
    from baselines.dcop.cpsat import solve_cpsat

    inst = tiny("dgc", 0)
    with pytest.raises(ValueError, match="time_limit must be > 0"):
        solve_cpsat("dgc", inst, time_limit=0)
    with pytest.raises(ValueError, match="benchmark in"):
        solve_cpsat("dgcc", inst)
