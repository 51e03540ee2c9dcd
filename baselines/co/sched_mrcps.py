"""Classical MRCPS comparators: schedule-generation schemes with priority rules, and a local search.

Priority rules (Kolisch 1996, "Serial and parallel resource-constrained project
scheduling methods revisited: theory and computation", EJOR 90(2):320-333), computed
once per instance from the precedence graph with nominal durations ``a_i`` (the level-2
speed, ``0.7 + 0.15 * 2 = 1``) and each task's project due date ``d_p`` as its deadline
(the multi-project form: every project is its own network); the least key first, ties
the lowest id:

- ``lft`` latest finish time ``LFT_i = d_p - tail_i``, ``tail_i`` the longest path of
  durations after ``i`` in its project;
- ``mts`` most total successors (every task reachable from ``i``), key ``-count``;
- ``edd`` earliest due date of the task's project, ``d_p``;
- ``mslk`` minimum slack ``LFT_i - a_i - EST_i``, ``EST_i`` the longest path of durations
  before ``i`` (the critical-path slack).

Worker choice among the qualified workers: ``speed`` the fastest (highest level; ties the
cheaper rate), ``cost`` the least labor cost ``kappa_w a_eff`` (ties the faster).

Two schemes:

- **parallel** (``par-<rule>-<worker>``, :data:`PARALLEL`) plays the benchmark's own
  episode (:mod:`baselines.co.sched_play`): the simulator's construction *is* the
  parallel scheme (at each event time start schedulable tasks while a qualified worker
  is free; non-delay), so the rule picks the best schedulable task (A returns its
  project, B the task) and the worker rule picks among the free qualified workers. Its
  objective is the episode's; it plays as a team of the env.
- **serial** (``ser-<rule>-<worker>``, :data:`SERIAL`): the serial scheme, which the
  episode cannot express (it may leave a worker idle while a task could start, and
  fills gaps): tasks are taken one at a time, the eligible task (every predecessor
  scheduled) of least key first, and each is started at the earliest time its
  predecessors are complete and a qualified worker has a long enough gap; the worker is
  the one finishing earliest (``speed``) or the cheapest (``cost``, ties earliest
  finish). The schedule's cost is recomputed by ``relic_envs.co.mrcps.simulator.cost``,
  and :func:`check_schedule` verifies precedence, qualification and worker capacity.
  Serial schedules are *active*, and an active schedule attains the optimum of this
  regular objective (given the workers); parallel schedules are non-delay, a subset.

**Local search** (``par-<rule>-<worker>+ls``, :func:`local_search`): priority-list local
search in the episode (the parallel scheme): the rule's key is replaced by a rank list
(initially the rule's order) and a per-task worker rule (initially the row's); a move
swaps the ranks of two tasks of different projects, or flips one task's worker rule
(probability 1/2 each), and is kept when the episode's cost drops. Budget
:data:`LS_BUDGET` episodes per instance (the start included), ``default_rng(0)``.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from baselines.co._teams import row_team, with_ls
from baselines.co.sched_play import PlanTeam, pick, play
from relic_envs.co._construct import Decision
from relic_envs.co.mrcps import simulator as sim
from relic_envs.co.mrcps.generator import MRCPSInstance
from relic_envs.errors import InvalidConfig

PRIORITY_RULES, WORKER_RULES = ("lft", "mts", "edd", "mslk"), ("speed", "cost")
PARALLEL = tuple(f"par-{p}-{w}" for p, w in itertools.product(PRIORITY_RULES, WORKER_RULES))
SERIAL = tuple(f"ser-{p}-{w}" for p, w in itertools.product(PRIORITY_RULES, WORKER_RULES))
METHODS = PARALLEL + SERIAL
LS_BUDGET = 50  # episodes per instance
LS_BASE = "par-mslk-speed"  # the local search row of the results table: the best parallel row on train1


def _graph(instance: MRCPSInstance) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(EST, tail, total successor count) per task, by nominal durations (module doc)."""
    n, pred, a = instance.n_tasks, instance.pred, instance.duration.astype(float)
    est, tail = np.zeros(n), np.zeros(n)
    reach = np.zeros((n, n), dtype=bool)  # reach[j, i]: i is a (transitive) successor of j
    for i in range(n):  # predecessors have smaller ids
        ps = np.flatnonzero(pred[i])
        est[i] = max((est[j] + a[j] for j in ps), default=0.0)
    for j in range(n - 1, -1, -1):
        succ = np.flatnonzero(pred[:, j])
        tail[j] = max((a[i] + tail[i] for i in succ), default=0.0)
        reach[j, succ] = True
        if succ.size:
            reach[j] |= reach[succ].any(axis=0)
    return est, tail, reach.sum(axis=1)


def priority_key(instance: MRCPSInstance, rule: str) -> np.ndarray:
    """``(N,)`` float: the rule's key per task; the least first (module doc)."""
    est, tail, count = _graph(instance)
    lft = instance.due[instance.project] - tail
    keys = {"lft": lft, "mts": -count.astype(float), "edd": instance.due[instance.project],
            "mslk": lft - instance.duration - est}
    if rule not in keys:
        raise InvalidConfig(f"priority rule must be one of {list(keys)}, got {rule!r}")
    return keys[rule]


def worker_keys(instance: MRCPSInstance, task: int, rule: str) -> tuple[np.ndarray, ...]:
    """Lexicographic keys over all workers (``pick`` order: last most significant)."""
    level = instance.level[:, instance.skill[task]]
    labor = instance.cost * instance.duration[task] / sim.speed(np.maximum(level, 1))
    return (instance.cost, -level) if rule == "speed" else (-level, labor)


def _split(method: str) -> tuple[str, str, str]:
    if method not in METHODS:
        raise InvalidConfig(f"method must be one of {list(METHODS)} (or a parallel row + '+ls'), got {method!r}")
    scheme, rule, worker = method.split("-")
    return scheme, rule, worker


def chooser(instance: MRCPSInstance, key: np.ndarray, worker_rule: np.ndarray):
    """Parallel scheme in the episode: tasks by ``key`` (least first), task ``i``'s worker by ``worker_rule[i]``."""

    def choose(state: sim.State, d: Decision) -> int:
        if d.role == sim.STAGE_A:
            ready = np.flatnonzero(state.schedulable())
            return int(instance.project[pick(ready, key[ready])])
        if d.role == sim.STAGE_B:
            return pick(d.ids, key[d.ids])
        return pick(d.ids, *(k[d.ids] for k in worker_keys(instance, state.task, worker_rule[state.task])))

    return choose


def _parallel(instance: MRCPSInstance, key: np.ndarray, worker_rule: np.ndarray) -> tuple[float, list[int]]:
    episode, choices = play("mrcps", instance, chooser(instance, key, worker_rule))
    return episode.objective(), choices


@dataclasses.dataclass(frozen=True)
class Schedule:
    worker: np.ndarray  # (N,) int64
    start: np.ndarray  # (N,) float64


def serial(instance: MRCPSInstance, rule: str, worker_rule: str) -> Schedule:
    """The serial scheme (module doc)."""
    n, key = instance.n_tasks, priority_key(instance, rule)
    worker, start, finish = np.full(n, -1, dtype=np.int64), np.zeros(n), np.zeros(n)
    busy: list[list[tuple[float, float]]] = [[] for _ in range(instance.n_workers)]
    for _ in range(n):
        eligible = np.flatnonzero((worker < 0) & ~(instance.pred & (worker < 0)[None, :]).any(axis=1))
        i = pick(eligible, key[eligible])
        ready = float(finish[instance.pred[i]].max(initial=0.0))
        level = instance.level[:, instance.skill[i]]
        options = []  # (key..., worker, start)
        for w in np.flatnonzero(level > 0):
            span = float(instance.duration[i]) / sim.speed(int(level[w]))
            s = _earliest_gap(busy[w], ready, span)
            labor = float(instance.cost[w]) * span
            options.append(((s + span,) if worker_rule == "speed" else (labor, s + span), int(w), s, span))
        keyed, w, s, span = min(options)
        worker[i], start[i], finish[i] = w, s, s + span
        busy[w].append((s, s + span))
        busy[w].sort()
    return Schedule(worker, start)


def _earliest_gap(busy: list[tuple[float, float]], ready: float, span: float) -> float:
    """The earliest ``s >= ready`` with ``[s, s + span)`` free of the sorted busy intervals."""
    s = ready
    for b0, b1 in busy:
        if s + span <= b0 + 1e-9:
            return s
        s = max(s, b1)
    return s


def check_schedule(instance: MRCPSInstance, worker: np.ndarray, start: np.ndarray, tol: float = 1e-6) -> None:
    """Raise ``ValueError`` unless the schedule is feasible: every task has a qualified
    worker, starts at >= 0 after its predecessors finish, and no worker overlaps itself."""
    level = instance.level[worker, instance.skill]
    if (worker < 0).any() or (level <= 0).any() or (start < -tol).any():
        raise ValueError("every task needs a qualified worker and a start >= 0")
    finish = start + instance.duration / sim.speed(level)
    for i, j in zip(*np.nonzero(instance.pred)):
        if start[i] < finish[j] - tol:
            raise ValueError(f"task {i} starts before its predecessor {j} finishes")
    for w in np.unique(worker):
        order = np.argsort(start[worker == w], kind="stable")
        s, f = start[worker == w][order], finish[worker == w][order]
        if (s[1:] < f[:-1] - tol).any():
            raise ValueError(f"worker {w} runs two tasks at once")


def run(instance: MRCPSInstance, method: str) -> tuple[float, list[int] | Schedule]:
    """(the cost, the episode's choices or the serial schedule) of a row."""
    base, _, ls = method.partition("+")
    scheme, rule, worker_rule = _split(base)
    if ls:
        if ls != "ls" or scheme != "par":
            raise InvalidConfig(f"the local search starts from a parallel row, '<par-...>+ls'; got {method!r}")
        return local_search(instance, base)
    if scheme == "ser":
        schedule = serial(instance, rule, worker_rule)
        return sim.cost(instance, schedule.worker, schedule.start), schedule
    return _parallel(instance, priority_key(instance, rule), np.full(instance.n_tasks, worker_rule))


def local_search(instance: MRCPSInstance, base: str, budget: int = LS_BUDGET, seed: int = 0) -> tuple[float, list[int]]:
    """Priority-list local search from parallel row ``base`` (module doc); (best cost, its choices)."""
    scheme, rule, worker_rule = _split(base)
    if scheme != "par" or budget < 1:
        raise InvalidConfig(f"the local search needs a parallel row and a budget >= 1, got {base!r}, {budget}")
    rng = np.random.default_rng(seed)
    n = instance.n_tasks
    rank = np.argsort(np.argsort(priority_key(instance, rule), kind="stable"), kind="stable").astype(float)
    workers = np.full(n, worker_rule)
    best, best_choices = _parallel(instance, rank, workers)
    for _ in range(budget - 1):
        trial_rank, trial_workers = rank.copy(), workers.copy()
        if rng.random() < 0.5:
            i, j = rng.choice(n, 2, replace=False)
            if instance.project[i] != instance.project[j]:
                trial_rank[[i, j]] = trial_rank[[j, i]]
        else:
            i = int(rng.integers(n))
            trial_workers[i] = "cost" if workers[i] == "speed" else "speed"
        cost, choices = _parallel(instance, trial_rank, trial_workers)
        if cost < best:
            best, best_choices, rank, workers = cost, choices, trial_rank, trial_workers
    return best, best_choices


def is_team(method: str) -> bool:
    """Whether ``method`` plays as a team of the env (the parallel rows and their local search)."""
    return with_ls(method, PARALLEL)


def team(method: str) -> PlanTeam:
    """A parallel row as a team of the env: ``relic_envs.rollout("mrcps", team("par-lft-speed"), instances)``."""
    rows = f"MRCPS teams are {list(PARALLEL)} or '<par-...>+ls' (serial rows do not play in the env)"
    return row_team(method, is_team(method), run, rows)
