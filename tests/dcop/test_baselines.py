"""DSA and LSGA-DSA: their defining rules, determinism, and the team/solver agreement."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relic_envs
from baselines.dcop import DSA, LSGA, LSGATeam, dsa_team, solve_dsa, solve_lsga
from baselines.dcop.dsa import dsa_decide
from relic_envs.errors import InvalidConfig

DCOPS = ["dgc", "dimes", "sensor_dcsp", "shds"]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["A", "B", "C"]), st.floats(0.0, 1.0))
def test_dsa_moves_only_to_best_values_and_by_its_variant(seed, variant, p):
    rng = np.random.default_rng(seed)
    m, d = 30, 4
    delta = rng.integers(0, 4, size=(m, d)).astype(float)  # small integers: many ties and plateaus
    cur = rng.integers(0, d, size=m)
    u = rng.random((m, d + 1))
    new = dsa_decide(cur, delta, u, p=p, variant=variant)
    rows = np.arange(m)
    best = delta.min(axis=1)
    moved = new != cur
    assert np.all(delta[rows, new][moved] == best[moved])  # only to a best value
    assert np.all(u[moved, d] < p)  # only when the coin says so
    gain = delta[rows, cur] - best
    if variant == "A":
        assert np.all(gain[moved] > 0)  # DSA-A never moves without a strict local gain
    if variant == "B":
        lateral = moved & (gain == 0)
        assert np.all(delta[rows, cur][lateral] > 0)  # lateral moves only in conflict
    # An improving variable whose coin is below p always moves.
    assert np.all(moved[(gain > 0) & (u[:, d] < p)])


def test_dsa_rejects_bad_settings():
    with pytest.raises(InvalidConfig, match="p"):
        DSA(p=1.5)
    with pytest.raises(InvalidConfig, match="variant"):
        DSA(variant="D")
    with pytest.raises(InvalidConfig, match="population"):
        LSGA(population=1)


@pytest.mark.parametrize("name", DCOPS)
def test_dsa_solver_equals_team_in_env_and_is_deterministic(name):
    instances = relic_envs.splits(name).test_instances()[:3]
    a = [r.objective for r in solve_dsa(name, instances)]
    b = [r.objective for r in solve_dsa(name, instances)]
    assert a == b
    env = relic_envs.make(name, instances=instances)
    team = dsa_team()
    for k, _inst in enumerate(instances):
        obs, _ = env.reset(seed=k)
        while env.agents:
            obs, _, _, _, info = env.step({r: team[r](obs[r]) for r in env.agents})
        assert info["A"]["objective"] == pytest.approx(a[k])


def test_dsa_improves_dgc_from_the_initial_colouring():
    instances = relic_envs.splits("dgc").test_instances()[:5]
    bench = relic_envs.get_benchmark("dgc")
    initial = [bench.problem.cost(i, i.x0) for i in instances]
    final = [r.objective for r in solve_dsa("dgc", instances)]
    assert all(f < 0.5 * i for f, i in zip(final, initial))


@pytest.mark.parametrize("name", ["dgc", "sensor_dcsp"])
def test_lsga_answer_is_its_anytime_best_and_team_matches_solver(name):
    instances = relic_envs.splits(name).test_instances()[:2]
    bench = relic_envs.get_benchmark(name)
    settings_ = LSGA(population=4)
    solved = solve_lsga(name, instances, settings_)
    for inst, r in zip(instances, solved):
        assert r.objective <= bench.problem.cost(inst, inst.x0)  # individual 0 starts at x0
    team = relic_envs.rollout(name, LSGATeam(name, settings_), instances)
    assert [r.objective for r in team] == pytest.approx([r.objective for r in solved])
