"""The event-driven dispatch simulator shared by MAS-JD, MAS-ST and MAS-FS (Appendix B.2).

Three resources (machines, workers or stages), one per role A, B, C, and ``N`` jobs
with release times. A job has ``S`` operations (``S = 1`` for MAS-JD/ST; ``S = 3``
stages in order for MAS-FS). Resource ``k`` works on operation ``stage(k)``: 0 for
every resource in MAS-JD/ST, ``k`` in MAS-FS. Its *pool* at time ``t`` holds the jobs
whose operation ``stage(k)`` is ready (the job released, ``r_j <= t``, and its previous
operation completed by ``t``), not yet dispatched, and which the resource is qualified
for (MAS-ST). Pools are the paper's "released and ready" jobs: a shared pool for the
machines of MAS-JD and the workers of MAS-ST, one buffer per stage in MAS-FS.

**Decision epochs.** One env step is one decision epoch ``t``: the earliest event time
(a release or a completion; the first epoch is the first release) at which some free
resource (``busy_until <= t``) has a non-empty pool. Every free resource *acts*
(``Episode.acting``): it answers a job id from its pool or ``-1``; a free resource with
an empty pool may only answer ``-1``. A busy resource does not act: its answer is
ignored and not checked (its observation is still given, with ``my_busy_until > t_now``
and an ``action_mask`` that allows only ``-1``). All acting roles observe the same
pre-step state; the evaluator applies the answers in the order A, B, C. A job id that
an earlier role of the same epoch already took is a *collision*: that role idles, it is
not an error (``Episode.collisions`` lists them). A dispatched operation starts at
``t`` and occupies the resource for its duration (``p_j``; ``p_j / max(s_kc, eps)`` in
MAS-ST); ``-1`` idles until the next event.

**The return contract** (B.2: "exceptions, non-integral outputs, and other identifiers
invalidate the rollout"): for an acting role an exception (``"exception"``), a value
that is not an integer (``"type"``; ``bool`` and floats such as ``3.0`` included), an
integer outside ``-1..N-1`` (``"range"``) or a job not in its pool (``"pool"``) voids
the rollout. So does a *team stall* in MAS-JD/FS: at a *last-chance* epoch, where no
release is pending and no resource is busy, every acting role answers ``-1`` although
some pool is non-empty (``"stall"``, charged to the first such role in A, B, C order):
idling there would wait for an event that never comes and leave jobs unfinished, which
B.2 forbids ("each job is assigned exactly once"; "all jobs must finish"). One role
idling while a teammate dispatches is fine: the teammate's completion is the next
event. The rule is joint, so ``check`` (one role) never reports it; ``check_team``
(all answers) does, and ``step`` applies it. The ``action_mask`` is conservative: at
a last-chance epoch it forbids ``-1`` to the *designated* role, the first free one (A,
B, C order) with a non-empty pool, so every combination of masked-in answers is valid.
MAS-ST has no such rule: tasks may stay unserved, and the episode ends when no event is
left.

**End.** The episode ends when every job's last operation is dispatched, or when no
event is left (MAS-ST: the remaining tasks are unserved). A MAS-JD/FS episode can end
with unfinished jobs only after refused actions (``on_invalid="penalize"`` turns them
into idling); those jobs are then charged as completing at the horizon
``H = max_j r_j + sum of all durations``, which bounds every completion time of every
valid episode (after the last release some resource is always busy, or dispatch is
forced). The raw objective mid-episode covers the operations dispatched so far, whose
completion times are fixed at dispatch, so the per-step rewards sum to the final score.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from relic_envs.core import codecs as F
from relic_envs.core.benchmark import ROLES, WAIT, GeneratedProblem, Invalid
from relic_envs.core.declared import DeclaredBenchmark, DeclaredEpisode, as_id, checked_id
from relic_envs.core.instance import Instance, check_array, check_range
from relic_envs.errors import InvalidInstance, InvalidReturn

IDLE = -1
RETURNS_DOC = (
    "a job id (int) from this role's pool (the released, ready, undispatched jobs it may take), or -1 to idle "
    "until the next event. Exceptions, non-integral outputs and any other identifier invalidate the rollout"
)
_REASON_DOC = {
    "exception": "the policy raised",
    "type": "a job id must be an integer (or -1 to idle)",
    "range": "the job id is outside -1..N-1",
    "pool": "the job is not in this role's pool of released, ready, undispatched jobs",
    "stall": "the whole team idled with jobs waiting when no release is pending and no resource is busy (jobs would stay "
    "unfinished)",
}


@dataclasses.dataclass(frozen=True)
class DispatchInstance(Instance):
    """Fields every scheduling instance has; benchmarks add theirs after these."""

    release: np.ndarray  # (N,) float64 >= 0, sorted ascending; job ids follow release order

    def validate(self) -> None:
        check_array("release", self.release, (None,), "f")
        if self.release.shape[0] < 1:
            raise InvalidInstance("field 'release' needs at least one job")
        check_range("release", self.release, 0.0, np.inf)
        if np.any(np.diff(self.release) < 0):
            raise InvalidInstance("field 'release' must be sorted ascending (job ids follow release order)")

    @property
    def n_jobs(self) -> int:
        return int(self.release.shape[0])

    def job_array(self, name: str, value: np.ndarray, low: float, high: float, width: int | None = None, kinds: str = "f") -> None:
        """Check a per-job field (helper for subclasses' ``validate``)."""
        check_array(name, value, (self.n_jobs,) if width is None else (self.n_jobs, width), kinds)
        check_range(name, value, low, high)


@dataclasses.dataclass
class View:
    """What one role can be shown at one decision epoch (read by the parameter getters)."""

    k: int  # the role's index, 0=A, 1=B, 2=C
    t: float  # the epoch's time
    instance: Instance
    busy: np.ndarray  # (3,) float64 busy-until of each resource (<= t when free)
    pools: np.ndarray  # (3, N) bool pool of each resource at t
    released: np.ndarray  # (N,) bool r_j <= t
    machine: np.ndarray  # (N, S) int64 resource that ran each operation, -1 if not dispatched
    end: np.ndarray  # (N, S) float64 completion time of each dispatched operation, nan otherwise
    load: np.ndarray  # (3,) float64 total duration dispatched to each resource so far
    durations: np.ndarray  # (3, N, S) float64 duration of each operation on each resource (read-only)

    @property
    def pool(self) -> np.ndarray:
        return self.pools[self.k]

    @property
    def teammates(self) -> list[int]:
        return [j for j in range(len(ROLES)) if j != self.k]

    def stage(self, k: int) -> int:
        """The operation resource ``k`` works on (its stage in MAS-FS, else 0)."""
        return k if self.machine.shape[1] > 1 else 0

    def ready_time(self, s: int) -> np.ndarray:
        """``(N,)`` time each job's operation ``s`` became (or becomes) ready; ``inf`` if its
        previous operation is not dispatched yet."""
        if s == 0:
            return self.instance.release.astype(np.float64)
        return np.where(self.machine[:, s - 1] >= 0, np.nan_to_num(self.end[:, s - 1], nan=np.inf), np.inf)


# -- getters shared by the benchmarks' role tables --------------------------------------
def t_now(v: View):
    return np.array(v.t, dtype=np.float64)  # 0-d array: Box.contains wants an ndarray


def my_busy_until(v: View):
    """The role's own busy-until time as documented: ``max(busy_until, t_now)``.

    A free resource's raw ``busy`` entry is its last completion time, which can lie
    before ``t_now`` (it idled since); the role's own value is clamped to ``t_now`` so
    that it equals ``t_now`` whenever the role is asked (B.2's MAS-FS listing: "equals
    t_now when called") and is the true busy-until time while it is busy. Teammates'
    values (``teammate_busy_until``, ``busy_vector``, ``upstream_busy``, ...) stay raw.
    """
    return np.array(max(float(v.busy[v.k]), float(v.t)), dtype=np.float64)


def busy_vector(v: View):
    return v.busy.astype(np.float64).copy()


def teammate_busy(v: View):
    return v.busy[v.teammates].astype(np.float64).copy()


def pool_dict(columns):
    """Getter of a ``{job: (col1, col2, ...)}`` pool; ``columns(view)`` is an ``(N, width)`` array."""

    def get(v: View):
        return {"mask": v.pool.astype(np.int8), "value": np.asarray(columns(v), dtype=np.float64)}

    return get


class DispatchProblem(GeneratedProblem):
    """What one scheduling benchmark defines; the event loop and env plumbing are shared.

    A benchmark names its ``generator`` module (``REGIMES``, ``generate(regime, rng)``)
    and ``simulator`` module (``durations(instance) -> (3, N, S)`` duration of each
    operation on each resource, ``qualified(instance) -> (3, N)`` bool,
    ``objective(instance, completion)`` raw objective from the ``(N,)`` completion
    times of the last operation (nan = not completed), ``score_bounds(instance)`` and
    ``horizon(instance)``) and its role tables per interface.
    """

    name: str
    instance_type: type[DispatchInstance]
    roles: Mapping[str, Mapping[str, F.RoleSpec]]  # interface -> role -> spec
    generator: Any
    simulator: Any
    stages: int = 1  # operations per job (MAS-FS: 3)
    must_finish: bool = True  # MAS-JD/FS: every job must be done; MAS-ST: tasks may stay unserved
    minimize: bool = True

    def stage(self, k: int) -> int:
        """The operation resource ``k`` works on."""
        return k if self.stages > 1 else 0


class DispatchBenchmark(DeclaredBenchmark):
    """A scheduling benchmark of the paper, from its :class:`DispatchProblem`."""

    family = "mas"
    interfaces = ("paper",)
    # Exceptions reach Episode.step as the role's action: an acting role's exception
    # voids the rollout there; a busy role's answer (exception or not) is ignored.
    void_on_exception = False

    def _returns_doc(self, role: str) -> str:
        return RETURNS_DOC

    def _check_return(self, function: str) -> Callable[[Any, Mapping[str, Any]], Any]:
        return lambda value, obs: checked_id(value, obs, function, IDLE, "pool", "not -1 or a job of its pool")

    def id_space(self, role: str, instance: Instance) -> int:
        return instance.n_jobs  # index 0 of the mask = idle (-1), index j + 1 = job j

    def action_space(self, role: str, instance: Instance, interface: str = "paper") -> spaces.Discrete:
        return spaces.Discrete(instance.n_jobs + 1, start=IDLE)

    def max_steps(self, instance: Instance) -> int:
        # Epochs happen at distinct event times: N releases and N * S completions at most.
        return instance.n_jobs * (self.problem.stages + 1)

    def score_bounds(self, instance: Instance) -> tuple[float, float]:
        lo, hi = self.problem.simulator.score_bounds(instance)
        return float(lo), float(hi)

    def state_space(self, instance: Instance) -> spaces.Box:
        """Bounds of :meth:`DispatchEpisode.state_vector`: ``t`` and the three busy-until
        times in ``[0, H]``, then per operation (job-major) the resource that ran it
        (``-1`` if not dispatched) and its completion time (``-1`` if not dispatched, else
        in ``[0, H]``), ``H`` the horizon of the module docs (plus a rounding slack)."""
        horizon = float(self.problem.simulator.horizon(instance))
        horizon += 1e-9 * max(1.0, horizon)  # rounding slack: sums of durations in another order
        ops = instance.n_jobs * self.problem.stages
        low = np.concatenate([np.zeros(4), np.full(ops, -1.0), np.full(ops, -1.0)])
        high = np.concatenate([np.full(4, horizon), np.full(ops, len(ROLES) - 1.0), np.full(ops, horizon)])
        return spaces.Box(low, high, dtype=np.float64)

    def reference_policy(self, role: str, interface: str = "paper"):
        """First come, first served: the lowest job id (the earliest release) of the pool.

        The resource is kept (the stage is mandatory in MAS-FS, and an absent machine
        would stall MAS-JD), but it uses no learned priority.
        """
        self.check_interface(interface)
        return _first_come

    def reference_text(self, role: str) -> str:
        return "your resource serving its pool first come, first served (lowest job id)"


def _first_come(obs: Mapping[str, Any]) -> int:
    jobs = np.flatnonzero(np.asarray(obs["action_mask"])[1:])
    return int(jobs[0]) if jobs.size else IDLE


class DispatchEpisode(DeclaredEpisode):
    """One scheduling instance played by three resources, one decision epoch per step."""

    def __init__(self, bench: DispatchBenchmark, instance: DispatchInstance, interface: str):
        super().__init__(bench, instance, interface)
        n, s, k = instance.n_jobs, self.problem.stages, len(ROLES)
        sim = self.problem.simulator
        self.durations = np.asarray(sim.durations(instance), dtype=np.float64)  # (3, N, S)
        self.qualified = np.asarray(sim.qualified(instance), dtype=bool)  # (3, N)
        self.horizon = float(sim.horizon(instance))
        self.busy = np.zeros(k)
        self.machine = np.full((n, s), -1, dtype=np.int64)
        self.start = np.full((n, s), np.nan)
        self.end = np.full((n, s), np.nan)
        self.load = np.zeros(k)
        self.t = float(instance.release[0])
        self.steps = 0
        self.ended = False
        self._last_chance = False
        self._designated: int | None = None  # at a last-chance epoch: the role whose -1 the mask forbids
        self.void: Invalid | None = None
        self.collisions: list[tuple[int, str, int]] = []  # (step, role, job) of every collision
        # Per role, as in the CO family: calls while acting, and of those the calls that
        # had a real choice (two or more jobs in the pool: idling beside one job is no
        # choice a dispatcher needs, and is forbidden at last-chance epochs anyway).
        self.decisions = {r: 0 for r in ROLES}
        self.choices = {r: 0 for r in ROLES}
        self._enter(self.t)

    # -- the event loop ----------------------------------------------------------------
    def pools(self, t: float) -> np.ndarray:
        """``(3, N)`` bool: each resource's pool at time ``t``."""
        released = self.instance.release <= t
        out = np.zeros((len(ROLES), self.instance.n_jobs), dtype=bool)
        for k in range(len(ROLES)):
            s = self.problem.stage(k)
            ready = released if s == 0 else (self.machine[:, s - 1] >= 0) & (self.end[:, s - 1] <= t)
            out[k] = ready & (self.machine[:, s] < 0) & self.qualified[k]
        return out

    def _next_event(self, t: float) -> float | None:
        release = self.instance.release
        later = [*release[release > t][:1], *(b for b in self.busy if b > t)]
        return float(min(later)) if later else None

    def _enter(self, t: float) -> None:
        """Move to the first epoch at or after ``t``, or end the episode."""
        last = self.problem.stages - 1
        while True:
            if np.all(self.machine[:, last] >= 0):
                self.ended = True
                return
            self.t = t
            self._pools = self.pools(t)
            self._free = self.busy <= t
            waiting = self._free & self._pools.any(axis=1)
            if np.any(waiting):
                self._last_chance = self._next_event(t) is None
                stuck = self._last_chance and self.problem.must_finish
                self._designated = int(np.flatnonzero(waiting)[0]) if stuck else None
                return
            nxt = self._next_event(t)
            if nxt is None:
                self.ended = True  # MAS-ST: remaining tasks unserved; MAS-JD/FS: only after refused actions
                return
            t = nxt

    @property
    def done(self) -> bool:
        return self.ended or self.void is not None

    @property
    def step_count(self) -> int:
        return self.steps

    def acting(self, role: str) -> bool:
        return not self.done and bool(self._free[ROLES.index(role)])

    def reason(self, k: int, value: Any) -> str | None:
        """Why acting resource ``k`` may not answer ``value`` now, or ``None``."""
        if isinstance(value, BaseException):
            return value.reason if isinstance(value, InvalidReturn) and value.reason != "exception" else "exception"
        j = as_id(value)
        if j is None:
            return "type"
        if not IDLE <= j < self.instance.n_jobs:
            return "range"
        if j == IDLE:
            return None  # a team stall is joint: check_team
        return None if self._pools[k, j] else "pool"

    def check(self, role: str, action: Any) -> Invalid | None:
        k = ROLES.index(role)
        if not self.acting(role) or action is WAIT:
            return None
        why = self.reason(k, action)
        if why is None:
            return None
        detail = str(action) if isinstance(action, BaseException) else _REASON_DOC.get(why, why)
        return Invalid(role, why, detail)

    def check_team(self, actions: Mapping[str, Any]) -> Invalid | None:
        """The first reason the answers of all roles together void the rollout now, or ``None``.

        Each acting role's own answer (:meth:`check`), then the team stall of MAS-JD/FS
        (module docs). Pure: the state does not change.
        """
        if self.done:
            return None
        acting = [(k, r) for k, r in enumerate(ROLES) if self._free[k]]
        for _, role in acting:
            invalid = self.check(role, actions.get(role))
            if invalid is not None:
                return invalid
        if not (self.problem.must_finish and self._last_chance):
            return None
        answers = [(k, r, actions.get(r)) for k, r in acting]
        if any(a is not WAIT and as_id(a) != IDLE for _, _, a in answers):
            return None  # someone dispatches: its completion is the next event
        idlers = [r for k, r, a in answers if a is not WAIT and self._pools[k].any()]
        if not idlers:
            return None  # only refused answers (WAIT): the env's penalize mode ends the episode, charging H
        return Invalid(idlers[0], "stall", _REASON_DOC["stall"])

    def step(self, actions: Mapping[str, Any]) -> Invalid | None:
        if self.done:
            raise RuntimeError("the episode has ended")
        acting = [(k, r) for k, r in enumerate(ROLES) if self._free[k]]
        invalid = self.check_team(actions)  # B.2: any bad answer voids the rollout; nothing is applied
        if invalid is not None:
            self.void = invalid
            self.steps += 1
            return invalid
        for k, role in acting:
            self.decisions[role] += 1
            self.choices[role] += int(self._pools[k].sum() >= 2)
        taken: set[int] = set()
        for k, role in acting:  # deterministic application order A, B, C
            action = actions.get(role)
            if action is WAIT or as_id(action) == IDLE:
                continue
            j = as_id(action)
            if j in taken:
                self.collisions.append((self.steps, role, j))
                continue
            taken.add(j)
            s = self.problem.stage(k)
            d = float(self.durations[k, j, s])
            self.machine[j, s], self.start[j, s], self.end[j, s] = k, self.t, self.t + d
            self.busy[k] = self.t + d
            self.load[k] += d
        self.steps += 1
        self._obs = {}
        nxt = self._next_event(self.t)
        if nxt is None:
            self.ended = True  # nothing is left to happen (all idled at a last-chance epoch)
        else:
            self._enter(nxt)
        return None

    # -- results -----------------------------------------------------------------------
    def completion(self) -> np.ndarray:
        """``(N,)`` completion time of each job's last operation (nan if not dispatched)."""
        return self.end[:, -1].copy()

    def unfinished(self) -> np.ndarray:
        """``(N,)`` bool: jobs whose last operation was never dispatched (only at a stuck end)."""
        return self.machine[:, -1] < 0

    def objective(self) -> float:
        completion = self.completion()
        if self.ended and self.problem.must_finish:
            completion[self.unfinished()] = self.horizon  # charged at the horizon (module docs)
        return float(self.problem.simulator.objective(self.instance, completion))

    def state_vector(self) -> np.ndarray:
        head = np.concatenate([[self.t], self.busy])
        machine = self.machine.ravel().astype(np.float64)
        end = np.where(np.isnan(self.end), -1.0, self.end).ravel()
        return np.concatenate([head, machine, end])

    # -- observations ------------------------------------------------------------------
    def view(self, k: int) -> View:
        return View(
            k=k, t=self.t, instance=self.instance, busy=self.busy.copy(), pools=self._pools.copy(),
            released=self.instance.release <= self.t, machine=self.machine.copy(), end=self.end.copy(),
            load=self.load.copy(), durations=self.durations,
        )

    def action_mask(self, k: int, view: View) -> np.ndarray:
        """``(N + 1,)`` int8: index 0 is idle (``-1``), index ``j + 1`` job ``j`` (read from the episode's
        pools and turn, which the view copies)."""
        mask = np.zeros(self.instance.n_jobs + 1, dtype=np.int8)
        if self.done or not self._free[k]:
            mask[0] = 1
            return mask
        mask[1:] = self._pools[k]
        mask[0] = k != self._designated  # conservative: see the module docs (team stall)
        return mask


DispatchBenchmark.episode_type = DispatchEpisode  # declared after the benchmark, which plays it

