"""MAPP-PC with OR-Tools' vehicle routing solver (``pip install 'relic-envs[solvers]'``).

The team orienteering problem in the routing library's own terms: three vehicles from
the depot; every customer optional, a ``AddDisjunction`` whose drop penalty is its prize
(``round(q_i PRIZE_SCALE)``); the budget a distance dimension with the capacity
``floor((B - EPS) DIST_SCALE)`` per vehicle over arc lengths rounded *up* (so every
route the solver returns is truly within ``B``); arc costs the lengths rounded up at a
coarser ``COST_SCALE``, so that collected prize dominates and distance only breaks ties.
First solution ``PARALLEL_CHEAPEST_INSERTION``, then guided local search for
``DEFAULT_TIME_LIMIT`` seconds per instance. Time-limited, so the result depends on the
machine: the table reads the cache ``relic_envs/data/mapp_pc/ortools_test.npz``
(``python -m baselines.mapp.ortools_routing --write``).
"""

from __future__ import annotations

import math
import time

import numpy as np
from tqdm.auto import tqdm

from baselines._ortools import routing as ortools_routing
from baselines.mapp import plans
from relic_envs.core.benchmark import ROLES
from relic_envs.core.references import load_results, reference_path, save_results
from relic_envs.mapp._geometry import distances

DIST_SCALE = 1_000_000
COST_SCALE = 1_000
PRIZE_SCALE = 1_000_000
DEFAULT_TIME_LIMIT = 10
CACHE = reference_path("mapp_pc", "ortools_test.npz")


def solve(instance, time_limit: float = DEFAULT_TIME_LIMIT) -> list[list[int]]:
    pywrapcp, routing_enums_pb2 = ortools_routing()
    dist = distances(instance.coords)
    n = instance.n_nodes
    length = np.ceil(dist * DIST_SCALE).astype(np.int64)
    cost = np.ceil(dist * COST_SCALE).astype(np.int64)
    manager = pywrapcp.RoutingIndexManager(n, len(ROLES), 0)
    routing = pywrapcp.RoutingModel(manager)

    def arc(m):
        return lambda i, j: int(m[manager.IndexToNode(i), manager.IndexToNode(j)])

    length_cb = routing.RegisterTransitCallback(arc(length))
    cost_cb = routing.RegisterTransitCallback(arc(cost))
    routing.SetArcCostEvaluatorOfAllVehicles(cost_cb)
    cap = int(math.floor((float(instance.budget) - plans.EPS) * DIST_SCALE))
    routing.AddDimension(length_cb, 0, cap, True, "distance")
    for i in range(1, n):
        routing.AddDisjunction([manager.NodeToIndex(i)], int(round(float(instance.prizes[i]) * PRIZE_SCALE)))
    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = routing_enums_pb2.FirstSolutionStrategy.PARALLEL_CHEAPEST_INSERTION
    params.local_search_metaheuristic = routing_enums_pb2.LocalSearchMetaheuristic.GUIDED_LOCAL_SEARCH
    params.time_limit.FromMilliseconds(int(time_limit * 1000))
    sol = routing.SolveWithParameters(params)
    routes = [[] for _ in ROLES]
    if sol is None:
        return routes
    for k in range(len(ROLES)):
        idx = sol.Value(routing.NextVar(routing.Start(k)))
        while not routing.IsEnd(idx):
            routes[k].append(manager.IndexToNode(idx))
            idx = sol.Value(routing.NextVar(idx))
    return routes


def write_cache(time_limit: float = DEFAULT_TIME_LIMIT, progress: bool = True):
    import ortools

    from relic_envs.core.splits import splits

    results = {}
    for regime, instances in splits("mapp_pc").test.items():
        obj, wall = [], []
        for inst in tqdm(instances, desc=f"or-tools mapp_pc {regime}", disable=not progress):
            t0 = time.perf_counter()
            routes = solve(inst, time_limit)
            ep = plans.play("mapp_pc", inst, routes)
            assert not ep.fallbacks, ep.fallbacks
            obj.append(ep.objective())
            wall.append(time.perf_counter() - t0)
        results[regime] = {"objective": np.array(obj), "wall_time": np.array(wall)}
    save_results(CACHE, results, {"time_limit_s": time_limit, "ortools": ortools.__version__,
                                  "strategy": "PARALLEL_CHEAPEST_INSERTION + GUIDED_LOCAL_SEARCH"})
    return load_results(CACHE)


def load_cache():
    return load_results(CACHE)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="OR-Tools routing on the MAPP-PC test splits")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT)
    args = ap.parse_args()
    loaded = write_cache(args.time_limit) if args.write else load_cache()
    if loaded is None:
        print("no cache; python -m baselines.mapp.ortools_routing --write")
    else:
        res, meta = loaded
        for regime in sorted(res, key=lambda r: int(r[4:])):
            print(f"mapp_pc {regime}: OR-Tools routing {res[regime]['objective'].mean():.2f} ± "
                  f"{res[regime]['objective'].std():.2f} ({meta['time_limit_s']:g} s/instance)")
