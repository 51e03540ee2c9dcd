"""Invariants of the shared routing simulator over many instances and any returns."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relic_envs
from relic_envs.mapp.ar.generator import ARRegime
from relic_envs.mapp.ds.generator import DSRegime
from relic_envs.mapp.pc.generator import PCRegime

REGIME = {"mapp_pc": lambda n: PCRegime(n), "mapp_ar": lambda n: ARRegime(n, 0.1), "mapp_ds": lambda n: DSRegime(n, 0.3)}

# Anything a program might return: in-range and out-of-range ids, wrong types, exceptions.
RETURNS = st.one_of(
    st.integers(-5, 20),
    st.integers(-(2**40), 2**40),
    st.sampled_from([None, 2.0, "3", True, np.int64(1), np.float64(1.0), [1], np.array(2), ValueError("boom")]),
)


@pytest.mark.parametrize("name", list(REGIME))
@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 12),
    budget_scale=st.floats(0.0, 3.0),
    returns=st.lists(RETURNS, min_size=1, max_size=60),
)
def test_every_closed_route_respects_the_budget(name, seed, n, budget_scale, returns):
    """Eq. app-route-budget: whatever the policies return, each route is closed and within B."""
    bench = relic_envs.get_benchmark(name)
    inst = bench.problem.generate(REGIME[name](n), np.random.default_rng(seed))
    inst = dataclasses.replace(inst, budget=inst.budget * budget_scale)
    ep = bench.new_episode(inst)
    k = 0
    while not ep.done:
        actions = {}
        for role in "ABC":
            actions[role] = returns[k % len(returns)]
            k += 1
        ep.step(actions)
        assert np.all(ep.budget >= -1e-12)
    assert ep.step_count <= n
    for route, length in zip(ep.routes, ep.route_lengths()):
        assert route[0] == 0 and route[-1] == 0 and 0 not in route[1:-1]
        assert length <= inst.budget + 1e-9
        if name != "mapp_ds":  # PC/AR: no agent visits a node twice
            assert len(set(route[1:-1])) == len(route) - 2


@pytest.mark.parametrize("name", list(REGIME))
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 10), choice=st.integers(0, 2**31))
def test_action_mask_is_exactly_the_admitted_set(name, seed, n, choice):
    bench = relic_envs.get_benchmark(name)
    inst = bench.problem.generate(REGIME[name](n), np.random.default_rng(seed))
    ep = bench.new_episode(inst)
    rng = np.random.default_rng(choice)
    while not ep.done:
        for k, role in enumerate("ABC"):
            mask = ep.observe(role)["action_mask"]
            if not ep.home[k]:
                admitted = [j for j in range(n) if ep.admit(k, j)[1] is None]
                assert admitted == list(np.flatnonzero(mask[1:]) + 1)
        ep.step({r: int(rng.choice(np.flatnonzero(ep.observe(r)["action_mask"]))) for r in "ABC"})


def test_objectives_are_monotone_and_bounded():
    """Rewards never decrease; PC <= total prize, AR <= N - 1."""
    for name in REGIME:
        bench = relic_envs.get_benchmark(name)
        inst = relic_envs.splits(name).test["test50"][0]
        ep = bench.new_episode(inst)
        rng = np.random.default_rng(0)
        last = 0.0
        while not ep.done:
            ep.step({r: int(rng.choice(np.flatnonzero(ep.observe(r)["action_mask"]))) for r in "ABC"})
            assert ep.objective() >= last - 1e-12
            last = ep.objective()
        assert last > 0
        if name == "mapp_pc":
            assert last <= inst.prizes.sum()
        if name == "mapp_ar":
            assert last <= inst.n_nodes - 1


def test_policy_exception_maps_to_depot_not_void():
    """B.1: exceptions are mapped to the depot; the rollout stays valid."""

    def boom(obs):
        raise RuntimeError("bug")

    inst = relic_envs.splits("mapp_pc").test["test50"][:2]
    home = {r: (lambda obs: 0) for r in "ABC"}
    raising = dict(home, A=boom)
    for res_raise, res_home in zip(relic_envs.rollout("mapp_pc", raising, inst), relic_envs.rollout("mapp_pc", home, inst)):
        assert res_raise.valid and res_raise.objective == res_home.objective == 0.0 and res_raise.steps == 1
