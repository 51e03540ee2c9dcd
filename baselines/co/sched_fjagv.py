"""Classical FJAGV comparators: dispatch-rule teams and a problem-space local search.

Every row plays the benchmark's own episode (:mod:`baselines.co.sched_play`): at each
decision of the event-driven construction (``relic_envs.co.fjagv.simulator``) a rule
chooses among the candidates the simulator offers, and the objective is the episode's.
A row is named ``<machine>-<sequencing>-<agv>`` (:data:`METHODS`, 16 rows):

- **machine choice** (role A, for one precedence-ready operation ``i``):
  ``ef`` earliest estimated finish, the least ``machine_ready_time + p_im`` (the
  simulator's own estimate: current end plus assigned backlog); ``spt`` the shortest
  processing time ``p_im`` (ties: earliest finish). Both are the standard routing rules
  of flexible job shops (Brandimarte 1993, "Routing and scheduling in a flexible job
  shop by tabu search", Ann. Oper. Res. 41:157-183).
- **sequencing** (role B, a free machine ``m`` and its delivered operations): ``spt``
  least ``p_im``; ``edd`` least job due date ``d_j``; ``mst`` minimum slack
  ``d_j - t - p_im - R_i`` with ``R_i`` the remaining work of the job after ``i`` (sum of
  the fastest eligible times of its later operations); ``atc`` apparent tardiness cost,
  the largest ``(w_j / p_im) exp(-max(d_j - t - p_im - R_i, 0) / (k p_bar))`` with
  ``p_bar`` the mean ``p_im`` of the queue and ``k = 2`` (Vepsalainen & Morton 1987,
  "Priority rules for job shops with weighted tardiness costs", Manage. Sci.
  33(8):1035-1047; the job-shop form with the remaining work as lead time). Rules from
  Panwalkar & Iskander 1977 ("A survey of scheduling rules", Oper. Res. 25(1):45-61).
- **AGV dispatching** (role C, a free AGV and the pending requests): ``nearest`` the
  least empty-plus-loaded travel time (nearest vehicle rule, Egbelu & Tanchoco 1984,
  "Characterization of automatic guided vehicle dispatching rules", Int. J. Prod. Res.
  22(3):359-374); ``fcfs`` the request whose material became ready first (ties: nearest).

Ties: the lowest id. The schedule is non-delay, as the simulator makes every schedule.

**Local search** (``<rule>+ls``, :func:`local_search`): problem-space search (Storer,
Wu & Vaccari 1992, "New search spaces for sequencing problems with application to job
shop scheduling", Manage. Sci. 38(10):1495-1509): the base rule is replayed with a
perturbed view of the data, its machine choice overridden per operation and its
sequencing rule seeing due dates ``d_j + delta_j``; the schedule is always evaluated by
the episode with the true data. A move either adds ``N(0, (0.25 d_bar)^2)`` to one job's
``delta`` or sends one operation to a random other eligible machine (probability 1/2
each); it is kept when the episode's cost drops (first improvement). Budget:
:data:`LS_BUDGET` episodes per instance (the base rule's included); ``numpy``
``default_rng(seed)`` with ``seed = 0``: deterministic. Sequencing rules that read no
due date (``spt``) gain only from the machine moves.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from baselines.co._teams import row_team, with_ls
from baselines.co.sched_play import PlanTeam, pick, play
from relic_envs.co._construct import Decision
from relic_envs.co.fjagv import simulator as sim
from relic_envs.co.fjagv.generator import FJAGVInstance
from relic_envs.errors import InvalidConfig

MACHINE_RULES, SEQUENCE_RULES, AGV_RULES = ("ef", "spt"), ("spt", "edd", "mst", "atc"), ("nearest", "fcfs")
METHODS = tuple("-".join(r) for r in itertools.product(MACHINE_RULES, SEQUENCE_RULES, AGV_RULES))
ATC_K = 2.0
LS_BUDGET = 30  # episodes per instance
LS_BASE = "spt-atc-nearest"  # the local search row of the results table: the best rule on train1 (50 jobs)
LS_STEP = 0.25  # the due-date move's standard deviation, a fraction of the mean due date


def remaining_work(instance: FJAGVInstance) -> np.ndarray:
    """``(J*K,)`` the sum of the fastest eligible times of each operation's later operations."""
    fastest = np.where(instance.proc > 0, instance.proc, np.iinfo(np.int64).max).min(axis=2).astype(float)  # (J, K)
    after = np.cumsum(fastest[:, ::-1], axis=1)[:, ::-1] - fastest
    return after.reshape(-1)


def chooser(instance: FJAGVInstance, method: str, due: np.ndarray | None = None, machine: np.ndarray | None = None) -> Callable:
    """The rule ``method`` as a chooser; ``due`` (perturbed due dates seen by the sequencing
    rule) and ``machine`` (per-operation machine override, -1 none) serve the local search."""
    rules = method.split("-")
    if method not in METHODS:
        raise InvalidConfig(f"method must be one of {list(METHODS)}, got {method!r}")
    a_rule, b_rule, c_rule = rules
    due = instance.due if due is None else due
    weight = instance.weight.astype(float)
    rest = remaining_work(instance)

    def choose(state: sim.State, d: Decision) -> int:
        ids, x = d.ids, state.about
        if d.role == sim.ROLE_A:
            if machine is not None and machine[x] in ids:
                return int(machine[x])
            finish = state.machine_ready_times()[ids] + state.pt[x, ids]
            return pick(ids, finish) if a_rule == "ef" else pick(ids, finish, state.pt[x, ids])
        if d.role == sim.ROLE_C:
            trip = state.trip_times(x)[ids]
            return pick(ids, trip) if c_rule == "nearest" else pick(ids, trip, state.ready_at[ids])
        p = state.pt[ids, x].astype(float)
        job = ids // state.k
        slack = due[job] - state.t - p - rest[ids]
        if b_rule == "spt":
            return pick(ids, p)
        if b_rule == "edd":
            return pick(ids, due[job])
        if b_rule == "mst":
            return pick(ids, slack)
        return pick(ids, -(weight[job] / p) * np.exp(-np.maximum(slack, 0.0) / (ATC_K * p.mean())))

    return choose


def run(instance: FJAGVInstance, method: str) -> tuple[float, list[int]]:
    """(the episode's cost, the choices) of a row (:data:`METHODS` or ``<rule>+ls``)."""
    base, _, ls = method.partition("+")
    if ls:
        if ls != "ls":
            raise InvalidConfig(f"method must be a rule or '<rule>+ls', got {method!r}")
        return local_search(instance, base)
    episode, choices = play("fjagv", instance, chooser(instance, base))
    return episode.objective(), choices


def local_search(instance: FJAGVInstance, base: str, budget: int = LS_BUDGET, seed: int = 0) -> tuple[float, list[int]]:
    """Problem-space local search from rule ``base`` (module doc); (best cost, its choices)."""
    if budget < 1:
        raise InvalidConfig(f"budget must be >= 1 episode, got {budget}")
    rng = np.random.default_rng(seed)
    delta = np.zeros(instance.n_jobs)
    machine = np.full(instance.n_operations, -1, dtype=np.int64)
    episode, best_choices = play("fjagv", instance, chooser(instance, base))
    best = episode.objective()
    machine[:] = episode.state.machine  # start from the base rule's own routing
    eligible = instance.op_times() > 0
    scale = LS_STEP * float(instance.due.mean())
    for _ in range(budget - 1):
        trial_delta, trial_machine = delta.copy(), machine.copy()
        if rng.random() < 0.5:
            trial_delta[rng.integers(instance.n_jobs)] += rng.normal(0.0, scale)
        else:
            op = int(rng.integers(instance.n_operations))
            others = np.flatnonzero(eligible[op] & (np.arange(instance.n_machines) != machine[op]))
            if others.size:
                trial_machine[op] = int(rng.choice(others))
        episode, choices = play("fjagv", instance, chooser(instance, base, instance.due + trial_delta, trial_machine))
        if episode.objective() < best:
            best, best_choices, delta, machine = episode.objective(), choices, trial_delta, trial_machine
    return best, best_choices


def is_method(method: str) -> bool:
    return with_ls(method, METHODS)


def team(method: str) -> PlanTeam:
    """A row as a team of the env: ``relic_envs.rollout("fjagv", team("ef-atc-nearest"), instances)``."""
    return row_team(method, is_method(method), run, f"FJAGV rows are {list(METHODS)} or '<rule>+ls'")
