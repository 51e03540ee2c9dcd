"""FJAGV cost (Eq. fjagv) and the event-driven constructive state.

``C = C_max + 0.2 sum_j w_j max(C_j - d_j, 0) + 0.02 D_AGV`` (minimised; ``score =
-C``): ``C_j`` is the completion of job ``j``'s last operation, ``C_max = max_j C_j``,
``D_AGV`` the AGVs' total travel, loaded plus deadhead, in travel-time units (5 x
Euclidean distance).

**Material flow.** A job's material starts at the depot. Operation ``k`` of a job is
processed at the machine A assigns; before it can start there, the material must be
carried from where it is (the depot for ``k = 0``, the machine of operation ``k - 1``
otherwise) by an AGV, as one *transport request* whose id is the operation's id.
When both ends are the same machine no transport is needed: the operation is delivered
when its predecessor completes. A job ends at the machine of its last operation (no
trip back to the depot). An AGV carries one load at a time: it drives empty from where
it stands to the pickup (deadhead), then loaded to the machine; between requests it
waits where it delivered its last load (both start at the depot).

**Events.** At each event time ``t`` (0 first; then every operation completion and
every delivery) the evaluator asks, one decision per step, in this order:

1. **A**, for every precedence-ready operation not yet assigned (lowest id first): an
   eligible machine. This creates its transport request (or delivers it at once).
2. **C**, for every free AGV (lowest id first) while requests are pending: a pending
   request; the AGV leaves now and delivers at ``t + deadhead + loaded``.
3. **B**, for every free machine with delivered operations waiting (lowest id first):
   the operation to process next; it runs without preemption.

No role may skip (B.3: the identifier "must belong to the supplied feasible ...
array"): the schedule is non-delay. When no decision is pending, time jumps to the
next completion or delivery; the construction ends when every operation has started.
Invalid answers are repaired to the cheapest candidate (ties: the lowest id): A the
earliest estimated finish ``machine_ready_time + processing_time``, B the shortest
processing time, C the shortest travel time. Mid-episode the objective is the cost of
what is committed: the latest completion among started operations, the tardiness of
jobs whose last operation has started, and the travel so far.
"""

from __future__ import annotations

import math

import numpy as np
from gymnasium import spaces

from relic_envs.co._construct import Decision, cheapest
from relic_envs.co.fjagv.generator import FJAGVInstance

TARDINESS_WEIGHT = 0.2
TRAVEL_WEIGHT = 0.02
ROLE_A, ROLE_B, ROLE_C = 0, 1, 2


def cost(instance: FJAGVInstance, finish: np.ndarray, travel: float) -> float:
    """``C_FJAGV`` from the completion time of every operation (id ``K j + k``) and ``D_AGV``.

    Recomputed with Python floats (the tests' reference)."""
    k = instance.n_ops_per_job
    done = [max(float(f) for f in finish[j * k:(j + 1) * k]) for j in range(instance.n_jobs)]
    tardy = math.fsum(float(w) * max(c - float(d), 0.0) for c, d, w in zip(done, instance.due, instance.weight))
    return max(done) + TARDINESS_WEIGHT * tardy + TRAVEL_WEIGHT * travel


def time_bound(instance: FJAGVInstance) -> float:
    """No non-delay schedule ends later: some operation or trip is always under way (the
    docs say why), so the makespan is at most the sum of their longest durations."""
    longest_trip = 2 * float(instance.travel().max())
    return float(instance.op_times().max(axis=1).sum()) + instance.n_operations * longest_trip


def travel_bound(instance: FJAGVInstance) -> float:
    return instance.n_operations * 2 * float(instance.travel().max())


def score_bounds(instance: FJAGVInstance) -> tuple[float, float]:
    t = time_bound(instance)
    tardy = float((instance.weight * np.maximum(t - instance.due, 0.0)).sum())
    return -(t + TARDINESS_WEIGHT * tardy + TRAVEL_WEIGHT * travel_bound(instance)), 0.0


def max_steps(instance: FJAGVInstance) -> int:
    """At most one A, one C and one B decision per operation."""
    return 3 * instance.n_operations


def state_space(instance: FJAGVInstance) -> spaces.Box:
    """Bounds of :meth:`State.state_vector`: ``t``, ``D_AGV``; per operation its machine
    (-1 if unassigned), delivery, start and finish times (-1 if not yet known); per
    AGV its location (0 depot, ``m + 1`` machine ``m``) and the time it is free again."""
    n, g, m = instance.n_operations, int(instance.n_agvs), instance.n_machines
    tb, db = time_bound(instance) * (1 + 1e-9), travel_bound(instance) * (1 + 1e-9)
    low = np.concatenate([[0, 0], np.full(4 * n, -1.0), np.zeros(2 * g)])
    high = np.concatenate([[tb, db], np.full(n, m - 1.0), np.full(3 * n, tb), np.full(g, float(m)), np.full(g, tb)])
    return spaces.Box(low.astype(np.float64), high.astype(np.float64), dtype=np.float64)


class State:
    """Machine assignments, transports and machine sequences under construction at time ``t``."""

    def __init__(self, instance: FJAGVInstance):
        self.instance = instance
        self.k = instance.n_ops_per_job
        self.n, self.m, self.g = instance.n_operations, instance.n_machines, int(instance.n_agvs)
        self.pt = instance.op_times()
        self.tt = instance.travel()
        self.first = np.arange(self.n) % self.k == 0
        self.t = 0.0
        self.d_agv = 0.0
        self.machine = np.full(self.n, -1, dtype=np.int64)
        self.ready_at = np.where(self.first, 0.0, -1.0)  # when the material is ready to move on
        self.needs_trip = np.zeros(self.n, dtype=bool)
        self.agv_of = np.full(self.n, -1, dtype=np.int64)
        self.delivered = np.full(self.n, -1.0)
        self.start = np.full(self.n, -1.0)
        self.finish = np.full(self.n, -1.0)
        self.machine_free_at = np.zeros(self.m)
        self.agv_pos = np.zeros(self.g, dtype=np.int64)
        self.agv_free_at = np.zeros(self.g)
        self.trips: list[tuple[int, int, float, int, int, int, float]] = []  # (agv, op, depart, from, pickup, to, arrive)
        self.finished = False
        self._pending: tuple[int, int] | None = None  # (role, the operation / AGV / machine it is about)
        self._advance()

    # -- what is pending now -----------------------------------------------------------
    def source(self, op: int) -> int:
        """Location of op's material before its transport: depot 0 or the previous operation's machine."""
        return 0 if self.first[op] else int(self.machine[op - 1]) + 1

    def unassigned_ready(self) -> np.ndarray:
        return np.flatnonzero((self.machine < 0) & (self.ready_at >= 0))

    def requests(self) -> np.ndarray:
        """Pending transport requests (operation ids), ascending."""
        return np.flatnonzero(self.needs_trip & (self.agv_of < 0))

    def queue(self, machine: int) -> np.ndarray:
        """Operations delivered to ``machine`` and waiting, ascending."""
        return np.flatnonzero((self.machine == machine) & (self.delivered >= 0) & (self.delivered <= self.t) & (self.start < 0))

    def machine_ready_times(self) -> np.ndarray:
        """``(M,)`` when each machine would be free: the end of its current operation (or ``t``)
        plus the processing times of the operations assigned to it and not started yet."""
        backlog = np.zeros(self.m)
        waiting = (self.machine >= 0) & (self.start < 0)
        np.add.at(backlog, self.machine[waiting], self.pt[waiting, self.machine[waiting]].astype(np.float64))
        return np.maximum(self.machine_free_at, self.t) + backlog

    def trip_times(self, agv: int) -> np.ndarray:
        """``(N,)`` deadhead plus loaded travel time if ``agv`` served each request (0 where none)."""
        out = np.zeros(self.n)
        req = self.requests()
        src = np.array([self.source(int(r)) for r in req], dtype=np.int64)
        out[req] = self.tt[self.agv_pos[agv], src] + self.tt[src, self.machine[req] + 1]
        return out

    def _find(self) -> tuple[int, int] | None:
        ready = self.unassigned_ready()
        if ready.size:
            return ROLE_A, int(ready[0])
        if self.requests().size:
            free = np.flatnonzero(self.agv_free_at <= self.t)
            if free.size:
                return ROLE_C, int(free[0])
        for mach in np.flatnonzero(self.machine_free_at <= self.t):
            if self.queue(int(mach)).size:
                return ROLE_B, int(mach)
        return None

    def _advance(self) -> None:
        while True:
            self._pending = self._find()
            if self._pending is not None:
                return
            if (self.start >= 0).all():
                self.finished = True
                return
            future = np.concatenate([self.machine_free_at, self.agv_free_at])
            future = future[future > self.t]
            assert future.size, "a non-delay schedule always has an operation or a trip under way"  # internal invariant
            self.t = float(future.min())
            # An operation becomes precedence-ready when its predecessor (id - 1, same job) completes.
            done = np.flatnonzero((self.finish >= 0) & (self.finish <= self.t))
            nxt = done[done % self.k != self.k - 1] + 1
            nxt = nxt[self.ready_at[nxt] < 0]
            self.ready_at[nxt] = self.finish[nxt - 1]

    @property
    def about(self) -> int:
        """The operation (A), machine (B) or AGV (C) the pending decision is about."""
        return self._pending[1] if self._pending else -1

    @property
    def role(self) -> int:
        return self._pending[0] if self._pending else -1

    # -- the construction ------------------------------------------------------------
    def decision(self) -> Decision | None:
        if self.finished:
            return None
        role, x = self._pending
        if role == ROLE_A:
            ids = np.flatnonzero(self.pt[x] > 0)
            return cheapest(ROLE_A, ids, self.machine_ready_times()[ids] + self.pt[x, ids], can_skip=False)
        if role == ROLE_C:
            ids = self.requests()
            return cheapest(ROLE_C, ids, self.trip_times(x)[ids], can_skip=False)
        ids = self.queue(x)
        return cheapest(ROLE_B, ids, self.pt[ids, x], can_skip=False)

    def apply(self, choice: int) -> None:
        role, x = self._pending
        if role == ROLE_A:
            op, mach = x, choice
            self.machine[op] = mach
            if self.source(op) == mach + 1:  # same machine as the previous operation: no trip
                self.delivered[op] = self.ready_at[op]
            else:
                self.needs_trip[op] = True
        elif role == ROLE_C:
            agv, op = x, choice
            src, dst = self.source(op), int(self.machine[op]) + 1
            empty, loaded = float(self.tt[self.agv_pos[agv], src]), float(self.tt[src, dst])
            arrive = self.t + empty + loaded
            self.trips.append((agv, op, self.t, int(self.agv_pos[agv]), src, dst, arrive))
            self.agv_of[op] = agv
            self.delivered[op] = arrive
            self.agv_free_at[agv] = arrive
            self.agv_pos[agv] = dst
            self.d_agv += empty + loaded
        else:
            mach, op = x, choice
            self.start[op] = self.t
            self.finish[op] = self.t + float(self.pt[op, mach])
            self.machine_free_at[mach] = self.finish[op]
        self._advance()

    def objective(self) -> float:
        inst = self.instance
        started = self.start >= 0
        cmax = float(self.finish[started].max()) if started.any() else 0.0
        last = np.flatnonzero((np.arange(self.n) % self.k == self.k - 1) & started)
        jobs = last // self.k
        tardy = math.fsum((inst.weight[jobs] * np.maximum(self.finish[last] - inst.due[jobs], 0.0)).tolist())
        return cmax + TARDINESS_WEIGHT * tardy + TRAVEL_WEIGHT * self.d_agv

    def counters(self) -> dict:
        return {"time": float(self.t), "trips": len(self.trips), "agv_travel": float(self.d_agv)}

    def state_vector(self) -> np.ndarray:
        head = [self.t, self.d_agv]
        body = [self.machine, self.delivered, self.start, self.finish, self.agv_pos, self.agv_free_at]
        return np.concatenate([head, *body]).astype(np.float64)
