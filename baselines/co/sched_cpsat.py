"""CP-SAT references for FJAGV and MRCPS (``pip install 'relic-envs[solvers]'``).

**What the models capture.** Both are offline interval models of the benchmark's own
physics (``relic_envs.co.{fjagv,mrcps}.simulator``) *without* its non-delay dispatching:
a solver schedule may leave a machine, AGV or worker idle while work waits, so its
schedules form a superset of the episode's. Their optimum is therefore a lower bound of
the best any team can reach in the env.

- **MRCPS** (:func:`mrcps_model`, exact): per task a start and end, per qualified worker
  an optional interval of the effective duration ``a_i / (0.7 + 0.15 s)``, exactly one
  present, ``no_overlap`` per worker, ``start_i >= end_j`` for every precedence arc;
  ``C_p >= end_i`` over the project's tasks, ``T_p >= C_p - d_p``, ``T_p >= 0``; minimise
  ``0.25 max_p C_p + sum w_p T_p + 0.01 sum kappa_w a_eff``. Time unit ``1/391``: the
  three effective durations ``20 a / 17``, ``a`` and ``20 a / 23`` are then the exact
  integers ``460 a``, ``391 a``, ``340 a``.
- **FJAGV exact** (:func:`fjagv_model` with ``exact=True``; tiny instances only): per
  operation optional intervals on its eligible machines (``no_overlap`` per machine); a
  transport when the operation's machine differs from where its material is (the depot
  for a first operation), with loaded time from the machine pair; per AGV a circuit
  (``add_circuit``) through the transports it serves from its start at the depot, each
  arc adding the deadhead from the previous drop to the next pickup; departure
  ``>= ready`` (predecessor's end) and ``>=`` the AGV's previous delivery, delivery
  ``= departure + deadhead + loaded``, start ``>=`` delivery (or the predecessor's end when
  no transport is needed); exact objective ``C_max + 0.2 sum w_j T_j + 0.02 D_AGV``.
- **FJAGV relaxed** (``exact=False``; the test splits, where a circuit over 300-600
  transports per AGV is too large): the same without deadhead, the loaded legs as
  optional intervals in a ``cumulative`` of capacity ``n_agvs``. Every env schedule is
  feasible in it (each AGV's loaded legs are disjoint) at a cost at least as low (no
  deadhead in time or cost), so its **proven bound is a valid lower bound** of the
  exact optimum; its solution is not a schedule of the real problem and is repaired
  (below).

**Integer time, rounded towards a lower cost** (so the model's bound is a valid bound):
FJAGV times in units of ``1/1000`` with travel times rounded down, due dates up;
MRCPS due dates up (in ``1/391``) and the labor coefficients down (scale :data:`MRCPS_SCALE`).

**Recomputed objective.** Every reported ``objective`` is the simulator's cost function
(``simulator.cost``) of a feasible schedule of the real problem with the true data:
MRCPS the solver's workers and starts (``baselines.co.sched_mrcps.check_schedule`` holds);
FJAGV exact: the solver's machines, machine orders, transport order and AGVs re-timed
semi-actively (:func:`retime`) with the true travel times (generally not reachable by the
non-delay episode, so not replayed through it); FJAGV relaxed: its solution is not a
schedule of the real problem, so it is *played through the episode* twice
(:func:`replay_fjagv`: the model's machines with its start and departure times as the
sequencing and dispatching priorities; and the model's machines with the hint rule's
sequencing and dispatching), and the better episode's objective is reported. ``model_objective`` and ``bound`` are the model's (divided back);
``status`` is the model's (``optimal`` / ``feasible``).

**Search.** The test splits are solved from a complete hint, the schedule of a classical
row (:data:`HINTS`; the hint changes the search, never the model), with CP-SAT's presolve
off (on the shared 2-core machine it alone outlasted a 15 s limit at 200 jobs / tasks on
one thread), one thread, ``random_seed = 0``, a wall-clock limit per instance: what it
reaches depends on the CPU time it gets.

**Caches** ``relic_envs/data/{fjagv,mrcps}/cpsat_test.npz``, the MAS caches' layout
(``meta`` JSON plus ``<regime>.<field>`` arrays in split order).
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
    load_cache_as,
    machine_note,
    reference_main,
    write_meta,
    write_test_cache,
)
from relic_envs.co.fjagv import simulator as fsim
from relic_envs.co.fjagv.generator import FJAGVInstance
from relic_envs.co.mrcps import simulator as msim
from relic_envs.co.mrcps.generator import MRCPSInstance
from relic_envs.core.references import reference_path
from relic_envs.errors import InvalidConfig

BENCHMARKS = ("fjagv", "mrcps")
FJAGV_SCALE = 1000  # time units per unit of FJAGV time
MRCPS_UNIT = 391  # 17 * 23: MRCPS effective durations are integers in 1/391
MRCPS_SCALE = 100  # extra objective scale for the MRCPS labor coefficients
DEFAULT_TIME_LIMIT = 15.0
DEFAULT_WORKERS = 1
CACHE_NAME = "cpsat_test.npz"
INSTALL_HINT = "pip install 'relic-envs[solvers]' (OR-Tools CP-SAT), then relic-baselines optimum --write"
HINTS = {"fjagv": "spt-atc-nearest", "mrcps": "par-mslk-speed"}  # the classical row whose schedule is the hint


@dataclasses.dataclass(frozen=True)
class SchedResult:
    """CP-SAT's answer on one instance (module doc)."""

    machine: np.ndarray  # FJAGV (N,) machine per operation; MRCPS (N,) worker per task
    start: np.ndarray  # (N,) start times of the recomputed schedule
    travel: float  # FJAGV: D_AGV of the recomputed schedule (with start and machine, its cost); MRCPS: 0
    objective: float  # the simulator's cost of the recomputed schedule
    model_objective: float  # the model's objective, divided back
    bound: float  # CP-SAT's proven lower bound, divided back (valid for the real problem)
    status: str  # "optimal" / "feasible" (of the model)
    exact: bool  # FJAGV: exact model (False: the relaxation); MRCPS: always True
    wall_time: float


def _solve(m, time_limit: float, workers: int, presolve: bool = True):
    cp_model = _cp_model()
    if not time_limit > 0 or workers < 1:
        raise InvalidConfig(f"need time_limit > 0 and workers >= 1, got {time_limit}, {workers}")
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = 0
    solver.parameters.cp_model_presolve = presolve
    solver.parameters.hint_conflict_limit = 100_000  # follow a (feasible) hint to its end before searching
    start = time.perf_counter()
    status = solver.solve(m)
    wall = time.perf_counter() - start
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise RuntimeError(f"CP-SAT found no solution within {time_limit}s (status {solver.status_name(status)})")
    return solver, "optimal" if status == cp_model.OPTIMAL else "feasible", wall


# -- MRCPS ---------------------------------------------------------------------------------
def mrcps_durations(instance: MRCPSInstance) -> np.ndarray:
    """``(N, W)`` int64 effective durations in units of ``1/391`` (0 where unqualified)."""
    level = instance.level[:, instance.skill].T  # (N, W)
    per_level = np.array([0, 460, 391, 340])  # 391 * 20 / (14 + 3 s)
    return instance.duration[:, None] * per_level[level]


def mrcps_model(instance: MRCPSInstance, hint=None):
    """The MRCPS model (module doc); ``hint`` = (worker, start) of a schedule. Returns (model, read, divisor)."""
    cp_model = _cp_model()
    m = cp_model.CpModel()
    dur = mrcps_durations(instance)
    n, horizon = instance.n_tasks, int(dur.max(axis=1).sum())
    start = [m.new_int_var(0, horizon, f"s{i}") for i in range(n)]
    end = [m.new_int_var(0, horizon, f"e{i}") for i in range(n)]
    pres: dict[tuple[int, int], object] = {}
    per_worker: list[list] = [[] for _ in range(instance.n_workers)]
    labor = []
    for i in range(n):
        for w in np.flatnonzero(dur[i]):
            x = pres[i, int(w)] = m.new_bool_var(f"x{i}_{w}")
            per_worker[w].append(m.new_optional_interval_var(start[i], int(dur[i, w]), end[i], x, f"iv{i}_{w}"))
            # 0.01 kappa a_eff, times 4 * 391 * MRCPS_SCALE, rounded down
            labor.append(int(np.floor(4 * MRCPS_SCALE * 0.01 * float(instance.cost[w]) * dur[i, w])) * x)
        m.add_exactly_one(pres[i, int(w)] for w in np.flatnonzero(dur[i]))
    for ivs in per_worker:
        m.add_no_overlap(ivs)
    for i, j in zip(*np.nonzero(instance.pred)):
        m.add(start[i] >= end[j])
    cmax = m.new_int_var(0, horizon, "cmax")
    tardy, cs, ts = [], [], []
    due = np.ceil(instance.due * MRCPS_UNIT).astype(np.int64)
    for p in range(instance.n_projects):
        c = m.new_int_var(0, horizon, f"c{p}")
        for i in np.flatnonzero(instance.project == p):
            m.add(c >= end[i])
        m.add(cmax >= c)
        t = m.new_int_var(0, horizon, f"t{p}")
        m.add(t >= c - int(due[p]))
        tardy.append(int(instance.weight[p]) * t)
        cs.append(c)
        ts.append(t)
    # 4 * 391 * cost = cmax_u + 4 sum w T_u + 0.04 sum kappa d_u (then times MRCPS_SCALE)
    m.minimize(MRCPS_SCALE * cmax + 4 * MRCPS_SCALE * sum(tardy) + sum(labor))
    if hint is not None:  # complete: starts, ends, presences, project ends and tardiness
        worker, begin = hint
        s_u = np.rint(np.asarray(begin) * MRCPS_UNIT).astype(np.int64)  # non-delay starts are multiples of 1/391
        e_u = s_u + dur[np.arange(n), worker]
        for i in range(n):
            m.add_hint(start[i], int(s_u[i]))
            m.add_hint(end[i], int(e_u[i]))
        for (i, w), x in pres.items():
            m.add_hint(x, bool(w == int(worker[i])))
        c_u = np.array([e_u[instance.project == p].max() for p in range(instance.n_projects)])
        m.add_hint(cmax, int(c_u.max()))
        for c, t, value, d in zip(cs, ts, c_u, due):
            m.add_hint(c, int(value))
            m.add_hint(t, int(max(value - d, 0)))

    def read(solver):
        worker = np.array([next(w for (ii, w), x in pres.items() if ii == i and solver.boolean_value(x)) for i in range(n)])
        return worker, np.array([solver.value(s) for s in start], dtype=float) / MRCPS_UNIT

    return m, read, 4 * MRCPS_UNIT * MRCPS_SCALE


def solve_mrcps(instance: MRCPSInstance, *, time_limit: float = DEFAULT_TIME_LIMIT, workers: int = DEFAULT_WORKERS,
                hint: str | None = None) -> SchedResult:
    """Solve one MRCPS instance (module doc); ``hint`` names a serial or parallel row of
    ``baselines.co.sched_mrcps`` whose schedule starts the search."""
    from baselines.co.sched_mrcps import check_schedule

    start_hint = _mrcps_hint(instance, hint) if hint else None
    m, read, div = mrcps_model(instance, start_hint)
    # On a loaded machine the presolve can outlast a 15 s limit at 200 tasks on one thread: solve without it.
    solver, status, wall = _solve(m, time_limit, workers, presolve=False)
    worker, start = read(solver)
    check_schedule(instance, worker, start)
    return SchedResult(worker, start, 0.0, msim.cost(instance, worker, start), solver.objective_value / div,
                       solver.best_objective_bound / div, status, True, wall)


def _mrcps_hint(instance: MRCPSInstance, method: str):
    from baselines.co import sched_mrcps as M

    if method.startswith("ser-"):
        sched = M.run(instance, method)[1]
        return sched.worker, sched.start
    from baselines.co.sched_play import play

    scheme, rule, worker_rule = method.split("-")
    ep, _ = play("mrcps", instance, M.chooser(instance, M.priority_key(instance, rule), np.full(instance.n_tasks, worker_rule)))
    return ep.state.worker, ep.state.start


# -- FJAGV ---------------------------------------------------------------------------------
def _travel_units(instance: FJAGVInstance) -> np.ndarray:
    return np.floor(instance.travel() * FJAGV_SCALE).astype(np.int64)


def fjagv_model(instance: FJAGVInstance, exact: bool, hint=None):
    """The FJAGV model (module doc); ``hint`` = (machine, start, delivered) of an episode's
    schedule (relaxed model only). Returns (model, read, divisor)."""
    cp_model = _cp_model()
    m = cp_model.CpModel()
    pt, tt = instance.op_times() * FJAGV_SCALE, _travel_units(instance)
    n, k, nm, g = instance.n_operations, instance.n_ops_per_job, instance.n_machines, int(instance.n_agvs)
    horizon = int(pt.max(axis=1).sum() + n * 2 * tt.max())
    S = [m.new_int_var(0, horizon, f"S{i}") for i in range(n)]
    E = [m.new_int_var(0, horizon, f"E{i}") for i in range(n)]
    x = {(i, mm): m.new_bool_var(f"x{i}_{mm}") for i in range(n) for mm in np.flatnonzero(pt[i])}
    on_machine: list[list] = [[] for _ in range(nm)]
    for (i, mm), lit in x.items():
        on_machine[mm].append(m.new_optional_interval_var(S[i], int(pt[i, mm]), E[i], lit, f"op{i}_{mm}"))
    for i in range(n):
        m.add_exactly_one(x[i, mm] for mm in np.flatnonzero(pt[i]))
    for ivs in on_machine:
        m.add_no_overlap(ivs)

    def src_lits(i):  # (location, literal) of where op i's material is: the depot or the previous op's machine
        return [(0, None)] if i % k == 0 else [(mm + 1, x[i - 1, mm]) for mm in np.flatnonzero(pt[i - 1])]

    need, loaded, depart, deliver, zs = {}, {}, {}, {}, {}
    travel_terms = []
    for i in range(n):
        terms, same = [], []
        for loc, lit in src_lits(i):
            for mm in np.flatnonzero(pt[i]):
                if lit is None:
                    z = x[i, mm]
                else:
                    z = m.new_bool_var(f"z{i}_{loc}_{mm}")
                    m.add_bool_and([lit, x[i, mm]]).only_enforce_if(z)
                    m.add_bool_or([lit.Not(), x[i, mm].Not()]).only_enforce_if(z.Not())
                    zs[i, loc, mm] = z
                if loc == mm + 1:
                    same.append(z)
                else:
                    terms.append(int(tt[loc, mm + 1]) * z)
        need[i] = m.new_bool_var(f"need{i}")
        m.add(need[i] + sum(same) == 1)
        loaded[i] = m.new_int_var(0, int(tt.max()), f"L{i}")
        m.add(loaded[i] == sum(terms))
        travel_terms.append(loaded[i])
        depart[i] = m.new_int_var(0, horizon, f"dep{i}")
        deliver[i] = m.new_int_var(0, horizon, f"del{i}")
        if i % k:
            m.add(depart[i] >= E[i - 1])
            m.add(S[i] >= E[i - 1])
        m.add(S[i] >= deliver[i]).only_enforce_if(need[i])
    agv_of = None
    if exact:
        agv_of = _agv_circuits(m, instance, tt, x, need, depart, deliver, loaded, travel_terms, horizon, src_lits)
    else:
        legs = [m.new_optional_interval_var(depart[i], loaded[i], deliver[i], need[i], f"leg{i}") for i in range(n)]
        m.add_cumulative(legs, [1] * n, g)
    cmax = m.new_int_var(0, horizon, "cmax")
    tardy, tvars = [], []
    due = np.ceil(instance.due * FJAGV_SCALE).astype(np.int64)
    for j in range(instance.n_jobs):
        last = E[j * k + k - 1]
        m.add(cmax >= last)
        t = m.new_int_var(0, horizon, f"T{j}")
        m.add(t >= last - int(due[j]))
        tardy.append(int(instance.weight[j]) * t)
        tvars.append(t)
    m.minimize(50 * cmax + 10 * sum(tardy) + sum(travel_terms))  # 50 * cost, in units
    if hint is not None:
        ends = _hint_fjagv(m, instance, hint, pt, tt, S, E, x, need, loaded, depart, deliver, zs)
        last = ends.reshape(instance.n_jobs, k)[:, -1]
        m.add_hint(cmax, int(last.max()))
        for t, value in zip(tvars, np.maximum(last - due, 0)):
            m.add_hint(t, int(value))

    def read(solver):
        machine = np.array([next(q for q in np.flatnonzero(pt[i]) if solver.boolean_value(x[i, q])) for i in range(n)])
        starts = np.array([solver.value(s) for s in S], dtype=float)
        departs = np.array([solver.value(depart[i]) if solver.boolean_value(need[i]) else -1 for i in range(n)], dtype=float)
        agv = None if agv_of is None else np.array([agv_of(solver, i) for i in range(n)])
        return machine, starts, departs, agv

    return m, read, 50 * FJAGV_SCALE


def _hint_fjagv(m, instance, hint, pt, tt, S, E, x, need, loaded, depart, deliver, zs) -> np.ndarray:
    """A complete hint from a schedule of the episode ((machine, start, delivered), true
    times). Times are rounded up, which keeps it feasible in the relaxation: ``ceil``
    preserves every ``>=`` between true times, and a loaded leg ``[ceil(D) - floor(L),
    ceil(D))`` starts no earlier than its true start ``D - L``, hence after the previous
    delivery of its AGV. Returns the hinted ends."""
    machine, start, delivered = hint
    k = instance.n_ops_per_job
    ends = np.zeros(instance.n_operations, dtype=np.int64)
    for (i, loc, mm), z in zs.items():
        m.add_hint(z, bool(loc == int(machine[i - 1]) + 1 and mm == int(machine[i])))
    for i in range(instance.n_operations):
        mm = int(machine[i])
        for q in np.flatnonzero(pt[i]):
            m.add_hint(x[i, q], bool(q == mm))
        s = int(np.ceil(start[i] * FJAGV_SCALE))
        m.add_hint(S[i], s)
        m.add_hint(E[i], s + int(pt[i, mm]))
        ends[i] = s + int(pt[i, mm])
        src = 0 if i % k == 0 else int(machine[i - 1]) + 1
        ready = 0 if i % k == 0 else int(np.ceil(start[i - 1] * FJAGV_SCALE)) + int(pt[i - 1, machine[i - 1]])
        trip = src != mm + 1
        leg = int(tt[src, mm + 1]) if trip else 0
        arrive = int(np.ceil(delivered[i] * FJAGV_SCALE)) if trip else ready
        m.add_hint(need[i], trip)
        m.add_hint(loaded[i], leg)
        m.add_hint(deliver[i], arrive)
        m.add_hint(depart[i], arrive - leg)
    return ends


def _agv_circuits(m, instance, tt, x, need, depart, deliver, loaded, travel_terms, horizon, src_lits):
    """Per AGV a circuit through the transports it serves, with deadhead (module doc)."""
    n, g = instance.n_operations, int(instance.n_agvs)
    pt = instance.op_times()
    serve = {(i, a): m.new_bool_var(f"y{i}_{a}") for i in range(n) for a in range(g)}
    dead = [m.new_int_var(0, int(tt.max()), f"D{i}") for i in range(n)]
    for i in range(n):
        m.add(sum(serve[i, a] for a in range(g)) == need[i])
        m.add(deliver[i] == depart[i] + dead[i] + loaded[i]).only_enforce_if(need[i])
        m.add(dead[i] == 0).only_enforce_if(need[i].Not())
        travel_terms.append(dead[i])

    def drop_lits(i):
        return [(mm + 1, x[i, mm]) for mm in np.flatnonzero(pt[i])]

    for a in range(g):
        arcs = [(0, 0, m.new_bool_var(f"idle{a}"))]
        for i in range(n):
            arcs.append((i + 1, i + 1, serve[i, a].Not()))
            first = m.new_bool_var(f"first{a}_{i}")
            arcs.append((0, i + 1, first))
            arcs.append((i + 1, 0, m.new_bool_var(f"last{a}_{i}")))
            for loc, lit in src_lits(i):  # from the depot to the pickup
                m.add(dead[i] >= int(tt[0, loc])).only_enforce_if([first] + ([lit] if lit is not None else []))
            for j in range(n):
                if j == i:
                    continue
                arc = m.new_bool_var(f"arc{a}_{i}_{j}")
                arcs.append((i + 1, j + 1, arc))
                m.add(depart[j] >= deliver[i]).only_enforce_if(arc)
                for drop, dlit in drop_lits(i):
                    for loc, lit in src_lits(j):
                        m.add(dead[j] >= int(tt[drop, loc])).only_enforce_if([arc, dlit] + ([lit] if lit is not None else []))
        m.add_circuit(arcs)

    def agv_of(solver, i):
        return next((a for a in range(g) if solver.boolean_value(serve[i, a])), -1)

    return agv_of


def retime(instance: FJAGVInstance, machine: np.ndarray, order_keys: tuple[np.ndarray, np.ndarray],
           agv: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """Semi-active true timing of a schedule given by its machines, the model's operation
    starts and transport departures (``order_keys``: they fix every machine's and AGV's
    order) and optionally each transport's AGV; (start, finish, D_AGV). A transport
    departs when its material is ready and its AGV free, drives empty to the pickup,
    then loaded to the machine; an operation starts when delivered and its machine free."""
    starts, departs = order_keys
    n, k = instance.n_operations, instance.n_ops_per_job
    pt, tt = instance.op_times(), instance.travel()
    src = np.array([0 if i % k == 0 else int(machine[i - 1]) + 1 for i in range(n)])
    trip = src != machine + 1
    events = sorted([(departs[i], 0, i) for i in range(n) if trip[i]] + [(starts[i], 1, i) for i in range(n)])
    g = int(instance.n_agvs)
    agv_free, agv_pos = np.zeros(g), np.zeros(g, dtype=np.int64)
    machine_free = np.zeros(instance.n_machines)
    start, finish, delivered = np.full(n, -1.0), np.full(n, -1.0), np.full(n, -1.0)
    travel = 0.0
    for _, kind, i in events:
        ready = 0.0 if i % k == 0 else finish[i - 1]
        assert ready >= 0, "the model's order respects precedence"  # internal invariant
        if kind == 0:
            dst = int(machine[i]) + 1
            options = [(max(ready, agv_free[a]) + tt[agv_pos[a], src[i]] + tt[src[i], dst], a) for a in range(g)]
            arrive, a = options[int(agv[i])] if agv is not None else min(options)
            travel += tt[agv_pos[a], src[i]] + tt[src[i], dst]
            agv_free[a], agv_pos[a], delivered[i] = arrive, dst, arrive
        else:
            avail = delivered[i] if trip[i] else ready
            assert avail >= 0, "the model's order respects the transports"  # internal invariant
            start[i] = max(avail, machine_free[machine[i]])
            finish[i] = start[i] + pt[i, machine[i]]
            machine_free[machine[i]] = finish[i]
    return start, finish, float(travel)


def solve_fjagv(instance: FJAGVInstance, *, exact: bool = False, time_limit: float = DEFAULT_TIME_LIMIT,
                workers: int = DEFAULT_WORKERS, hint: str | None = None) -> SchedResult:
    """Solve one FJAGV instance (module doc); ``hint`` names a rule of ``baselines.co.sched_fjagv``."""
    start_hint = None
    if hint:
        from baselines.co.sched_fjagv import chooser
        from baselines.co.sched_play import play

        ep, _ = play("fjagv", instance, chooser(instance, hint))
        start_hint = ep.state.machine, ep.state.start, ep.state.delivered
    m, read, div = fjagv_model(instance, exact, start_hint)
    # At 200 jobs the presolve alone outlasts a 15 s limit on one thread: the relaxation is solved without it.
    solver, status, wall = _solve(m, time_limit, workers, presolve=exact)
    machine, starts, departs, agv = read(solver)
    if exact:
        start, finish, travel = retime(instance, machine, (starts, departs), agv)
        objective = fsim.cost(instance, finish, travel)
    else:
        replays = [replay_fjagv(instance, machine, starts, departs, rule) for rule in (None, hint or "ef-spt-nearest")]
        episode = min(replays, key=lambda ep: ep.objective())
        machine, start, objective = episode.state.machine.copy(), episode.state.start.copy(), episode.objective()
        travel = episode.state.d_agv
    return SchedResult(machine, start, travel, objective, solver.objective_value / div, solver.best_objective_bound / div,
                       status, exact, wall)


def replay_fjagv(instance: FJAGVInstance, machine: np.ndarray, starts: np.ndarray, departs: np.ndarray,
                 rule: str | None = None):
    """The relaxed model's solution played through the episode: A takes the model's machine;
    B the waiting operation the model starts first and C the request the model departs
    first (ties: the nearest), or, with ``rule``, B and C as that rule of
    ``baselines.co.sched_fjagv`` (the model's routing only). Returns the finished episode."""
    from baselines.co.sched_fjagv import chooser
    from baselines.co.sched_play import pick, play

    follow = chooser(instance, rule) if rule else None

    def choose(state, d):
        if d.role == fsim.ROLE_A:
            return int(machine[state.about])
        if follow is not None:
            return follow(state, d)
        if d.role == fsim.ROLE_B:
            return pick(d.ids, starts[d.ids])
        return pick(d.ids, state.trip_times(state.about)[d.ids], departs[d.ids])

    return play("fjagv", instance, choose)[0]


def solve(benchmark: str, instance, **kw) -> SchedResult:
    _check_name(benchmark)
    return solve_fjagv(instance, **kw) if benchmark == "fjagv" else solve_mrcps(instance, **kw)


# -- a combinatorial FJAGV lower bound -------------------------------------------------------
def fjagv_lower_bound(instance: FJAGVInstance) -> float:
    """A lower bound of every FJAGV schedule's cost, the sum of one bound per term.

    With ``W_j`` job ``j``'s least machine time (the sum over its operations of the fastest
    eligible time) and ``r_j`` the least loaded travel from the depot to a machine eligible
    for its first operation (its material must get there before it starts):
    ``C_j >= r_j + W_j``; and ``sum w_j C_j >=`` the optimum of one machine of speed ``M``
    processing ``W_j / M`` per job (any schedule of the ``M`` machines runs on it, each
    job finishing no later; the optimum is WSPT, Smith 1956). So ``C_max >= max(sum W_j /
    M, max_j r_j + W_j)``, ``sum w_j T_j >= max(0, max(both sum bounds) - sum w_j d_j)``
    and ``D_AGV >= sum_j r_j`` (every job's first trip)."""
    proc, tt = instance.proc, instance.travel()
    work = np.where(proc > 0, proc, np.iinfo(np.int64).max).min(axis=2).sum(axis=1).astype(float)  # W_j
    first = np.where(proc[:, 0] > 0, tt[0, 1:][None, :], np.inf).min(axis=1)  # r_j
    w = instance.weight.astype(float)
    order = np.argsort(-w / work, kind="stable")  # WSPT
    fast = np.empty_like(work)
    fast[order] = np.cumsum(work[order]) / instance.n_machines
    weighted = max(float(w @ fast), float(w @ (first + work)))
    cmax = max(float(work.sum()) / instance.n_machines, float((first + work).max()))
    tardy = max(0.0, weighted - float(w @ instance.due))
    return cmax + fsim.TARDINESS_WEIGHT * tardy + fsim.TRAVEL_WEIGHT * float(first.sum())


# -- the caches of the canonical test splits -------------------------------------------------
FIELDS = ("machine", "start", "travel", "objective", "model_objective", "bound", "status", "exact", "wall_time")


def _check_name(benchmark: str) -> None:
    if benchmark not in BENCHMARKS:
        raise InvalidConfig(f"scheduling CP-SAT references exist for benchmark in {list(BENCHMARKS)}, got {benchmark!r}")


def cache_path(benchmark: str) -> Path:
    """``relic_envs/data/<benchmark>/cpsat_test.npz``."""
    _check_name(benchmark)
    return reference_path(benchmark, CACHE_NAME)


class SchedCache(TestSplitCache):
    """CP-SAT results on a benchmark's test splits: ``results[regime][field]``, split order."""


def write_cache(benchmark: str, *, time_limit: float = DEFAULT_TIME_LIMIT, workers: int = DEFAULT_WORKERS,
                hint: str | None = "default", path: Path | None = None, progress: bool = True) -> SchedCache:
    """Solve every canonical test instance and store the results (``relic-baselines optimum --write``).
    ``hint="default"`` uses :data:`HINTS`; ``None`` starts without a hint."""
    _check_name(benchmark)
    hint = HINTS[benchmark] if hint == "default" else hint
    meta = write_meta(  # before solving: the machine's load at the start
        benchmark, time_limit, workers, hint,
        model="exact interval model" if benchmark == "mrcps" else "relaxation: no deadhead, AGVs as a cumulative (bound valid)",
        time_unit=1 / (MRCPS_UNIT if benchmark == "mrcps" else FJAGV_SCALE), machine=machine_note())
    return write_test_cache(SchedCache, path or cache_path(benchmark), benchmark,
                            lambda inst: solve(benchmark, inst, time_limit=time_limit, workers=workers, hint=hint),
                            FIELDS, meta, progress)


def load_cache(benchmark: str, path: Path | None = None) -> SchedCache | None:
    """The cached results of a benchmark's test splits, or ``None`` when absent."""
    return load_cache_as(SchedCache, path or cache_path(benchmark))


def summary(benchmark: str, cache: SchedCache) -> str:
    """One line per test size: mean best, mean bound (and which model), status counts, settings."""
    return cpsat_summary(benchmark, cache, note=f"; {cache.meta['model']}")


if __name__ == "__main__":  # python -m baselines.co.sched_cpsat --write fjagv mrcps [--time-limit 15 --workers 1]
    reference_main("CP-SAT references of the FJAGV and MRCPS test splits", BENCHMARKS, write_cache,
                   lambda name: cached_summary(name, load_cache, summary, INSTALL_HINT),
                   time_limit=DEFAULT_TIME_LIMIT, workers=DEFAULT_WORKERS)
