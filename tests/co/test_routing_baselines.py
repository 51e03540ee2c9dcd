"""Classical routing comparators and OR-Tools references (baselines/co): exactness on tiny
instances against brute force, agreement with the simulators and the episode, and the caches."""

from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest

import relic_envs
from baselines.co import routing_fstsp as FS
from baselines.co import routing_hmtsp as HM
from baselines.co.routing_tours import nearest_neighbour, path_length, two_opt
from relic_envs.co.fstsp import simulator as fsim
from relic_envs.co.fstsp.generator import FSTSPInstance, FSTSPRegime
from relic_envs.co.fstsp.generator import generate as fgenerate
from relic_envs.co.hmtsp import simulator as hsim
from relic_envs.co.hmtsp.generator import HMTSPInstance, HMTSPRegime
from relic_envs.co.hmtsp.generator import generate as hgenerate


def hmtsp_tiny(seed: int, n: int = 5, budget: float | None = None) -> HMTSPInstance:
    inst = hgenerate(HMTSPRegime(n), np.random.default_rng(seed))
    if budget is None:
        return inst
    fields = {k: getattr(inst, k) for k in ("customers", "task_type", "depots", "travel", "service")}
    return HMTSPInstance(**fields, budget=np.full(3, budget))


def fstsp_tiny(seed: int, n: int = 4, endurance: float | None = None) -> FSTSPInstance:
    inst = fgenerate(FSTSPRegime(n), np.random.default_rng(seed))
    if endurance is None:
        return inst
    return FSTSPInstance(depot=inst.depot, customers=inst.customers, eligible=inst.eligible, endurance=endurance,
                         drone_speed=inst.drone_speed, truck_speed=inst.truck_speed)


# -- brute force ----------------------------------------------------------------------
def hmtsp_brute_force(inst: HMTSPInstance) -> float:
    """min C over every assignment of customers to vehicles and every order of each route."""
    n, dist = inst.n_customers, inst.distances()
    best_route: dict[tuple[int, frozenset], float] = {}
    for k in range(3):
        for size in range(n + 1):
            for subset in itertools.combinations(range(n), size):
                if not subset:
                    best_route[k, frozenset()] = 0.0
                    continue
                best = min(
                    inst.travel[k] * sum(dist[a, b] for a, b in zip((n + k, *perm), (*perm, n + k)))
                    for perm in itertools.permutations(subset)
                )
                best_route[k, frozenset(subset)] = best + sum(inst.service[k, inst.task_type[v]] for v in subset)
    out = np.inf
    for owner in itertools.product(range(3), repeat=n):
        lengths = [best_route[k, frozenset(v for v in range(n) if owner[v] == k)] for k in range(3)]
        out = min(out, hsim.cost_of(inst, np.array(lengths)))
    return out


def fstsp_search(inst: FSTSPInstance) -> float:
    """min C over every episode the simulator allows: every answer of every decision."""
    best = np.inf

    def go(state) -> None:
        nonlocal best
        d = state.decision()
        if d is None:
            best = min(best, state.objective())
            return
        for choice in [*d.ids.tolist(), *([-1] if d.can_skip else [])]:
            child = copy.deepcopy(state)
            child.apply(int(choice))
            go(child)

    go(fsim.State(inst))
    return best


def truck_brute_force(inst: FSTSPInstance) -> float:
    return min(fsim.cost(inst, FS.truck_epochs(list(p))) for p in itertools.permutations(range(1, inst.n_customers + 1)))


# -- tours ----------------------------------------------------------------------------
def test_two_opt_is_a_local_optimum_and_never_longer():
    rng = np.random.default_rng(0)
    xy = rng.uniform(size=(30, 2))
    dist = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    start = list(rng.permutation(np.arange(1, 30)))
    tour = two_opt(dist, 0, start, 0)
    assert sorted(tour) == list(range(1, 30))
    assert path_length(dist, 0, tour, 0) < path_length(dist, 0, start, 0)
    path = [0, *tour, 0]
    for i in range(len(path) - 1):
        for j in range(i + 2, len(path) - 1):
            new = dist[path[i], path[j]] + dist[path[i + 1], path[j + 1]]
            assert new >= dist[path[i], path[i + 1]] + dist[path[j], path[j + 1]] - 1e-9
    nn = nearest_neighbour(dist, 0, np.arange(1, 30))
    assert nn[0] == 1 + int(np.argmin(dist[0, 1:]))


# -- HMTSP ----------------------------------------------------------------------------
@pytest.mark.parametrize("method", HM.METHODS)
def test_hmtsp_rows_agree_with_simulator_and_episode(method):
    inst = relic_envs.splits("hmtsp").train[0][0]
    routes = HM.solve(inst, method)
    HM.check_routes(inst, routes)
    objective, info = HM.replay(inst, routes)
    assert objective == pytest.approx(hsim.cost(inst, routes), rel=1e-12)
    assert info["forced"] == 0 and not any(info["repairs"].values())
    (res,) = relic_envs.rollout("hmtsp", HM.PlanTeam(method), [inst])
    assert res.objective == objective


def test_hmtsp_improvements_never_worsen():
    inst = relic_envs.splits("hmtsp").train[1][0]
    for rule in ("nn", "ci"):
        steps = (rule, f"{rule}+2opt", f"{rule}+2opt+relocate", f"{rule}+2opt+relocate+exchange")
        c = [hsim.cost(inst, HM.solve(inst, m)) for m in steps]
        assert c[0] >= c[1] - 1e-9 >= c[2] - 2e-9
        assert c[3] <= c[1] + 1e-9  # a different search path from the same start: only its start bounds it


def test_hmtsp_exchange_move_values_are_exact():
    inst = relic_envs.splits("hmtsp").train[0][0]
    perm = np.random.default_rng(0).permutation(inst.n_customers).tolist()
    routes = [perm[:15], perm[15:35], perm[35:]]
    dist = inst.distances()
    table = HM._swap_table(inst, dist, HM._lengths(inst, dist, routes), routes, 0, 2)
    base = hsim.cost(inst, routes)
    for i in range(len(routes[0])):
        for j in range(len(routes[2])):
            swapped = [list(r) for r in routes]
            swapped[0][i], swapped[2][j] = swapped[2][j], swapped[0][i]
            assert table[i, j] == pytest.approx(hsim.cost(inst, swapped) - base, abs=1e-9)


@pytest.mark.parametrize("seed,budget", [(1, None), (2, None), (3, 0.6)])
def test_hmtsp_heuristics_bounded_by_brute_force(seed, budget):
    inst = hmtsp_tiny(seed, budget=budget)
    optimum = hmtsp_brute_force(inst)
    for method in HM.METHODS:
        assert hsim.cost(inst, HM.solve(inst, method)) >= optimum - 1e-9


@pytest.mark.parametrize("seed,budget", [(1, None), (2, None), (3, 0.6), (4, 0.4)])
def test_hmtsp_ortools_exact_on_tiny(seed, budget):
    pytest.importorskip("ortools")
    from baselines.co.routing import solve_hmtsp

    inst = hmtsp_tiny(seed, budget=budget)
    res = solve_hmtsp(inst, time_limit=2.0)  # tiny: GLS reaches the optimum in milliseconds
    HM.check_routes(inst, res.routes)
    optimum = hmtsp_brute_force(inst)
    assert res.objective == pytest.approx(optimum, abs=1e-4)  # the solver's integer costs round each arc by 5e-7
    assert res.model_objective == pytest.approx(res.objective, abs=1e-4)
    if budget is not None:  # the soft budget binds: the model carries the excess term
        lengths = hsim.route_costs(inst, res.routes)
        assert (lengths > inst.budget).any()


# -- FSTSP ----------------------------------------------------------------------------
@pytest.mark.parametrize("method", FS.METHODS)
def test_fstsp_rows_agree_with_simulator_and_episode(method):
    inst = relic_envs.splits("fstsp").train[0][0]
    epochs = FS.solve(inst, method)
    objective, info = FS.replay(inst, epochs)
    assert objective == pytest.approx(fsim.cost(inst, epochs), rel=1e-12)
    (res,) = relic_envs.rollout("fstsp", FS.PlanTeam(method), [inst])
    assert res.objective == objective
    if method == "truck":
        assert info["sorties"] == 0


def test_fstsp_split_value_matches_its_epochs_and_beats_the_truck():
    for inst in relic_envs.splits("fstsp").train[2][:3]:
        tour = FS.truck_tour(inst)
        value, epochs = FS.split(inst, tour)
        assert value == pytest.approx(fsim.cost(inst, epochs), rel=1e-12)
        assert value <= fsim.cost(inst, FS.truck_epochs(tour)) + 1e-12
        assert FS.replay(inst, epochs)[0] == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("seed,endurance", [(0, None), (1, None), (2, 0.9), (3, 2.0), (4, 0.3)])
def test_fstsp_exact_equals_search_over_every_episode(seed, endurance):
    inst = fstsp_tiny(seed, n=4, endurance=endurance)
    value, epochs = FS.exact(inst)
    assert value == pytest.approx(fstsp_search(inst), abs=1e-12)
    assert FS.replay(inst, epochs)[0] == pytest.approx(value, abs=1e-12)


def test_fstsp_ortools_truck_tour_exact_on_tiny():
    pytest.importorskip("ortools")
    from baselines.co.routing import solve_truck_tsp

    for seed in range(3):
        inst = fstsp_tiny(seed, n=6)
        res = solve_truck_tsp(inst, time_limit=1.0)
        assert res.objective == pytest.approx(truck_brute_force(inst), abs=1e-4)
        assert res.objective == pytest.approx(FS.replay(inst, FS.truck_epochs(res.routes[0]))[0], rel=1e-12)


# -- caches ---------------------------------------------------------------------------
@pytest.mark.parametrize("name,hinted", [("hmtsp", False), ("hmtsp", True), ("fstsp", False)])
def test_cached_references_match_the_simulator(name, hinted):
    from baselines.co.routing import load_cache

    cache = load_cache(name, hinted=hinted)
    if cache is None:
        pytest.skip(f"no cached {name} reference")
    assert (cache.meta["hint"] is not None) == hinted
    tests = relic_envs.splits(name).test
    assert sorted(cache.results) == sorted(tests)
    assert cache.meta["benchmark"] == name and cache.meta["time_limit_s"] > 0 and cache.meta["ortools"]
    for regime, instances in tests.items():
        res = cache.results[regime]
        assert res["objective"].shape == (len(instances),)
        for i, inst in enumerate(instances):
            routes = cache.routes(regime, i)
            if name == "hmtsp":
                HM.check_routes(inst, routes)
                value = hsim.cost(inst, routes)
            else:
                assert sorted(routes[0]) == list(range(1, inst.n_customers + 1))
                value = fsim.cost(inst, FS.truck_epochs(routes[0]))
            assert value == res["objective"][i]
            assert abs(res["model_objective"][i] - value) < 1e-3
        inst = instances[0]  # one replay per size through the episode
        routes = cache.routes(regime, 0)
        replayed = HM.replay(inst, routes)[0] if name == "hmtsp" else FS.replay(inst, FS.truck_epochs(routes[0]))[0]
        assert replayed == pytest.approx(res["objective"][0], rel=1e-12)
