"""MRCPS cost (Eq. mrcps) and the event-driven constructive state.

``C = 0.25 max_p C_p + sum_p w_p max(C_p - d_p, 0) + 0.01 C_labor`` (minimised;
``score = -C``), ``C_p = max_{i: p(i) = p} C_i``, ``C_labor = sum_i kappa_{w(i)}
a_eff(i, w(i))`` and ``a_eff(i, w) = a_i / (0.7 + 0.15 s_{w, c(i)})`` (Eq.
mrcps-duration). Tasks are non-preemptive and take one worker each.

**Events.** At the event time ``t`` (0 first) a task is *schedulable* when it has not
started, all its predecessors have completed (``C_j <= t``) and some free worker is
qualified for its skill. While one exists, three decisions commit one task:

1. **A** picks a project among those with a schedulable task;
2. **B** picks a schedulable task of that project;
3. **C** picks a free worker qualified for it (``s_{w, c(i)} > 0``); the task starts
   at ``t`` and the worker is busy until ``t + a_eff``.

No role may skip (B.3: "each function must return an identifier from its supplied
feasible array"), so the schedule is non-delay. When nothing is schedulable, time
jumps to the next completion; the construction ends once every task has started.

**Event times and rounding.** Completion times are float sums of effective durations
(``a / 0.85``, ``a / 1.15``, ...), so two completions that are equal in exact
arithmetic can land ``1e-14`` apart. They are one event: the next event time is the
largest running completion within ``EVENT_RTOL * max(1, m)`` of the earliest one ``m``
(:func:`next_event`), so every completion in that window is done (``finish <= t``
holds exactly) and every worker it frees is free at the event. Without this, which
non-delay schedule is built would depend on the rounding of the sums.
Each role is asked at every decision, even with a single candidate. Invalid answers
are repaired to the cheapest candidate (ties: the lowest id): A the earliest due
date, B the shortest nominal duration, C the shortest effective duration.
Mid-episode the objective is the cost of the tasks started so far (their completion
times are known at start).
"""

from __future__ import annotations

import math

import numpy as np
from gymnasium import spaces

from relic_envs.co._construct import SKIP, Decision, cheapest
from relic_envs.co.mrcps.generator import MRCPSInstance

MAKESPAN_WEIGHT = 0.25
LABOR_WEIGHT = 0.01
STAGE_A, STAGE_B, STAGE_C = 0, 1, 2


EVENT_RTOL = 1e-9  # relative window within which completions are one event (module docs)


def next_event(running: np.ndarray) -> float:
    """The next event time from the running tasks' completion times: the largest of
    those within ``EVENT_RTOL * max(1, m)`` of the earliest, ``m`` (module docs)."""
    m = float(running.min())
    return float(running[running <= m + EVENT_RTOL * max(1.0, abs(m))].max())


def speed(level: np.ndarray | int) -> np.ndarray | float:
    """The divisor of Eq. mrcps-duration, ``0.7 + 0.15 s``."""
    return 0.7 + 0.15 * level


def cost(instance: MRCPSInstance, worker: np.ndarray, start: np.ndarray) -> float:
    """``C_MRCPS`` of a schedule (worker and start time of every started task; ``-1``: not started).

    Recomputed from scratch with Python floats (the tests' reference)."""
    finish_by_project = [0.0] * instance.n_projects
    labor = []
    for i in range(instance.n_tasks):
        w = int(worker[i])
        if w < 0:
            continue
        a_eff = float(instance.duration[i]) / speed(int(instance.level[w, instance.skill[i]]))
        p = int(instance.project[i])
        finish_by_project[p] = max(finish_by_project[p], float(start[i]) + a_eff)
        labor.append(float(instance.cost[w]) * a_eff)
    tardy = math.fsum(float(instance.weight[p]) * max(c - float(instance.due[p]), 0.0) for p, c in enumerate(finish_by_project))
    return MAKESPAN_WEIGHT * max(finish_by_project) + tardy + LABOR_WEIGHT * math.fsum(labor)


def time_bound(instance: MRCPSInstance) -> float:
    """No non-delay schedule ends later: some task is always running (the docs say why),
    so the makespan is at most the sum of effective durations, each ``<= a_i / 0.85``."""
    return float(instance.duration.sum()) / speed(1)


def score_bounds(instance: MRCPSInstance) -> tuple[float, float]:
    t = time_bound(instance)
    tardy = float((instance.weight * np.maximum(t - instance.due, 0.0)).sum())
    return -(MAKESPAN_WEIGHT * t + tardy + LABOR_WEIGHT * float(instance.cost.max()) * t), 0.0


def max_steps(instance: MRCPSInstance) -> int:
    """Three decisions per task."""
    return 3 * instance.n_tasks


def state_space(instance: MRCPSInstance) -> spaces.Box:
    """Bounds of :meth:`State.state_vector`: stage (0..2), ``t``, the chosen project and
    task (-1 if none), then per task its worker (-1 if not started), start and finish
    (-1 if not started)."""
    n, tb = instance.n_tasks, time_bound(instance) * (1 + 1e-9)
    low = np.concatenate([[0, 0, -1, -1], np.full(3 * n, -1.0)])
    high = np.concatenate([[2, tb, instance.n_projects - 1, n - 1], np.full(n, instance.n_workers - 1.0), np.full(2 * n, tb)])
    return spaces.Box(low.astype(np.float64), high.astype(np.float64), dtype=np.float64)


class State:
    """The schedule under construction, at event time ``t``."""

    def __init__(self, instance: MRCPSInstance):
        self.instance = instance
        self.n, self.n_projects = instance.n_tasks, instance.n_projects
        self.qualified = instance.level > 0  # (W, S)
        self.successors = instance.successors()
        self.t = 0.0
        self.worker = np.full(self.n, -1, dtype=np.int64)
        self.start = np.full(self.n, -1.0)
        self.finish = np.full(self.n, -1.0)
        self.span = np.zeros(self.n)  # a_eff of started tasks
        self.free_at = np.zeros(instance.n_workers)
        self.stage = STAGE_A
        self.project = self.task = SKIP
        self.finished = False
        self._advance()

    # -- what is feasible now ----------------------------------------------------------
    def completed(self) -> np.ndarray:
        return (self.worker >= 0) & (self.finish <= self.t)

    def free_workers(self) -> np.ndarray:
        return self.free_at <= self.t

    def schedulable(self) -> np.ndarray:
        """``(N,)`` bool: tasks that could start now."""
        inst = self.instance
        waiting = (self.worker < 0) & ~(inst.pred & ~self.completed()[None, :]).any(axis=1)
        staffed = (self.qualified & self.free_workers()[:, None]).any(axis=0)  # (S,) a free qualified worker exists
        return waiting & staffed[inst.skill]

    def remaining(self) -> np.ndarray:
        """``(P,)`` int64: tasks of each project not started yet."""
        return np.bincount(self.instance.project[self.worker < 0], minlength=self.n_projects).astype(np.int64)

    def effective(self, task: int) -> np.ndarray:
        """``(W,)`` effective durations of ``task`` per worker (inf where unqualified)."""
        inst = self.instance
        lv = inst.level[:, inst.skill[task]]
        return np.where(lv > 0, inst.duration[task] / speed(lv), np.inf)

    def candidates(self) -> np.ndarray:
        if self.stage == STAGE_A:
            return np.unique(self.instance.project[self.schedulable()])
        if self.stage == STAGE_B:
            return np.flatnonzero(self.schedulable() & (self.instance.project == self.project))
        return np.flatnonzero(self.free_workers() & self.qualified[:, self.instance.skill[self.task]])

    # -- the construction ------------------------------------------------------------
    def decision(self) -> Decision | None:
        if self.finished:
            return None
        ids = self.candidates()
        if self.stage == STAGE_A:
            return cheapest(0, ids, self.instance.due[ids], can_skip=False)
        if self.stage == STAGE_B:
            return cheapest(1, ids, self.instance.duration[ids], can_skip=False)
        return cheapest(2, ids, self.effective(self.task)[ids], can_skip=False)

    def apply(self, choice: int) -> None:
        if self.stage == STAGE_A:
            self.project, self.stage = choice, STAGE_B
        elif self.stage == STAGE_B:
            self.task, self.stage = choice, STAGE_C
        else:
            i, w = self.task, choice
            self.worker[i] = w
            self.start[i] = self.t
            self.span[i] = float(self.effective(i)[w])
            self.finish[i] = self.t + self.span[i]
            self.free_at[w] = self.finish[i]
            self.project = self.task = SKIP
            self.stage = STAGE_A
            self._advance()

    def _advance(self) -> None:
        """Move to the next event time at which a task is schedulable (or finish)."""
        while True:
            if (self.worker >= 0).all():
                self.finished = True
                return
            if self.schedulable().any():
                return
            running = self.finish[(self.worker >= 0) & (self.finish > self.t)]
            assert running.size, "a non-delay schedule always has a running task"  # internal invariant
            self.t = next_event(running)

    def objective(self) -> float:
        inst = self.instance
        started = self.worker >= 0
        c_p = np.zeros(self.n_projects)
        np.maximum.at(c_p, inst.project[started], self.finish[started])
        labor = math.fsum((inst.cost[self.worker[started]] * self.span[started]).tolist())
        tardy = math.fsum((inst.weight * np.maximum(c_p - inst.due, 0.0)).tolist())
        return MAKESPAN_WEIGHT * float(c_p.max()) + tardy + LABOR_WEIGHT * labor

    def counters(self) -> dict:
        return {"time": float(self.t), "started": int((self.worker >= 0).sum())}

    def state_vector(self) -> np.ndarray:
        head = [self.stage, self.t, self.project, self.task]
        return np.concatenate([head, self.worker, self.start, self.finish]).astype(np.float64)
