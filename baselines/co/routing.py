"""OR-Tools routing-solver references for HMTSP and FSTSP, their caches, and the command line.

``pip install 'relic-envs[solvers]'``. Commands::

    python -m baselines.co.routing --write hmtsp fstsp --time-limit 30   # re-solve the test splits (cached)
    python -m baselines.co.routing --write hmtsp --hint ci+2opt+relocate # the same search from a classical row
    python -m baselines.co.routing --table                                 # every row beside the references
    python -m baselines.co.routing                                         # summary of the caches

**HMTSP** (:func:`solve_hmtsp`). OR-Tools' vehicle routing solver (``pywrapcp``), three
vehicles with their own start and end depot (``N + k``), one arc-cost matrix per vehicle
``t_k(i, j) = round(S (gamma_k l(i, j) + s_{k, c(j)}))`` (``s`` only when ``j`` is a
customer; ``S = 10^6``), so a route's arc costs add up to ``S L_k`` (Eq.
hmtsp-route-cost, rounded per arc). A dimension ``L`` accumulates the same transits
(start fixed at 0), so its end value on vehicle ``k`` is ``S L_k``. The solver minimises

    2 sum_k t(P_k)  +  1 * (max_k cumul_L(end_k) - 0)  +  10 sum_k max(cumul_L(end_k) - round(S B_k), 0)

(arc costs doubled, global span cost coefficient 1, soft upper bound ``S B_k`` with
coefficient 10 on each end cumul): exactly ``2 S C_HMTSP`` of the rounded costs, since
``C = sum L + 0.5 max L + 5 sum max(L - B, 0)``. The rounding moves each arc by at most
``0.5 / S``: each ``L_k`` and ``max L_k`` by at most ``(N + 3) / 2S``, so the solver's
``model_objective / 2S`` and our ``C`` of the same routes differ by at most
``(1 + 0.5 + 5) (N + 3) / 2S`` (7e-4 at 200 customers). **Every reported objective is ours**, recomputed
by ``relic_envs.co.hmtsp.simulator.cost`` on the solver's routes (and the tests replay
cached routes through the benchmark's episode). Search: first solution
``PATH_CHEAPEST_ARC`` (or the ``hint`` routes), then guided local search (Voudouris &
Tsang 1999, "Guided local search and its application to the traveling salesman
problem", EJOR 113(2):469-499) until the wall-clock ``time_limit``; one thread (the
routing solver is single-threaded). The search is deterministic but stops on wall-clock
time, so what it reaches depends on the CPU time it gets (stored as ``cpu_time``).
GLS proves nothing: the results are **best found, not optima**, and
no lower bound is claimed.

**FSTSP** (:func:`solve_truck_tsp`). The truck-only TSP over the depot and every
customer (one vehicle, arc cost ``round(S (1/v_t + 0.05) l(i, j))``), same search. A
truck-only tour is a feasible FSTSP solution (every epoch a truck move), so its cost
``sum l / v_t + 0.05 sum l`` is an **upper bound of the FSTSP optimum**; the table also
splits that tour optimally among truck and drone (``routing_fstsp.split``), which is the
strongest FSTSP row here. No FSTSP lower bound is computed (no MILP was run).

**Caches** ``relic_envs/data/<benchmark>/ortools_test.npz``, and
``ortools_hinted_test.npz`` for a search started from a classical row (the DCOP caches'
``<solver>_test.npz`` name per benchmark folder; under ``baselines/`` like the MAS ones,
since ``relic_envs`` never depends on OR-Tools): per test regime the routes (HMTSP
``(20, 3, N)`` customer ids padded with -1; FSTSP ``(20, N)`` truck tours), our objective,
the model objective, the status, the wall time and the CPU time the solve got; ``meta``
holds the time limit, workers (1), search settings, scale, hint, the OR-Tools version
and the machine's load when the run started.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np

from baselines._ortools import routing as _routing
from baselines._test_splits import TestSplitCache, by_size, load_cache_as, machine_note, solve_test_splits, write_meta
from relic_envs.co.fstsp import simulator as fsim
from relic_envs.co.fstsp.generator import FSTSPInstance
from relic_envs.co.hmtsp import simulator as hsim
from relic_envs.co.hmtsp.generator import VEHICLES, HMTSPInstance
from relic_envs.core.references import reference_path, save_results
from relic_envs.errors import InvalidConfig

BENCHMARKS = ("hmtsp", "fstsp")
SCALE = 1_000_000
DEFAULT_TIME_LIMIT = 30.0
CACHE_NAME = "ortools_test.npz"
HINTED_CACHE_NAME = "ortools_hinted_test.npz"  # the search started from a classical row (``--hint``)
INSTALL_HINT = "pip install 'relic-envs[solvers]', then python -m baselines.co.routing --write"
SEARCH = "first solution PATH_CHEAPEST_ARC, local search GUIDED_LOCAL_SEARCH"


@dataclasses.dataclass(frozen=True)
class RoutingResult:
    """The routing solver's answer on one instance."""

    routes: list[list[int]]  # HMTSP: three routes of customer ids; FSTSP: one truck tour of customer ids
    objective: float  # OUR objective of the routes (the simulator's cost)
    model_objective: float  # the solver's objective, divided back to cost units
    status: str  # the routing model's status name
    wall_time: float  # seconds (the solver's limit is wall-clock)
    cpu_time: float  # CPU seconds the solve got (less than wall_time on a busy machine)


def _params(time_limit: float):
    pywrapcp, enums = _routing()
    if not time_limit > 0:
        raise InvalidConfig(f"time_limit must be > 0 seconds, got {time_limit}")
    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = enums.FirstSolutionStrategy.PATH_CHEAPEST_ARC
    params.local_search_metaheuristic = enums.LocalSearchMetaheuristic.GUIDED_LOCAL_SEARCH
    params.time_limit.FromMilliseconds(int(round(1000 * time_limit)))
    return params


def _status(routing) -> str:
    _, enums = _routing()
    code = int(routing.status())
    try:
        return enums.RoutingSearchStatus.Value.Name(code)
    except ValueError:  # pragma: no cover - a code this OR-Tools version does not name
        return str(code)


def _read_routes(routing, manager, solution, vehicles: int) -> list[list[int]]:
    out = []
    for k in range(vehicles):
        index, route = routing.Start(k), []
        index = solution.Value(routing.NextVar(index))
        while not routing.IsEnd(index):
            route.append(int(manager.IndexToNode(index)))
            index = solution.Value(routing.NextVar(index))
        out.append(route)
    return out


def hmtsp_arc_matrices(instance: HMTSPInstance) -> np.ndarray:
    """``(3, N + 3, N + 3)`` int64 ``t_k(i, j) = round(S (gamma_k l(i, j) + s_{k, c(j)}))`` (module doc)."""
    n = instance.n_customers
    dist = instance.distances()
    service = np.zeros((VEHICLES, n + VEHICLES))
    service[:, :n] = instance.service[:, instance.task_type]
    real = instance.travel[:, None, None] * dist[None] + service[:, None, :]
    return np.rint(SCALE * real).astype(np.int64)


def solve_hmtsp(
    instance: HMTSPInstance, *, time_limit: float = DEFAULT_TIME_LIMIT, hint: list[list[int]] | None = None
) -> RoutingResult:
    """OR-Tools' best HMTSP routes within ``time_limit`` seconds (module doc: the exact model).

    ``hint`` (three routes, e.g. a classical row's answer) starts the search from that
    solution instead of ``PATH_CHEAPEST_ARC``.
    """
    pywrapcp, _ = _routing()
    n = instance.n_customers
    depots = [n + k for k in range(VEHICLES)]
    manager = pywrapcp.RoutingIndexManager(n + VEHICLES, VEHICLES, depots, depots)
    routing = pywrapcp.RoutingModel(manager)
    arcs = hmtsp_arc_matrices(instance)
    transit = [routing.RegisterTransitMatrix(arcs[k].tolist()) for k in range(VEHICLES)]
    doubled = [routing.RegisterTransitMatrix((2 * arcs[k]).tolist()) for k in range(VEHICLES)]
    for k in range(VEHICLES):
        routing.SetArcCostEvaluatorOfVehicle(doubled[k], k)
    cap = int(arcs.max()) * (n + 2) * 2
    routing.AddDimensionWithVehicleTransits(transit, 0, cap, True, "L")
    dim = routing.GetDimensionOrDie("L")
    dim.SetGlobalSpanCostCoefficient(1)
    for k in range(VEHICLES):
        dim.SetCumulVarSoftUpperBound(routing.End(k), int(round(SCALE * float(instance.budget[k]))), 10)
    params = _params(time_limit)
    start, cpu = time.perf_counter(), time.process_time()
    if hint is not None:
        routing.CloseModelWithParameters(params)
        initial = routing.ReadAssignmentFromRoutes([list(r) for r in hint], True)
        if initial is None:
            raise InvalidConfig("hint: the routes are not a valid HMTSP solution (every customer once)")
        solution = routing.SolveFromAssignmentWithParameters(initial, params)
    else:
        solution = routing.SolveWithParameters(params)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    if solution is None:
        raise RuntimeError(f"OR-Tools found no HMTSP solution within {time_limit}s (status {_status(routing)})")
    routes = _read_routes(routing, manager, solution, VEHICLES)
    return RoutingResult(
        routes=routes,
        objective=hsim.cost(instance, routes),
        model_objective=solution.ObjectiveValue() / (2 * SCALE),
        status=_status(routing),
        wall_time=wall,
        cpu_time=cpu,
    )


def truck_epochs(tour: list[int]) -> list[tuple[int, int, int, int]]:
    """The FSTSP epochs of a truck-only tour (customer ids ``1..N`` in order): one truck move each."""
    out, u = [], 0
    for v in tour:
        out.append((u, -1, int(v), int(v)))
        u = int(v)
    return out


def solve_truck_tsp(instance: FSTSPInstance, *, time_limit: float = DEFAULT_TIME_LIMIT) -> RoutingResult:
    """OR-Tools' best truck-only FSTSP tour within ``time_limit`` seconds (module doc)."""
    pywrapcp, _ = _routing()
    n = instance.n_customers
    manager = pywrapcp.RoutingIndexManager(n + 1, 1, 0)
    routing = pywrapcp.RoutingModel(manager)
    per_length = 1.0 / instance.truck_speed + fsim.DISTANCE_WEIGHT
    arcs = np.rint(SCALE * per_length * instance.distances()).astype(np.int64)
    routing.SetArcCostEvaluatorOfAllVehicles(routing.RegisterTransitMatrix(arcs.tolist()))
    start, cpu = time.perf_counter(), time.process_time()
    solution = routing.SolveWithParameters(_params(time_limit))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    if solution is None:
        raise RuntimeError(f"OR-Tools found no truck tour within {time_limit}s (status {_status(routing)})")
    (tour,) = _read_routes(routing, manager, solution, 1)
    return RoutingResult(
        routes=[tour],
        objective=fsim.cost(instance, truck_epochs(tour)),
        model_objective=solution.ObjectiveValue() / SCALE,
        status=_status(routing),
        wall_time=wall,
        cpu_time=cpu,
    )


# -- the caches of the canonical test splits ----------------------------------------------
FIELDS = ("routes", "objective", "model_objective", "status", "wall_time", "cpu_time")


def _check_name(benchmark: str) -> None:
    if benchmark not in BENCHMARKS:
        raise InvalidConfig(f"routing references exist for benchmark in {list(BENCHMARKS)}, got {benchmark!r}")


def cache_path(benchmark: str, hinted: bool = False) -> Path:
    """``relic_envs/data/<benchmark>/ortools_test.npz`` (``ortools_hinted_test.npz``: started from a hint)."""
    _check_name(benchmark)
    return reference_path(benchmark, HINTED_CACHE_NAME if hinted else CACHE_NAME)


def pad_routes(benchmark: str, routes: list[list[int]], n: int) -> np.ndarray:
    """HMTSP ``(3, N)`` / FSTSP ``(N,)`` int64, padded with -1."""
    out = np.full((len(routes), n), -1, dtype=np.int64)
    for k, r in enumerate(routes):
        out[k, : len(r)] = r
    return out if benchmark == "hmtsp" else out[0]


def unpad_routes(benchmark: str, array: np.ndarray) -> list[list[int]]:
    rows = array if benchmark == "hmtsp" else array[None]
    return [[int(v) for v in row if v >= 0] for row in rows]


class ReferenceCache(TestSplitCache):
    """Routing-solver results on a benchmark's test splits: ``results[regime][field]``, split order."""

    def routes(self, regime: str, i: int) -> list[list[int]]:
        return unpad_routes(self.meta["benchmark"], self.results[regime]["routes"][i])


def _solve_test_instance(benchmark: str, instance, time_limit: float, hint: str | None) -> RoutingResult:
    """HMTSP (from the routes of classical row ``hint`` when given) or FSTSP's truck tour."""
    if benchmark == "fstsp":
        return solve_truck_tsp(instance, time_limit=time_limit)
    start_routes = None
    if hint is not None:
        from baselines.co.routing_hmtsp import solve as classical

        start_routes = classical(instance, hint)
    return solve_hmtsp(instance, time_limit=time_limit, hint=start_routes)


def write_cache(
    benchmark: str,
    *,
    time_limit: float = DEFAULT_TIME_LIMIT,
    hint: str | None = None,
    path: Path | None = None,
    progress: bool = True,
) -> ReferenceCache:
    """Solve every canonical test instance and store the results (module doc).

    ``hint`` (HMTSP only) names a classical row of :mod:`baselines.co.routing_hmtsp`
    (e.g. ``"ci+2opt+relocate"``) whose routes start the search.
    """
    from relic_envs.core.splits import splits

    _check_name(benchmark)
    if hint is not None and benchmark != "hmtsp":
        raise InvalidConfig(f"hint: only HMTSP searches start from a classical solution, got benchmark {benchmark!r}")
    meta = write_meta(  # before solving: the machine's load at the start
        benchmark, time_limit, 1, hint, solver="OR-Tools routing (pywrapcp)",
        problem="HMTSP, exact objective (module doc)" if benchmark == "hmtsp" else "truck-only TSP (FSTSP upper bound)",
        search=SEARCH if hint is None else f"{SEARCH}, started from {hint}", scale=SCALE, proven_optimal=False,
        machine=machine_note())
    results, solved = solve_test_splits(  # every field but the routes, which are padded below
        benchmark, lambda inst: _solve_test_instance(benchmark, inst, time_limit, hint), FIELDS[1:], "or-tools", progress)
    for regime, instances in splits(benchmark).test.items():  # routes first, as in FIELDS
        n = instances[0].n_customers
        results[regime] = {"routes": np.stack([pad_routes(benchmark, r.routes, n) for r in solved[regime]]), **results[regime]}
    save_results(path or cache_path(benchmark, hinted=hint is not None), results, meta)
    return ReferenceCache(results, meta)


def load_cache(benchmark: str, path: Path | None = None, hinted: bool = False) -> ReferenceCache | None:
    """The cached routing-solver results of a benchmark's test splits, or ``None`` when absent."""
    return load_cache_as(ReferenceCache, path or cache_path(benchmark, hinted))


def summary(benchmark: str, cache: ReferenceCache) -> str:
    """One line per test size: mean objective, statuses, settings."""
    lines = []
    for regime in by_size(cache.results):
        res = cache.results[regime]
        statuses = cache.status_counts(regime)
        lines.append(
            f"{benchmark} {regime}: mean {res['objective'].mean():.4f} over {res['objective'].size} instances "
            f"(best found, not proven optimal); {statuses}; {cache.meta['time_limit_s']:g} s wall/instance, "
            f"cpu {res['cpu_time'].mean():.1f} s/instance, hint {cache.meta.get('hint')}, OR-Tools {cache.meta['ortools']}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m baselines.co.routing [--write hmtsp fstsp] [--time-limit 30] [--hint ci+2opt+relocate] [--table]``."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m baselines.co.routing", description=__doc__.split("\n")[0])
    ap.add_argument("--write", nargs="+", choices=list(BENCHMARKS), default=[], help="re-solve these test splits")
    ap.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT, help="wall seconds per instance")
    ap.add_argument("--hint", help="HMTSP: start OR-Tools from this classical row, e.g. ci+2opt+relocate")
    ap.add_argument("--table", action="store_true", help="print the results tables (Markdown)")
    ap.add_argument("--env", action="append", choices=list(BENCHMARKS), help="tables of these benchmarks only")
    args = ap.parse_args(argv)
    for name in args.write:
        write_cache(name, time_limit=args.time_limit, hint=args.hint if name == "hmtsp" else None)
    if args.table:
        from baselines.co.routing_table import tables

        print(tables(args.env or list(BENCHMARKS)))
        return 0
    for name in args.write or list(BENCHMARKS):
        for hinted in (False, True):
            cache = load_cache(name, hinted=hinted)
            if cache is not None:
                print(summary(name, cache))
            elif not hinted:
                print(f"{name}: no cached OR-Tools reference; {INSTALL_HINT} {name}")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
