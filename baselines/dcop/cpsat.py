"""Optimum references for the four DCOPs with OR-Tools CP-SAT (``pip install 'relic-envs[solvers]'``).

One exact model per objective of Appendix B.4, every term and coefficient:

- **DGC**: one-hot colours ``y[i, c]``; an edge's conflict literal ``z_e`` is forced to 1
  when both ends share a colour; minimise ``sum w_e z_e``. One vertex of largest degree
  is fixed to colour 0 (the colours are interchangeable, so this loses no optimum).
- **DiMES**: one-hot slots ``y[i, h]`` and a free meeting slot ``q[m, h]`` per meeting;
  ``match_i`` may be 1 only when ``x_i = q_m(i)``; off-slot cost ``100 (1 - match_i)``.
  Choosing ``q_m`` freely minimises the off-slot count, which is exactly
  ``size - largest slot count`` (the simulator's term, whatever slot wins a tie).
  Travel ``10 max(0, tau_p - |x_2p - x_2p+1|)`` with an exact absolute value;
  preference ``a[i, x_i]``.
- **SensorDCSP**: one-hot values ``b[s, v]`` (padded values track nothing, like sleep);
  ``n_t`` = sensors tracking ``t``; ``under_t`` may be 0 only when ``n_t >= 3``;
  ``excess_t >= n_t - 3``; an incompatible pair that shares a candidate target ``t``
  pays 100 when both track it.
- **SHDS**: one-hot starts ``s[i, v]``; energy ``p_i sum of theta over the run``, preference
  ``5 |v - pref_i|``; overload ``o_h >= L_h - kappa_h`` per slot at 200 per kW.

**Scaling and rounding.** CP-SAT needs integer coefficients. Every real coefficient is
multiplied by a scale ``S`` and rounded *toward a lower cost*: cost coefficients and
powers are floored, capacities are ceiled. So the model's cost ``M(x) / S`` never
exceeds the true cost ``C(x)`` of any assignment, and CP-SAT's proven bound divided by
``S`` is a valid lower bound of the true optimum. The under-estimate is bounded per
instance by ``slack`` (stored with each result): DiMES ``N / S``, SensorDCSP ``T / S``,
SHDS ``(N + 200 (sum_i d_i + 24)) / S``; DGC is integral (``slack = 0``). With the
scales used (DiMES and SensorDCSP ``S = 1000``, SHDS ``S = 10^5``) the slack is at most
0.12, 0.016 and about 1 respectively.

Every result carries the best assignment, its objective **recomputed by the
benchmark's own simulator**, the model's objective, the proven lower bound and the
status (``optimal``: optimal for the rounded model, so the true optimum lies within
``slack`` of it; ``feasible``: stopped by the time limit).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from baselines._ortools import cp_model as _cp_model
from baselines._test_splits import stack_fields, write_meta
from relic_envs.core.instance import Instance
from relic_envs.core.references import load_fields, reference_path, save_fields
from relic_envs.core.registry import get_benchmark
from relic_envs.errors import InvalidConfig

DCOPS = ("dgc", "dimes", "sensor_dcsp", "shds")
SCALE = {"dgc": 1, "dimes": 1000, "sensor_dcsp": 1000, "shds": 100_000}
DEFAULT_TIME_LIMIT = 10.0
DEFAULT_WORKERS = 2
# Search: DGC and DiMES are weighted-MaxSAT-like, where CP-SAT's LP bound stays near 0
# and its core-based search proves far better bounds (DGC test instance 0, 10 s: bound
# 156 vs 0); SensorDCSP and SHDS use CP-SAT's default portfolio (SHDS: LP-based search
# proves optimality where the core search does not).
CORE = {"dgc": True, "dimes": True, "sensor_dcsp": False, "shds": False}
CACHE_NAME = "cpsat_test.npz"
INSTALL_HINT = "pip install 'relic-envs[solvers]' (OR-Tools CP-SAT), then relic-baselines optimum --write"


@dataclasses.dataclass(frozen=True)
class CPSATResult:
    """CP-SAT's answer on one instance (see the module doc for each field's meaning)."""

    x: np.ndarray  # (N,) int64, best assignment found
    objective: float  # the simulator's cost of x
    model_objective: float  # CP-SAT's objective value / scale (>= the rounded model's cost of x; equal when optimal)
    bound: float  # proven lower bound of the true optimum
    slack: float  # the rounding's largest under-estimate of the true cost
    status: str  # "optimal" | "feasible"
    wall_time: float


class _Model:
    """A CP-SAT model under construction: one-hot variables, the objective terms, the decoder."""

    def __init__(self, n: int, domain: int):
        cp_model = _cp_model()
        self.m = cp_model.CpModel()
        self.onehot = [[self.m.new_bool_var(f"x{i}_{v}") for v in range(domain)] for i in range(n)]
        for row in self.onehot:
            self.m.add_exactly_one(row)
        self.terms: list[tuple[int, object]] = []  # (integer coefficient, variable)
        self.constant = 0  # integer constant of the scaled objective

    def value_expr(self, i: int):
        return sum(v * lit for v, lit in enumerate(self.onehot[i]))


def _dgc(inst, scale: int) -> tuple[_Model, float]:
    from relic_envs.dcop.dgc.simulator import N_COLORS

    n = inst.x0.size
    md = _Model(n, N_COLORS)
    real = (inst.edges[:, 0] != inst.edges[:, 1]) & (inst.weights > 0)
    edges, weights = inst.edges[real], inst.weights[real]
    for (i, j), w in zip(edges, weights):
        z = md.m.new_bool_var(f"conflict{i}_{j}")
        for c in range(N_COLORS):
            md.m.add_bool_or([md.onehot[i][c].Not(), md.onehot[j][c].Not(), z])
        md.terms.append((int(w) * scale, z))
    if edges.size:
        hub = int(np.argmax(np.bincount(edges.ravel(), minlength=n)))
        md.m.add(md.onehot[hub][0] == 1)
    return md, 0.0


def _dimes(inst, scale: int) -> tuple[_Model, float]:
    from relic_envs.dcop.dimes.simulator import N_SLOTS, OFF_SLOT_COST, TRAVEL_COST

    n = inst.x0.size
    md = _Model(n, N_SLOTS)
    meetings = np.unique(inst.meeting)
    q = {int(m): [md.m.new_bool_var(f"q{m}_{h}") for h in range(N_SLOTS)] for m in meetings}
    for row in q.values():
        md.m.add_exactly_one(row)
    for i in range(n):
        match = md.m.new_bool_var(f"match{i}")
        for h in range(N_SLOTS):  # match_i and x_i = h imply q_m = h
            md.m.add_bool_or([match.Not(), md.onehot[i][h].Not(), q[int(inst.meeting[i])][h]])
            md.terms.append((math.floor(scale * float(inst.pref[i, h])), md.onehot[i][h]))
        md.terms.append((-int(OFF_SLOT_COST) * scale, match))  # 100 (1 - match_i); the 100 is the constant
    md.constant = int(OFF_SLOT_COST) * scale * n
    loc = inst.location
    for a in range(0, n, 2):
        tau = int(inst.travel[loc[a], loc[a + 1]])
        if tau == 0:
            continue
        gap = md.m.new_int_var(0, N_SLOTS - 1, f"gap{a}")
        md.m.add_abs_equality(gap, md.value_expr(a) - md.value_expr(a + 1))
        short = md.m.new_int_var(0, tau, f"short{a}")
        md.m.add(short >= tau - gap)
        md.terms.append((int(TRAVEL_COST) * scale, short))
    return md, n / scale


def _sensor(inst, scale: int) -> tuple[_Model, float]:
    from relic_envs.dcop.sensor_dcsp.simulator import INCOMPATIBLE_COST, N_VALUES, REQUIRED

    n, n_targets = inst.x0.size, inst.target_value.size
    md = _Model(n, N_VALUES)
    tracks: dict[int, dict[int, object]] = {t: {} for t in range(n_targets)}
    for s in range(n):
        for v in range(N_VALUES):
            t = int(inst.candidate[s, v])
            if t >= 0:
                tracks[t][s] = md.onehot[s][v]
    for t in range(n_targets):
        count = sum(tracks[t].values())
        under = md.m.new_bool_var(f"under{t}")
        md.m.add(count >= REQUIRED).only_enforce_if(under.Not())
        md.terms.append((math.floor(scale * float(inst.target_value[t])), under))
        if len(tracks[t]) > REQUIRED:
            excess = md.m.new_int_var(0, len(tracks[t]) - REQUIRED, f"excess{t}")
            md.m.add(excess >= count - REQUIRED)
            md.terms.append((scale, excess))
        sensors = sorted(tracks[t])
        for a, s in enumerate(sensors):
            for s2 in sensors[a + 1 :]:
                if inst.incompatible[s, s2]:
                    z = md.m.new_bool_var(f"clash{s}_{s2}_{t}")
                    md.m.add_bool_or([tracks[t][s].Not(), tracks[t][s2].Not(), z])
                    md.terms.append((int(INCOMPATIBLE_COST) * scale, z))
    return md, n_targets / scale


def _shds(inst, scale: int) -> tuple[_Model, float]:
    from relic_envs.dcop.shds.simulator import N_SLOTS, N_STARTS, OCCUPANCY, OVERLOAD_COST, PREFERENCE_COST

    n = inst.x0.size
    md = _Model(n, N_STARTS)
    occ = OCCUPANCY[inst.duration]  # (N, 18, 24)
    energy = inst.power[:, None] * (occ @ inst.price)  # (N, 18)
    power = np.floor(scale * inst.power).astype(np.int64)
    for i in range(n):
        for v in range(N_STARTS):
            coef = math.floor(scale * float(energy[i, v])) + int(PREFERENCE_COST) * scale * abs(v - int(inst.pref_start[i]))
            md.terms.append((coef, md.onehot[i][v]))
    for h in range(N_SLOTS):
        running = [(int(power[i]), md.onehot[i][v]) for i in range(n) for v in range(N_STARTS) if occ[i, v, h]]
        if not running:
            continue
        load = sum(c * lit for c, lit in running)
        cap = math.ceil(scale * float(inst.capacity[h]))
        top = sum(c for c, _ in running)
        if top <= cap:
            continue
        over = md.m.new_int_var(0, top - cap, f"over{h}")
        md.m.add(over >= load - cap)
        md.terms.append((int(OVERLOAD_COST), over))
    slack = (n + OVERLOAD_COST * (float(inst.duration.sum()) + N_SLOTS)) / scale
    return md, slack


_BUILDERS = {"dgc": _dgc, "dimes": _dimes, "sensor_dcsp": _sensor, "shds": _shds}


def _check_name(benchmark: str) -> None:
    if benchmark not in _BUILDERS:
        raise InvalidConfig(f"CP-SAT models exist for benchmark in {list(_BUILDERS)}, got {benchmark!r}")


def solve_cpsat(
    benchmark: str,
    instance: Instance,
    *,
    time_limit: float = DEFAULT_TIME_LIMIT,
    workers: int = DEFAULT_WORKERS,
    hint: np.ndarray | None = None,
) -> CPSATResult:
    """Solve one instance with CP-SAT within ``time_limit`` seconds on ``workers`` threads.

    ``hint`` (an assignment, e.g. a local-search answer) is passed to CP-SAT as a
    solution hint; it changes how fast a good solution is found, never the model.
    """
    _check_name(benchmark)
    if not time_limit > 0:
        raise InvalidConfig(f"time_limit must be > 0 seconds, got {time_limit}")
    if workers < 1:
        raise InvalidConfig(f"workers must be >= 1, got {workers}")
    cp_model = _cp_model()
    problem = get_benchmark(benchmark).problem
    scale = SCALE[benchmark]
    md, slack = _BUILDERS[benchmark](instance, scale)
    md.m.minimize(sum(c * v for c, v in md.terms) + md.constant)
    if hint is not None:
        for i, value in enumerate(np.asarray(hint)):
            for v, lit in enumerate(md.onehot[i]):
                md.m.add_hint(lit, int(v == value))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = 0
    if CORE[benchmark]:  # core-based lower bounds (much stronger here than the LP's) beside a solution finder
        if workers == 1:
            solver.parameters.optimize_with_core = True
        else:
            solver.parameters.subsolvers.extend(["core", "quick_restart", "default_lp", "no_lp"][:workers])
    start = time.perf_counter()
    status = solver.solve(md.m)
    wall = time.perf_counter() - start
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise RuntimeError(f"CP-SAT found no solution for {benchmark} within {time_limit}s (status {solver.status_name(status)})")
    x = np.array([next(v for v, lit in enumerate(row) if solver.boolean_value(lit)) for row in md.onehot], dtype=np.int64)
    return CPSATResult(
        x=x,
        objective=float(problem.cost(instance, x)),
        model_objective=solver.objective_value / scale,
        bound=solver.best_objective_bound / scale,
        slack=float(slack),
        status="optimal" if status == cp_model.OPTIMAL else "feasible",
        wall_time=wall,
    )


# -- the cache of the canonical test splits ---------------------------------------------


def cache_path(benchmark: str) -> Path:
    _check_name(benchmark)
    return reference_path(benchmark, CACHE_NAME)


@dataclasses.dataclass(frozen=True)
class OptimumCache:
    """CP-SAT results on a benchmark's 50 canonical test instances, in split order."""

    x: np.ndarray  # (50, N) int64
    objective: np.ndarray  # (50,) float64, simulator's cost of x
    model_objective: np.ndarray  # (50,)
    bound: np.ndarray  # (50,)
    slack: np.ndarray  # (50,)
    status: np.ndarray  # (50,) str
    wall_time: np.ndarray  # (50,)
    meta: dict  # time_limit, workers, ortools version, scale


def write_cache(
    benchmark: str,
    *,
    time_limit: float = DEFAULT_TIME_LIMIT,
    workers: int = DEFAULT_WORKERS,
    hint: str | None = None,
    path: Path | None = None,
    progress: bool = True,
) -> OptimumCache:
    """Solve every canonical test instance and store the results (``relic-baselines optimum --write``).

    ``hint`` names a classical configuration (``baselines.dcop.configs``, e.g.
    ``"lsga-dsa"``) whose final assignment on each instance is given to CP-SAT as a
    solution hint; the metadata records it.
    """
    from relic_envs.core.splits import splits

    meta = write_meta(benchmark, time_limit, workers, hint, scale=SCALE[benchmark])
    instances = splits(benchmark).test_instances()
    hints: list[np.ndarray | None] = [None] * len(instances)
    if hint is not None:
        from baselines.dcop.configs import make_solver
        from baselines.dcop.sweep import run_sweeps

        hints = [t.x for t in run_sweeps(benchmark, make_solver(hint, benchmark), instances)]
    results = [
        solve_cpsat(benchmark, inst, time_limit=time_limit, workers=workers, hint=h)
        for inst, h in tqdm(list(zip(instances, hints)), desc=f"cp-sat {benchmark}", disable=not progress)
    ]
    fields = stack_fields(results, [f.name for f in dataclasses.fields(CPSATResult)])  # the cache's fields, in order
    save_fields(path or cache_path(benchmark), fields, meta)
    return OptimumCache(meta=meta, **fields)


def load_cache(benchmark: str, path: Path | None = None) -> OptimumCache | None:
    """The cached CP-SAT results of a benchmark's test split, or ``None`` when absent."""
    loaded = load_fields(path or cache_path(benchmark))
    if loaded is None:
        return None
    fields, meta = loaded
    return OptimumCache(meta=meta, **fields)


def solve_cpsat_batch(
    benchmark: str, instances: Sequence[Instance], *, time_limit: float = DEFAULT_TIME_LIMIT, workers: int = DEFAULT_WORKERS
) -> list[CPSATResult]:
    """``solve_cpsat`` on every instance."""
    return [solve_cpsat(benchmark, inst, time_limit=time_limit, workers=workers) for inst in instances]
