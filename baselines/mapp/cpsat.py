"""CP-SAT references with a proven bound for MAPP-PC and MAPP-AR (``pip install 'relic-envs[solvers]'``).

**Model** (both benchmarks): per agent ``k`` one ``AddCircuit`` over the nodes with an arc
literal ``x_kij`` per pair (pairs with ``l_0i + l_ij + l_j0 > B`` left out), a skip loop
``i -> i`` with literal ``not y_ki`` per customer (``y_ki``: agent ``k`` visits ``i``) and a
depot loop ``e_k`` (the empty route, which then forbids every ``y_ki``);
``sum_ij L_ij x_kij <= floor(B S)`` with ``L_ij = floor(l_ij S)``, ``S = DIST_SCALE``. Every
true route of length ``<= B`` satisfies the rounded budget, so the model is a relaxation.

- **MAPP-PC** (a team orienteering problem): ``sum_k y_ki <= 1``; maximise
  ``sum_i ceil(q_i V) sum_k y_ki`` (``V = VALUE_SCALE``). This is the exact objective up to
  the rounding, which only enlarges the model, so CP-SAT's bound divided by ``V`` is an
  upper bound on the true optimum, and a solution proven optimal is optimal to within
  ``N / V`` (plus the distance rounding, below ``N / S`` per route).
- **MAPP-AR**: the true objective ``sum_j (1 - u_j)`` is not linear. With
  ``c_s = sum_k y_ks`` scans at ``s``, ``1 - u_j = 1`` where ``c_j >= 1`` and
  ``1 - prod_s (1 - rho_sj)^{c_s} <= sum_s rho_sj c_s`` elsewhere (union bound), so
  ``z_j <= min(1, c_j + sum_{s != j} rho_sj c_s)`` over-estimates every plan's value: the
  model maximises ``sum_j z_j`` and its **bound is an upper bound** on the AR optimum,
  but its optimum is not the AR optimum (the union bound is loose) and a model solution
  is only a feasible plan. AR's reported ``objective`` is therefore the better of the
  model's plan and the ILS plan used as a hint, both replayed in the simulator.

**Recomputed objective.** The model's routes are played through the benchmark's episode
(``baselines.mapp.plans.play``); that episode objective is ``objective``. A route that
the rounding lets exceed ``B`` (by less than ``N / S``) is cut back, dropping its worst
node, until it fits (``repaired`` counts the nodes dropped).

Solved with a time limit per instance (``DEFAULT_TIME_LIMIT``) and the ILS plan as a
hint; ``status`` is ``optimal`` (the model proven: PC exact, AR only the relaxation),
``feasible``, or ``unknown`` when CP-SAT found no solution within the limit (at N = 80 its
presolve alone can take the whole limit on two cores): the plan is then the hint and the
bound the trivial one (every prize; ``U_0`` for AR).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np

from baselines._ortools import cp_model as _cp_model
from baselines._test_splits import (
    TestSplitCache,
    cached_summary,
    cpsat_summary,
    optimal_feasible,
    reference_main,
    solve_test_splits,
    write_meta,
)
from baselines.mapp import plans
from relic_envs.core.benchmark import ROLES
from relic_envs.core.references import load_results, reference_path, save_results
from relic_envs.mapp._geometry import distances

DIST_SCALE = 1_000_000
VALUE_SCALE = 10_000
DEFAULT_TIME_LIMIT = 20.0
DEFAULT_WORKERS = 2
CACHE_NAME = "cpsat_test.npz"
INSTALL_HINT = "pip install 'relic-envs[solvers]' (OR-Tools CP-SAT), then python -m baselines.mapp.cpsat --write"
_LOG = False  # True: print CP-SAT's search log
FIELDS = ("objective", "bound", "status", "wall_time", "hint_objective", "repaired")


@dataclasses.dataclass(frozen=True)
class Result:
    routes: list  # three routes of customer ids (the plan whose episode objective is ``objective``)
    objective: float  # episode objective of the best plan (model's or hint's)
    bound: float  # proven upper bound on the true optimum
    status: str  # "optimal" | "feasible" (of the model)
    wall_time: float
    hint_objective: float  # episode objective of the hint plan (nan without a hint)
    repaired: int  # nodes dropped to undo the distance rounding


def _fit(dist, model, route, budget) -> tuple[list[int], int]:
    route, dropped = list(route), 0
    while route and plans.route_length(dist, route) > budget - plans.EPS:
        base = model.value([route])
        worst = min(range(len(route)), key=lambda i: base - model.value([route[:i] + route[i + 1 :]]))
        route.pop(worst)
        dropped += 1
    return route, dropped


def solve(name: str, instance, *, time_limit: float = DEFAULT_TIME_LIMIT, workers: int = DEFAULT_WORKERS,
          hint: list | None | str = "ils") -> Result:
    """Solve one instance (``hint``: a plan, a method of ``baselines.mapp.plans``, or ``None``)."""
    cp_model = _cp_model()
    t0 = time.perf_counter()
    dist = distances(instance.coords)
    n, budget = instance.n_nodes, float(instance.budget)
    model_v = plans.value_model(name, instance)
    if isinstance(hint, str):
        hint = plans.solve(name, instance, hint)
    L = np.floor(dist * DIST_SCALE).astype(np.int64)
    cap = int(np.floor(budget * DIST_SCALE))
    m = cp_model.CpModel()
    y = {(k, i): m.NewBoolVar(f"y{k}_{i}") for k in range(len(ROLES)) for i in range(1, n)}
    x, empty = {}, []
    for k in range(len(ROLES)):
        e = m.NewBoolVar(f"e{k}")
        empty.append(e)
        arcs = [(0, 0, e)]
        for i in range(1, n):
            arcs.append((i, i, y[k, i].Not()))
            m.AddImplication(e, y[k, i].Not())
        for i in range(n):
            for j in range(n):
                if i != j and L[0, i] + L[i, j] + L[j, 0] <= cap:
                    x[k, i, j] = m.NewBoolVar(f"x{k}_{i}_{j}")
                    arcs.append((i, j, x[k, i, j]))
        m.AddCircuit(arcs)
        m.Add(sum(int(L[i, j]) * v for (kk, i, j), v in x.items() if kk == k) <= cap)
    count = {i: sum(y[k, i] for k in range(len(ROLES))) for i in range(1, n)}
    if name == "mapp_pc":
        q = np.ceil(np.asarray(instance.prizes) * VALUE_SCALE).astype(np.int64)
        for i in range(1, n):
            m.Add(count[i] <= 1)
        m.Maximize(sum(int(q[i]) * count[i] for i in range(1, n)))
    elif name == "mapp_ar":
        r = np.ceil(model_v.rho * VALUE_SCALE).astype(np.int64)
        z = {j: m.NewIntVar(0, VALUE_SCALE, f"z{j}") for j in range(1, n)}
        for j in range(1, n):
            m.Add(z[j] <= VALUE_SCALE * count[j] + sum(int(r[s, j]) * count[s] for s in range(1, n) if s != j and r[s, j] > 0))
        m.Maximize(sum(z.values()))
    else:
        raise ValueError(f"no CP-SAT model for {name!r}")
    if hint is not None:
        for k, route in enumerate(hint):
            on = set(route)
            m.AddHint(empty[k], not route)
            for i in range(1, n):
                m.AddHint(y[k, i], i in on)
            seq = [0, *route, 0] if route else []
            used = set(zip(seq[:-1], seq[1:]))
            for (kk, i, j), v in x.items():
                if kk == k:
                    m.AddHint(v, (i, j) in used)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(workers)
    solver.parameters.log_search_progress = bool(_LOG)
    code = solver.Solve(m)
    status = {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible"}.get(code, "unknown")
    bound = float(solver.BestObjectiveBound()) / VALUE_SCALE if status != "unknown" else float("inf")
    # every prize (PC) / all the initial uncertainty (AR) is also a bound, often the tighter one here
    bound = min(bound, float(np.sum(instance.prizes)) if name == "mapp_pc" else float(n - 1))
    routes, repaired = [[] for _ in ROLES], 0
    if status in ("optimal", "feasible"):
        for k in range(len(ROLES)):
            succ = {i: j for (kk, i, j), v in x.items() if kk == k and solver.BooleanValue(v)}
            route, cur = [], succ.get(0, 0)
            while cur != 0:
                route.append(cur)
                cur = succ[cur]
            routes[k], dropped = _fit(dist, model_v, route, budget)
            repaired += dropped
    objective = plans.play(name, instance, routes).objective()
    hint_objective = float("nan")
    if hint is not None:
        hint_objective = plans.play(name, instance, hint).objective()
        if hint_objective > objective:
            routes, objective = [list(r) for r in hint], hint_objective
    return Result(routes, float(objective), bound, status, time.perf_counter() - t0, hint_objective, repaired)


# -- the cache of the canonical test splits ---------------------------------------------
def cache_path(name: str) -> Path:
    """``relic_envs/data/<name>/cpsat_test.npz``."""
    return reference_path(name, CACHE_NAME)


def write_cache(name: str, *, time_limit: float = DEFAULT_TIME_LIMIT, workers: int = DEFAULT_WORKERS,
                hint: str = "ils", progress: bool = True, path: Path | None = None):
    meta = write_meta(name, time_limit, workers, hint, dist_scale=DIST_SCALE, value_scale=VALUE_SCALE, ils=plans.ILS_SETTINGS)
    results, solved_by_regime = solve_test_splits(
        name, lambda inst: solve(name, inst, time_limit=time_limit, workers=workers, hint=hint), FIELDS, "cp-sat", progress)
    for regime, solved in solved_by_regime.items():
        width = max(1, max(len(r) for s in solved for r in s.routes))
        routes = np.zeros((len(solved), len(ROLES), width), dtype=np.int64)  # 0-padded
        for i, s in enumerate(solved):
            for k, r in enumerate(s.routes):
                routes[i, k, : len(r)] = r
        results[regime]["routes"] = routes
    save_results(path or cache_path(name), results, meta)
    return load_cache(name, path)


def load_cache(name: str, path: Path | None = None):
    """``(results, meta)`` of the cached test splits, or ``None``."""
    return load_results(path or cache_path(name))


def cached_routes(name: str, regime: str, i: int) -> list[list[int]]:
    results, _ = load_cache(name)
    return [[int(j) for j in row if j != 0] for row in results[regime]["routes"][i]]


def _model_counts(counts: dict[str, int]) -> str:
    # "unknown": CP-SAT found nothing in the limit, so the reported plan and bound are the fallbacks
    return (f"model {optimal_feasible(counts)}, {counts['unknown']} without a solution in the limit "
            "(best = the hint, bound = the sum of prizes)")


def _summary_lines(name: str, loaded: tuple) -> str:
    return cpsat_summary(name, TestSplitCache(*loaded), statuses=("optimal", "feasible", "unknown"), counted=_model_counts)


def summary(name: str) -> str:
    return cached_summary(name, load_cache, _summary_lines, INSTALL_HINT)


if __name__ == "__main__":  # python -m baselines.mapp.cpsat --write mapp_pc mapp_ar [--time-limit 20 --workers 2]
    reference_main("CP-SAT references of the MAPP-PC / MAPP-AR test splits", plans.STATIC, write_cache, summary,
                   time_limit=DEFAULT_TIME_LIMIT, workers=DEFAULT_WORKERS)
