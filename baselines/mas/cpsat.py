"""Offline references (proven bounds, best found schedules) for MAS-JD, MAS-ST and MAS-FS
with OR-Tools CP-SAT (``pip install 'relic-envs[solvers]'``).

These are **offline (clairvoyant) references for an online problem**: the solver knows
every job of the instance from the start, release times included, while a team of the
benchmark only ever sees the released jobs. A team's gap to the proven ``bound`` is
therefore an upper bound on its gap to the best online policy. The best schedule found
(``objective``) is a heuristic reference unless ``status == "optimal"`` (no test instance
was solved to optimality in 10 s): online teams can beat it, and a gap to it bounds
nothing. For MAS-JD and MAS-FS ``baselines.mas.offline_ls`` finds better offline schedules
(on MAS-JD 32 of 40 and on MAS-FS 30 of 40 cached CP-SAT schedules only match their hint team's cost:
``baselines.mas.table.cpsat_kinds``).

Interval models (Appendix B.2, every constraint and the exact objective):

- **MAS-JD**, ``P3|r_j|sum w_j T_j``: one interval per job (start ``>= r_j``, size
  ``p_j``) in a ``cumulative`` of capacity 3 (three identical machines: any schedule
  with at most three jobs at a time is a three-machine schedule, by interval colouring,
  and the cumulative removes the machine symmetry); ``T_j >= C_j - d_j``, ``T_j >= 0``;
  minimise ``sum w_j T_j``. The machines are assigned afterwards by colouring the
  intervals in start order.
- **MAS-ST**: per task and worker an optional interval of the skill-adjusted duration
  ``p_j / max(s_{k c_j}, eps)`` (only for qualified workers, and only where it can end by
  ``d_j``), at most one per task, ``no_overlap`` per worker, start ``>= r_j`` and end
  ``<= d_j``; maximise the value of the scheduled tasks. A late task earns nothing and
  only delays its worker, so an optimal schedule never runs one: leaving it out loses
  nothing.
- **MAS-FS**, ``F3|r_j|sum w_j C_j`` non-permutation: three intervals per job, one per
  stage, ``no_overlap`` per stage, ``S_j1 >= r_j``, ``S_j,s+1 >= C_js``; minimise
  ``sum w_j C_j3``.

**Integer time.** CP-SAT needs integers: every time is multiplied by ``TIME_SCALE = 10^4``
and rounded *towards the better objective*: releases and durations down, due dates and
deadlines up; weights (JD/FS) are scaled by ``w_scale`` (1 when all weights are
integers, as in every generated instance, else 10^3) and rounded down, values (ST) up.
Every true schedule is then feasible in the model with a model objective at least as
good, so CP-SAT's proven bound, divided back, is a valid bound on the true optimum
(a lower bound of the JD/FS cost, an upper bound of the ST value).

**Recomputed objective.** The solver's schedule is turned into one dispatch sequence per
resource (by model start time) and replayed through the benchmark's own event
simulator (``DispatchEpisode``): each resource takes the next job of its sequence as
soon as it is in its pool, with the true (unrounded) data; in MAS-ST a task that would
now finish after its deadline is dropped from the sequence (it could only earn nothing
and delay the rest). The replay is semi-active (no start is later than the data and the
sequence force), and its episode objective is the reported ``objective``; the model's
own value (divided back) is ``model_objective``. The rounding can separate the two:
for JD/FS each completion moves by less than ``(N + 1) / TIME_SCALE``, so a result
``optimal`` for the model is within ``slack`` (``(N + 1) sum w_j / TIME_SCALE``) of the
true optimum; in MAS-ST a task within that distance of its deadline may fall late in the
replay (the result then reports ``model_objective > objective``).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from baselines._ortools import cp_model as _cp_model
from baselines._test_splits import (
    TestSplitCache,
    cached_summary,
    cpsat_summary,
    load_cache_as,
    reference_main,
    write_meta,
    write_test_cache,
)
from relic_envs.core.benchmark import ROLES
from relic_envs.core.instance import Instance
from relic_envs.core.references import reference_path
from relic_envs.core.registry import get_benchmark
from relic_envs.errors import InvalidConfig

MAS = ("mas_jd", "mas_st", "mas_fs")
TIME_SCALE = 10_000
DEFAULT_TIME_LIMIT = 10.0
DEFAULT_WORKERS = 2
CACHE_NAME = "cpsat_test.npz"
INSTALL_HINT = "pip install 'relic-envs[solvers]' (OR-Tools CP-SAT), then relic-baselines optimum --write"


@dataclasses.dataclass(frozen=True)
class CPSATResult:
    """CP-SAT's answer on one instance (see the module doc for each field's meaning)."""

    machine: np.ndarray  # (N, S) int64, resource of each operation in the replay (-1: not run, MAS-ST only)
    start: np.ndarray  # (N, S) float64, start of each operation in the replay (nan: not run)
    objective: float  # the episode objective of the replayed schedule (paper units and direction)
    model_objective: float  # CP-SAT's objective value divided back
    bound: float  # proven bound on the true optimum (lower for JD/FS costs, upper for the ST value)
    slack: float  # JD/FS: the rounding's largest effect on the cost of one schedule; ST: 0 (see module doc)
    status: str  # "optimal" | "feasible"
    wall_time: float


def _floor(x) -> np.ndarray:
    return np.floor(np.asarray(x, dtype=np.float64) * TIME_SCALE).astype(np.int64)


def _ceil(x) -> np.ndarray:
    return np.ceil(np.asarray(x, dtype=np.float64) * TIME_SCALE).astype(np.int64)


def _w_scale(w: np.ndarray) -> int:
    return 1 if np.all(w == np.round(w)) else 1000


class _Built:
    """A model with what is needed to read its schedule back."""

    def __init__(self, m, obj_div: float, maximize: bool):
        self.m, self.obj_div, self.maximize = m, obj_div, maximize
        self.read = None  # solver -> list of (job, stage, resource or -1 for "any", model start)
        self.hint = None  # (job, stage) start hint setter


def _jd(inst, cp_model) -> _Built:
    n = inst.n_jobs
    r, p, d = _floor(inst.release), _floor(inst.proc), _ceil(inst.due)
    ws = _w_scale(inst.weight)
    w = np.floor(inst.weight * ws).astype(np.int64)
    horizon = int(r.max() + p.sum())
    m = cp_model.CpModel()
    starts = [m.new_int_var(int(r[j]), horizon, f"s{j}") for j in range(n)]
    intervals = [m.new_fixed_size_interval_var(starts[j], int(p[j]), f"i{j}") for j in range(n)]
    m.add_cumulative(intervals, [1] * n, len(ROLES))
    tardy = []
    for j in range(n):
        t = m.new_int_var(0, max(0, horizon - int(d[j])), f"T{j}")
        m.add(t >= starts[j] + int(p[j]) - int(d[j]))
        tardy.append(t)
    m.minimize(sum(int(w[j]) * tardy[j] for j in range(n)))
    built = _Built(m, TIME_SCALE * ws, maximize=False)
    built.read = lambda s: [(j, 0, -1, s.value(starts[j])) for j in range(n)]
    built.hint = lambda j, st, t: m.add_hint(starts[j], t)
    return built


def _st(inst, cp_model) -> _Built:
    from relic_envs.mas.st import simulator

    n = inst.n_jobs
    r, dl = _floor(inst.release), _ceil(inst.deadline)
    dur = _floor(simulator.durations(inst)[:, :, 0])  # (3, N)
    qualified = simulator.qualified(inst)
    vs = _w_scale(inst.value)
    v = np.ceil(inst.value * vs).astype(np.int64)
    m = cp_model.CpModel()
    per_worker: list[list] = [[] for _ in ROLES]
    present: dict[tuple[int, int], Any] = {}
    starts: dict[tuple[int, int], Any] = {}
    for j in range(n):
        for k in range(len(ROLES)):
            latest = int(dl[j] - dur[k, j])
            if not qualified[k, j] or latest < r[j]:
                continue
            x = m.new_bool_var(f"x{j}_{k}")
            s = m.new_int_var(int(r[j]), latest, f"s{j}_{k}")
            per_worker[k].append(m.new_optional_fixed_size_interval_var(s, int(dur[k, j]), x, f"i{j}_{k}"))
            present[j, k], starts[j, k] = x, s
        options = [present[j, k] for k in range(len(ROLES)) if (j, k) in present]
        if options:
            m.add_at_most_one(options)
    for ivs in per_worker:
        m.add_no_overlap(ivs)
    m.maximize(sum(int(v[j]) * x for (j, _), x in present.items()))
    built = _Built(m, vs, maximize=True)
    built.read = lambda s: [(j, 0, k, s.value(starts[j, k])) for (j, k), x in present.items() if s.boolean_value(x)]

    def hint(j, st, t, k=None):
        if (j, k) in present:
            m.add_hint(present[j, k], 1)
            m.add_hint(starts[j, k], t)

    built.hint = hint
    return built


def _fs(inst, cp_model) -> _Built:
    n = inst.n_jobs
    r, p = _floor(inst.release), _floor(inst.proc)
    ws = _w_scale(inst.weight)
    w = np.floor(inst.weight * ws).astype(np.int64)
    horizon = int(r.max() + p.sum())
    m = cp_model.CpModel()
    starts = [[m.new_int_var(int(r[j]), horizon, f"s{j}_{s}") for s in range(3)] for j in range(n)]
    for s in range(3):
        m.add_no_overlap([m.new_fixed_size_interval_var(starts[j][s], int(p[j, s]), f"i{j}_{s}") for j in range(n)])
    for j in range(n):
        for s in range(2):
            m.add(starts[j][s + 1] >= starts[j][s] + int(p[j, s]))
    m.minimize(sum(int(w[j]) * (starts[j][2] + int(p[j, 2])) for j in range(n)))
    built = _Built(m, TIME_SCALE * ws, maximize=False)
    built.read = lambda sol: [(j, s, s, sol.value(starts[j][s])) for j in range(n) for s in range(3)]
    built.hint = lambda j, st, t: m.add_hint(starts[j][st], t)
    return built


_BUILDERS = {"mas_jd": _jd, "mas_st": _st, "mas_fs": _fs}


def _check_name(benchmark: str) -> None:
    if benchmark not in _BUILDERS:
        raise InvalidConfig(f"CP-SAT models exist for benchmark in {list(_BUILDERS)}, got {benchmark!r}")


def _colour(ops: list[tuple[int, int, int, int]], durations: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Give each MAS-JD job a machine: intervals in start order onto the first machine free by then."""
    free = [-math.inf] * len(ROLES)
    out = []
    for j, s, _, start in sorted(ops, key=lambda o: (o[3], o[0])):
        k = next((k for k in range(len(ROLES)) if free[k] <= start), None)
        if k is None:  # pragma: no cover - the cumulative guarantees a free machine
            raise RuntimeError("CP-SAT schedule uses more than three machines at once")
        free[k] = start + int(durations[j])
        out.append((j, s, k, start))
    return out


def sequences(ops: list[tuple[int, int, int, int]]) -> list[list[int]]:
    """Per resource, its jobs in model-start order (ties: job id)."""
    seqs: list[list[int]] = [[] for _ in ROLES]
    for j, _s, k, _start in sorted(ops, key=lambda o: (o[3], o[0])):
        seqs[k].append(j)
    return seqs


def replay(benchmark: str, instance: Instance, seqs: Sequence[Sequence[int]]):
    """Play per-resource dispatch sequences through the benchmark's event simulator.

    Each resource takes the next job of its sequence as soon as that job is in its
    pool (MAS-ST: skipping a task that would finish after its deadline). Returns the
    finished :class:`~relic_envs.mas._dispatch.DispatchEpisode`; raises ``RuntimeError``
    when the sequences cannot be played to the end (a job left undone in JD/FS).
    """
    bench = get_benchmark(benchmark)
    ep = bench.new_episode(instance)
    queue = [list(s) for s in seqs]
    skip_late = benchmark == "mas_st"
    while not ep.done:
        actions = {}
        for k, role in enumerate(ROLES):
            if not ep.acting(role):
                actions[role] = -1
                continue
            pool = ep.pools(ep.t)[k]
            stage = bench.problem.stage(k)
            while skip_late and queue[k] and pool[queue[k][0]] and (
                ep.t + ep.durations[k, queue[k][0], stage] > instance.deadline[queue[k][0]]
            ):
                queue[k].pop(0)  # it would be late: it earns nothing and would delay the rest
            actions[role] = queue[k].pop(0) if queue[k] and pool[queue[k][0]] else -1
        invalid = ep.step(actions)
        if invalid is not None:
            raise RuntimeError(f"replay of the CP-SAT schedule voided: {invalid}")
    if bench.problem.must_finish and ep.unfinished().any():
        raise RuntimeError(f"replay of the CP-SAT schedule left jobs {np.flatnonzero(ep.unfinished()).tolist()} undone")
    return ep


def _hint_from_team(benchmark: str, instance: Instance, team: str) -> Any:
    """The finished episode of a classical team (``"seeds"`` or a rule of
    ``baselines.mas.rules``) on ``instance``: its schedule is the hint."""
    if team == "seeds":
        from relic_envs.seeds import seed_team

        policies = seed_team(benchmark)
    else:
        from baselines.mas.rules import rule_team

        policies = rule_team(benchmark, team)
    ep = get_benchmark(benchmark).new_episode(instance)
    while not ep.done:
        invalid = ep.step({r: policies[r](ep.observe(r)) if ep.acting(r) else -1 for r in ROLES})
        if invalid is not None:
            raise RuntimeError(f"hint team {team!r} is invalid on this instance: {invalid}")
    return ep


def solve_cpsat(
    benchmark: str,
    instance: Instance,
    *,
    time_limit: float = DEFAULT_TIME_LIMIT,
    workers: int = DEFAULT_WORKERS,
    hint: str | None = None,
) -> CPSATResult:
    """Solve one instance offline with CP-SAT within ``time_limit`` seconds on ``workers`` threads.

    ``hint`` names a team (``"seeds"``, or a rule of ``baselines.mas.rules`` such as
    ``"atc"``) whose schedule on this instance is given to CP-SAT as a solution hint; it
    changes how fast a good solution is found, never the model.
    """
    _check_name(benchmark)
    if not time_limit > 0:
        raise InvalidConfig(f"time_limit must be > 0 seconds, got {time_limit}")
    if workers < 1:
        raise InvalidConfig(f"workers must be >= 1, got {workers}")
    cp_model = _cp_model()
    built = _BUILDERS[benchmark](instance, cp_model)
    if hint is not None:
        ep = _hint_from_team(benchmark, instance, hint)
        for j, s in zip(*np.nonzero(ep.machine >= 0)):
            t = int(_floor(ep.start[j, s]))
            if benchmark == "mas_st":
                built.hint(int(j), int(s), t, k=int(ep.machine[j, s]))
            else:
                built.hint(int(j), int(s), t)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = 0
    start = time.perf_counter()
    status = solver.solve(built.m)
    wall = time.perf_counter() - start
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise RuntimeError(f"CP-SAT found no solution for {benchmark} within {time_limit}s (status {solver.status_name(status)})")
    ops = built.read(solver)
    if benchmark == "mas_jd":
        ops = _colour(ops, _floor(instance.proc))
    ep = replay(benchmark, instance, sequences(ops))
    n = instance.n_jobs
    weights = instance.value if benchmark == "mas_st" else instance.weight
    slack = 0.0 if benchmark == "mas_st" else (n + 1) * float(weights.sum()) / TIME_SCALE
    return CPSATResult(
        machine=ep.machine.copy(),
        start=ep.start.copy(),
        objective=float(ep.objective()),
        model_objective=solver.objective_value / built.obj_div,
        bound=solver.best_objective_bound / built.obj_div,
        slack=slack,
        status="optimal" if status == cp_model.OPTIMAL else "feasible",
        wall_time=wall,
    )


# -- a cheap MAS-FS lower bound ------------------------------------------------------------


def _mean_busy_bound(head: np.ndarray, p: np.ndarray, w: np.ndarray) -> float:
    """Goemans' mean-busy-time bound for one machine, ``1|r_j|sum w_j C_j``: the preemptive
    schedule that always runs the released unfinished job of largest ``w_j / p_j`` minimises
    ``sum w_j M_j`` (``M_j`` the mean time at which ``j`` is processed) over all preemptive
    schedules, and every schedule has ``C_j >= M_j + p_j / 2``; so ``sum w_j (M_j + p_j / 2)``
    is a lower bound (M. X. Goemans, "Improved approximation algorithms for scheduling with
    release dates", SODA 1997)."""
    rem = p.astype(np.float64).copy()
    busy = np.zeros_like(rem)  # sum of (piece length x piece midpoint)
    ratio = w / p
    t = float(head.min())
    while np.any(rem > 0):
        avail = (head <= t) & (rem > 0)
        if not avail.any():
            t = float(head[rem > 0].min())
            continue
        j = int(np.flatnonzero(avail)[np.argmax(ratio[avail])])
        later = head[head > t]
        run = min(float(rem[j]), float(later.min()) - t if later.size else np.inf)
        busy[j] += run * (t + run / 2)
        rem[j] -= run
        t += run
    return float(np.sum(w * (busy / p + p / 2)))


def fs_lower_bound(instance: Instance) -> float:
    """A lower bound of the MAS-FS optimum: for each stage ``s`` the one-machine bound with
    heads ``r_j + sum of p_j before s`` plus the weighted tails ``sum of p_j after s``; the best
    of the three (every schedule's stage-``s`` completions are a one-machine schedule with
    those heads, and ``C_j3 >= C_js + tail``)."""
    r, p, w = instance.release, instance.proc, instance.weight
    bounds = []
    for s in range(3):
        head = r + p[:, :s].sum(axis=1)
        tail = p[:, s + 1:].sum(axis=1)
        bounds.append(_mean_busy_bound(head, p[:, s], w) + float(np.sum(w * tail)))
    return max(bounds)


def jd_lower_bound(instance: Instance, machines: int = len(ROLES)) -> float:
    """A lower bound of the MAS-JD optimum, ``P3|r_j|sum w_j T_j``, from a weighted
    completion-time relaxation (valid for every schedule, online or offline).

    Validity. Take any feasible schedule and any job set ``S``.

    1. ``T_j >= C_j - d_j`` and ``T_j >= 0``, and ``C_j >= r_j + p_j``, so
       ``sum_j w_j T_j >= sum_{j in S} w_j (C_j - d_j) + sum_{j not in S} w_j max(0, r_j + p_j - d_j)``.
    2. Drop the jobs outside ``S``: the restricted schedule is still feasible for ``S``
       and has the same ``C_j``, so any lower bound of ``min sum_{j in S} w_j C_j`` on
       three machines applies.
    3. Fast single machine (Chekuri, Motwani, Natarajan and Stein, SIAM J. Comput. 31(1),
       2001): in a three-machine schedule every job runs at rate 1 in one piece, so its
       mean busy time is ``M_j = C_j - p_j / 2`` and the total processing rate is at most
       3. That is a preemptive schedule of work ``p_j`` on one machine of speed 3 (time
       ``p_j / 3``) with the same mean busy times; Goemans' theorem
       (``_mean_busy_bound``: preemptive largest ``w_j / p_j`` first minimises
       ``sum w_j M_j`` over every schedule with rate at most the capacity) bounds
       ``sum w_j M_j`` from below. So ``sum_{j in S} w_j C_j >= MBT_3(S) + sum_{j in S} w_j p_j / 2``.

    The bound is the best of step 1 over a family of sets: the prefixes of the jobs
    ordered by due date, by ``d_j - p_j`` and by ``d_j - r_j - p_j`` (the jobs most likely
    late first), and the empty set (the release bound alone). Any family is valid; these
    are cheap (``O(N^2 log N)``) and close most of the gap on the test splits.
    """
    r, p, d, w = (np.asarray(x, dtype=np.float64) for x in (instance.release, instance.proc, instance.due, instance.weight))
    alone = w * np.maximum(0.0, r + p - d)  # step 1 for a job outside S
    best = float(alone.sum())
    for key in (d, d - p, d - r - p):
        order = np.argsort(key, kind="stable")
        for size in range(1, order.size + 1):
            s = order[:size]
            fast = _mean_busy_bound(r[s], p[s] / machines, w[s]) - float(np.sum(w[s] * p[s])) / (2 * machines)
            completion = fast + float(np.sum(w[s] * p[s])) / 2
            best = max(best, completion - float(np.sum(w[s] * d[s])) + float(alone.sum() - alone[s].sum()))
    return best


# -- the cache of the canonical test splits ---------------------------------------------

FIELDS = ("machine", "start", "objective", "model_objective", "bound", "slack", "status", "wall_time")


def cache_path(benchmark: str) -> Path:
    """``relic_envs/data/<benchmark>/cpsat_test.npz``."""
    _check_name(benchmark)
    return reference_path(benchmark, CACHE_NAME)


class OptimumCache(TestSplitCache):
    """CP-SAT results on a benchmark's canonical test splits: ``results[regime]`` holds one
    array per :class:`CPSATResult` field, instances in split order (``test50``, ``test80``);
    ``meta``: time_limit_s, workers, ortools version, time_scale, hint."""


def write_cache(
    benchmark: str,
    *,
    time_limit: float = DEFAULT_TIME_LIMIT,
    workers: int = DEFAULT_WORKERS,
    hint: str | None = None,
    path: Path | None = None,
    progress: bool = True,
) -> OptimumCache:
    """Solve every canonical test instance and store the results (``relic-baselines optimum --write``)."""
    meta = write_meta(benchmark, time_limit, workers, hint, time_scale=TIME_SCALE)
    return write_test_cache(OptimumCache, path or cache_path(benchmark), benchmark,
                            lambda inst: solve_cpsat(benchmark, inst, time_limit=time_limit, workers=workers, hint=hint),
                            FIELDS, meta, progress)


def load_cache(benchmark: str, path: Path | None = None) -> OptimumCache | None:
    """The cached CP-SAT results of a benchmark's test splits, or ``None`` when absent."""
    return load_cache_as(OptimumCache, path or cache_path(benchmark))


def summary(benchmark: str, cache: OptimumCache) -> str:
    """One line per test size: mean best, mean bound, status counts, settings."""
    return cpsat_summary(benchmark, cache)


if __name__ == "__main__":  # python -m baselines.mas.cpsat --write mas_jd [--time-limit 10 --workers 2 --hint atc]
    reference_main("CP-SAT optimum references of the MAS test splits", MAS, write_cache,
                   lambda name: cached_summary(name, load_cache, summary, INSTALL_HINT),
                   time_limit=DEFAULT_TIME_LIMIT, workers=DEFAULT_WORKERS, hint=True)
