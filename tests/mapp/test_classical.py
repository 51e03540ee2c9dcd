"""The classical MAPP rows and references (baselines/mapp): hand-checked tiny instances,
brute force against the CP-SAT reference, and every produced route played through the
benchmark's own episode (budget respected, no depot fallback)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import relic_envs
from baselines.mapp import dynamic, plans
from relic_envs.core.benchmark import ROLES
from relic_envs.core.rollout import rollout
from relic_envs.mapp._geometry import distances
from relic_envs.mapp.ar.generator import ARInstance
from relic_envs.mapp.pc.generator import PCInstance

#   0.62 |  4
#   0.6  |  3
#   0.5  |  2 -- 0 -- 1 ---------- 5      0 = depot (0.5, 0.5)
#          0.4  0.5  0.6          0.9
HAND = PCInstance(
    coords=np.array([[0.5, 0.5], [0.6, 0.5], [0.4, 0.5], [0.5, 0.6], [0.5, 0.62], [0.9, 0.5]]),
    budget=0.25,
    prizes=np.array([0.0, 1.0, 2.0, 0.5, 0.5, 5.0]),
)


def _check_played(name, instance, routes):
    """Play ``routes`` in the simulator: no fallback, every route within the budget, and the
    episode objective equal to the planner's value; returns the objective."""
    ep = plans.play(name, instance, routes)
    assert ep.fallbacks == []
    assert np.all(ep.route_lengths() <= instance.budget + 1e-12)
    assert [r[1:-1] for r in ep.routes] == [list(r) for r in routes]
    return ep.objective()


def test_greedy_pc_hand_checked():
    # ratios prize / added distance from the empty plan: node 2: 2 / 0.2 = 10, node 1: 5,
    # node 3: 2.5, node 4: 0.5 / 0.24; node 5 (0.8 out and back) never fits B = 0.25.
    # 2 -> A. Node 1 no longer fits A (0.4 > 0.25): 1 -> B (ratio 5). Node 3: A would be
    # 0.1 + 0.141 + 0.1 > 0.25, so 3 -> C (2.5). Node 4 in C adds 0.12 + 0.02 - 0.1 = 0.04
    # before 3 or after it (ratio 12.5; C = 0.24 <= 0.25); the tie goes to the first
    # position. Total 2 + 1 + 0.5 + 0.5 = 4.
    routes = plans.greedy("mapp_pc", HAND)
    assert routes == [[2], [1], [4, 3]]
    assert _check_played("mapp_pc", HAND, routes) == pytest.approx(4.0)


def test_ils_pc_hand_checked():
    routes = plans.ils("mapp_pc", HAND)
    assert sorted(j for r in routes for j in r) == [1, 2, 3, 4]
    assert _check_played("mapp_pc", HAND, routes) == pytest.approx(4.0)


def test_greedy_and_ils_ar_hand_checked():
    # Two customers 0.02 apart with sigma = 0.02: rho_12 = exp(-1/2). Only node 1 fits the
    # budget (0 -> 1 -> 0 = 0.2 <= 0.205; any route through 2 is >= 0.24), and each agent may
    # scan it once. After k scans of node 1, u_1 = 0 and u_2 = (1 - rho_12)^k, so three
    # agents remove 2 - (1 - exp(-1/2))^3 = 1.93907...
    inst = ARInstance(coords=np.array([[0.5, 0.5], [0.6, 0.5], [0.62, 0.5]]), budget=0.205, sigma=0.02)
    expected = 2.0 - (1.0 - math.exp(-0.5)) ** 3
    for method in plans.METHODS:
        routes = plans.solve("mapp_ar", inst, method)
        assert routes == [[1], [1], [1]]
        assert _check_played("mapp_ar", inst, routes) == pytest.approx(expected)


def test_online_plan_hand_checked():
    # Depot 0, nodes 1 (x 0.6), 2 (x 0.4), 3 (x 0.7) on a line. Node 2's request has ttl 0:
    # already too late. Node 3 first (ratio 5 / 0.4 = 12.5 > node 1's 1 / 0.2 = 5); node 1
    # then fits before it at no extra distance (0.1 + 0.1 - 0.2 = 0), landing at hop 1 <= its
    # ttl 1 and pushing 3 to hop 2 <= 5.
    coords = np.array([[0.5, 0.5], [0.6, 0.5], [0.4, 0.5], [0.7, 0.5]])
    dist = distances(coords)
    value = np.array([0.0, 1.0, 9.0, 5.0])
    routes = dynamic.plan(dist, [0, 0, 0], [10.0, None, None], value, np.array([0.0, 1.0, 0.0, 5.0]))
    assert routes == [[1, 3], [], []]
    # With ttl 1 for both, one agent serves only one of them (node 3, the better ratio); a
    # second agent out takes node 1; a budget below 0.4 leaves node 3 out.
    ttl = np.array([0.0, 1.0, 0.0, 1.0])
    assert dynamic.plan(dist, [0, 0, 0], [10.0, None, None], value, ttl) == [[3], [], []]
    assert dynamic.plan(dist, [0, 0, 0], [10.0, 10.0, None], value, ttl) == [[3], [1], []]
    assert dynamic.plan(dist, [0, 0, 0], [0.3, None, None], value, ttl) == [[1], [], []]


def _brute_force(name, instance):
    """The exact optimum by enumeration: every feasible customer subset per agent (its
    shortest closed tour by permutations), PC with disjoint subsets."""
    dist = distances(instance.coords)
    n = instance.n_nodes
    model = plans.value_model(name, instance)
    best_tour = {}
    for size in range(n):
        for subset in itertools.combinations(range(1, n), size):
            best = min((plans.route_length(dist, p) for p in itertools.permutations(subset)), default=0.0)
            if best <= instance.budget - plans.EPS:
                best_tour[subset] = min(itertools.permutations(subset), key=lambda p: plans.route_length(dist, p))
    feasible = list(best_tour)
    top = -1.0
    for combo in itertools.combinations_with_replacement(feasible, len(ROLES)):
        if model.disjoint and len({j for s in combo for j in s}) < sum(len(s) for s in combo):
            continue
        top = max(top, model.value([list(best_tour[s]) for s in combo]))
    return top


def _tiny(name, seed, n=6):
    rng = np.random.default_rng(seed)
    coords = np.concatenate([[[0.5, 0.5]], rng.random((n - 1, 2))])
    budget = float(rng.uniform(0.6, 1.4))
    if name == "mapp_pc":
        return PCInstance(coords=coords, budget=budget, prizes=np.concatenate([[0.0], rng.uniform(0.1, 2.0, n - 1)]))
    return ARInstance(coords=coords, budget=budget, sigma=float(rng.uniform(0.08, 0.2)))


@pytest.mark.parametrize("seed", range(4))
def test_cpsat_pc_exact_on_tiny_instances(seed):
    pytest.importorskip("ortools")
    from baselines.mapp import cpsat

    inst = _tiny("mapp_pc", seed)
    exact = _brute_force("mapp_pc", inst)
    res = cpsat.solve("mapp_pc", inst, time_limit=20, workers=1, hint=None)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(exact, abs=1e-3)  # value rounding: < N / VALUE_SCALE
    assert res.bound >= exact - 1e-9
    assert _check_played("mapp_pc", inst, res.routes) == pytest.approx(res.objective)
    for method in plans.METHODS:
        assert _check_played("mapp_pc", inst, plans.solve("mapp_pc", inst, method)) <= exact + 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_cpsat_ar_bound_on_tiny_instances(seed):
    pytest.importorskip("ortools")
    from baselines.mapp import cpsat

    inst = _tiny("mapp_ar", seed, n=5)
    exact = _brute_force("mapp_ar", inst)
    res = cpsat.solve("mapp_ar", inst, time_limit=20, workers=1)
    assert res.bound >= exact - 1e-9  # the union-bound relaxation is an upper bound
    assert res.objective <= exact + 1e-9
    for method in plans.METHODS:
        assert _check_played("mapp_ar", inst, plans.solve("mapp_ar", inst, method)) <= exact + 1e-9


@pytest.mark.parametrize("name", plans.STATIC)
def test_plans_feasible_through_the_simulator(name):
    s = relic_envs.splits(name)
    for inst in [*s.train[0][:2], s.test["test50"][0]]:
        for method in plans.METHODS:
            routes = plans.solve(name, inst, method)
            value = plans.value_model(name, inst).value(routes)
            assert _check_played(name, inst, routes) == pytest.approx(value, abs=1e-9)
        res = rollout(name, plans.PlanTeam.of(name, "greedy"), [inst])[0]
        assert res.objective == pytest.approx(plans.play(name, inst, plans.greedy(name, inst)).objective())


def test_online_team_feasible_and_serves_something():
    insts = relic_envs.splits("mapp_ds").train[0][:3]
    for inst in insts:
        ep = dynamic.play_team(inst, dynamic.OnlineTeam())
        assert ep.fallbacks == []
        assert np.all(ep.route_lengths() <= inst.budget + 1e-12)
        assert ep.objective() > 0
        hops = [[j for j in r[1:] if j != 0] for r in ep.routes]
        assert dynamic.served_value(dynamic._Requests(inst), hops) == pytest.approx(ep.objective())


def test_offline_reference_matches_simulator_and_improves():
    inst = relic_envs.splits("mapp_ds").train[0][0]
    online = dynamic.play_team(inst, dynamic.OnlineTeam()).objective()
    routes = dynamic.offline_routes(inst, moves=1500)
    ep = plans.play("mapp_ds", inst, routes)
    assert ep.fallbacks == []
    assert np.all(ep.route_lengths() <= inst.budget + 1e-12)
    assert ep.objective() == pytest.approx(dynamic.served_value(dynamic._Requests(inst), routes))
    assert ep.objective() >= online - 1e-9


def test_served_value_is_the_simulator_rule_on_random_routes():
    inst = relic_envs.splits("mapp_ds").train[1][0]
    req = dynamic._Requests(inst)
    rng = np.random.default_rng(3)
    n = inst.n_nodes
    for _ in range(5):
        routes = []
        for _k in ROLES:
            r = []
            while len(r) < 12:
                j = int(rng.integers(1, n))
                if not r or r[-1] != j:
                    r.append(j)
            while r and plans.route_length(distances(inst.coords), r) > inst.budget - plans.EPS:
                r.pop()
            routes.append(r)
        ep = plans.play("mapp_ds", inst, routes)
        assert ep.fallbacks == []
        assert dynamic.served_value(req, routes) == pytest.approx(ep.objective())


def test_ortools_routing_hand_checked_and_feasible():
    pytest.importorskip("ortools")
    from baselines.mapp import ortools_routing

    routes = ortools_routing.solve(HAND, time_limit=2)
    assert _check_played("mapp_pc", HAND, routes) == pytest.approx(4.0)  # every reachable prize (see above)
    inst = relic_envs.splits("mapp_pc").train[0][0]
    assert _check_played("mapp_pc", inst, ortools_routing.solve(inst, time_limit=2)) > 0


def test_table_team_rows_play_through_rollout():
    from baselines.mapp.table import team

    for name, method in (("mapp_pc", "ils"), ("mapp_ar", "greedy"), ("mapp_ds", "online")):
        res = rollout(name, team(name, method), relic_envs.splits(name).train[2][:1])[0]
        assert res.valid and res.objective > 0
