"""The functional JAX twin of the event-driven dispatch simulator (``_dispatch.py``).

Pure functions over pytrees, vmapped over a batch of same-``N`` instances, with every
decision epoch of an episode inside one compiled program (``jit`` + ``vmap`` + a loop):

- :func:`stack` turns same-size instances into a :class:`Batch` of static arrays. The
  durations ``(3, N, S)``, qualification ``(3, N)`` and horizon come from the numpy
  simulator's own functions, so both sides decide on the same bits.
- ``init(problem, data) -> DState`` (before the first epoch), ``enter``, ``observe(...)``,
  ``epoch(problem, policies, data, state) -> DState`` work on ONE instance;
  :func:`make_evaluator` vmaps and loops them.

The rules are the numpy ones (``_dispatch.py`` module docs), in the same order: a
decision epoch is the earliest event time (a release or a completion) at which a free
resource has a non-empty pool; every free resource acts on the same pre-step state; a
busy resource's answer is ignored. Each acting role's answer is checked A, B, C
(``-1 <= j < N``, else ``"range"``; a job outside its pool, ``"pool"``), then the team
stall of MAS-JD/FS (``"stall"``); the first failure voids the rollout, nothing is
applied, and the voiding epoch still counts as a step. Otherwise the answers are
applied A, B, C, a job an earlier role of the epoch took is a collision (that role
idles), and the state moves to the next epoch or ends. The ``"type"`` and
``"exception"`` reasons have no runtime form here: a JAX policy's answer must be an
integer scalar, checked at trace time (:func:`as_job`, ``InvalidReturn``).

**Bound on epochs.** Epochs happen at strictly increasing event times, and each is a
release time (``N`` at most) or the completion time of an operation (``N * S``), so an
episode has at most ``N * (S + 1)`` epochs (``DispatchBenchmark.max_steps``). One loop
iteration (:func:`epoch`) first enters the epoch at or after the pending time (the
first time a free resource has work, in closed form: :func:`enter`), then plays it; one
more iteration only finds the end. The evaluator runs the iterations in a
``lax.while_loop`` that stops once every instance of the batch is done
(``loop="while"``, the default; :func:`rollout_batch`) or in a ``lax.scan`` of exactly
``N * (S + 1) + 1`` iterations (``loop="scan"``, the routing family's shape);
iterations after an instance is done change nothing. The while loop is the default because episodes are
much shorter than the bound (MAS-JD test50: 50 epochs of a bound of 100; MAS-ST about
20; MAS-FS about 140 of 200) and a vmapped loop runs every iteration for the whole
batch anyway (MAS-FS at batch 1024: 6.2e4 instance-steps/s with the while loop, 5.2e4
with the scan, float64; benchmarks/RESULTS.md).

**Observations** are the env's encoded observations, fixed-shape: a pool or buffer
``{job: (...)}`` is ``{"mask": int8 (N,), "value": (N, width)}`` (rows of jobs outside
the mask are the jobs' features, not zeros: read them only under the mask), C's
``job_ids`` is the ``(N,)`` int8 mask itself, ``job_features`` / ``task_features`` /
``job_table`` are ``{"mask", "value"}`` with all ``N`` rows in id order, records are
dicts of arrays. Plus ``action_mask`` ``(N + 1,)`` int8 (index 0 = idle).

Precision: by default the evaluator traces and runs with 64-bit types (inside
``jax.enable_x64``), for exact parity with numpy; ``x64=False`` runs float32.
"""

from __future__ import annotations

import abc
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from relic_envs.core.benchmark import ROLES
from relic_envs.core.jax_kit import Batch, RoleTables, batch_runner, check_team, integer_answer, one_size, stack_arrays
from relic_envs.errors import InvalidConfig, MissingExtra
from relic_envs.mas._dispatch import DispatchInstance, DispatchProblem

try:
    import jax
    import jax.numpy as jnp
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtra("jax", "jax") from exc

from relic_envs.core.jax_loop import shrinking_while  # noqa: E402  (after the jax check)
from relic_envs.core.jax_select import first_argmax  # noqa: E402

N_RES = len(ROLES)
IDLE = -1
REASONS = ("", "range", "pool", "stall")  # void reason codes: 0 = valid
LOOPS = ("while", "scan")


class DState(NamedTuple):
    """What changes during an episode (one instance)."""

    t: Any  # () float epoch time
    busy: Any  # (3,) float busy-until of each resource
    machine: Any  # (N, S) int32 resource that ran each operation, -1 if not dispatched
    start: Any  # (N, S) float start time of each dispatched operation, nan otherwise
    end: Any  # (N, S) float completion time of each dispatched operation, nan otherwise
    load: Any  # (3,) float total duration dispatched to each resource
    pools: Any  # (3, N) bool each resource's pool at t (as entered)
    free: Any  # (3,) bool busy <= t
    last_chance: Any  # () bool no event after t
    designated: Any  # () int32 role whose -1 the mask forbids at a stuck epoch, else -1
    ended: Any  # () bool
    reason: Any  # () int32 index into REASONS (0 = not voided)
    void_role: Any  # () int32 role that voided the rollout, -1 if none
    steps: Any  # () int32 decision epochs played (the voiding one included)
    collisions: Any  # () int32


class View(NamedTuple):
    """What one role can be shown (twin of ``_dispatch.View``); ``k`` is a Python int."""

    k: int
    t: Any
    data: Mapping[str, Any]
    busy: Any
    pools: Any
    machine: Any
    end: Any
    load: Any

    @property
    def pool(self):
        return self.pools[self.k]

    @property
    def released(self):
        return self.data["release"] <= self.t

    @property
    def teammates(self) -> list[int]:
        return [j for j in range(N_RES) if j != self.k]

    def stage(self, k: int) -> int:
        """The operation resource ``k`` works on (its stage in MAS-FS, else 0; static)."""
        return k if self.machine.shape[1] > 1 else 0


Getter = Callable[[View], Any]


class JaxDispatchProblem(RoleTables, abc.ABC):
    """One scheduling benchmark in ``jax.numpy``: its static arrays, objective and role tables."""

    numpy_problem: DispatchProblem  # the numpy twin: stages, must_finish, simulator (durations, qualified, horizon)
    # How many times rollout_batch may quarter a batch as its episodes end
    # (core.jax_loop.shrinking_while): worth it where episode lengths have a tail.
    shrink_stages: int = 0
    roles: Mapping[str, Mapping[str, Mapping[str, Getter]]]  # interface -> role -> param -> getter

    @property
    def name(self) -> str:
        return self.numpy_problem.name

    @property
    def stages(self) -> int:
        return self.numpy_problem.stages

    @property
    def must_finish(self) -> bool:
        return self.numpy_problem.must_finish

    @abc.abstractmethod
    def arrays(self, instance: DispatchInstance) -> dict[str, np.ndarray]:
        """The benchmark's instance fields the roles and objective read (``release``, ``dur``,
        ``qual`` and ``horizon`` are added by :func:`stack`)."""

    @abc.abstractmethod
    def objective(self, data: Mapping[str, Any], completion):
        """Raw objective from the ``(N,)`` completion times (nan = not completed), as ``simulator.objective``."""

def stack(problem: JaxDispatchProblem, instances: Sequence[DispatchInstance]) -> Batch:
    """Stack same-size instances into a :class:`Batch`."""
    n_jobs = one_size(instances, lambda inst: inst.n_jobs, "size N")
    sim = problem.numpy_problem.simulator
    per_instance = []
    for inst in instances:
        arrays = {
            "release": np.asarray(inst.release, np.float64),
            "dur": np.asarray(sim.durations(inst), np.float64),
            "qual": np.asarray(sim.qualified(inst), bool),
            "horizon": np.float64(sim.horizon(inst)),
        }
        arrays.update(problem.arrays(inst))
        per_instance.append(arrays)
    return Batch(stack_arrays(per_instance), len(instances), n_jobs)


# -- the event loop (one instance) ----------------------------------------------------------
def ready_times(problem: JaxDispatchProblem, data, machine, end):
    """``(3, N)``: from when each job is in each resource's pool, the dispatch state held
    fixed (``inf``: not while it holds). A job is in resource ``k``'s pool once it is ready
    for ``k``'s stage (its release, or the end of its previous operation), while that stage
    is not dispatched and ``k`` is qualified; so the pools at ``t`` (twin of
    ``DispatchEpisode.pools``) are ``ready_times(...) <= t``."""
    rows = []
    for k in range(N_RES):
        s = problem.numpy_problem.stage(k)
        ready = data["release"] if s == 0 else jnp.where(machine[:, s - 1] >= 0, end[:, s - 1], jnp.inf)
        rows.append(jnp.where((machine[:, s] < 0) & data["qual"][k], ready, jnp.inf))
    return jnp.stack(rows)


def next_event(data, busy, t):
    """The earliest release or busy-until time after ``t`` (``inf`` if none)."""
    release = data["release"]
    later = jnp.minimum(jnp.min(jnp.where(release > t, release, jnp.inf)), jnp.min(jnp.where(busy > t, busy, jnp.inf)))
    return later


def enter(problem: JaxDispatchProblem, data, state: DState) -> DState:
    """Move to the first epoch at or after ``state.t``, or end the episode (twin of ``_enter``).

    The numpy ``_enter`` steps through the event times (releases, busy-until times)
    until a free resource has work. Nobody decides meanwhile, so resource ``k`` first
    waits at ``max(busy[k], its earliest ready time)`` (:func:`ready_times`), and the
    first of these (or ``state.t`` when it is already past) is an event time itself: a
    release, a busy-until time, or the end of an operation still running, which is its
    resource's busy-until time. With no such time, numpy stops at the last event time
    and ends the episode. Computed in closed form here: a vmapped ``while_loop`` ran
    every step of the slowest instance for the whole batch.
    """
    machine, end, busy = state.machine, state.end, state.busy
    all_done = state.ended | jnp.all(machine[:, -1] >= 0)
    ready = ready_times(problem, data, machine, end)
    first_wait = jnp.maximum(state.t, jnp.min(jnp.maximum(busy, ready.min(axis=1))))
    stuck = jnp.isinf(first_wait)  # MAS-ST: remaining tasks unserved
    last_event = jnp.maximum(state.t, jnp.maximum(jnp.max(data["release"]), jnp.max(busy)))
    t = jnp.where(all_done, state.t, jnp.where(stuck, last_event, first_wait))
    ended = all_done | stuck
    pools = ready <= t
    free = busy <= t
    wait = free & pools.any(axis=1)
    last_chance = jnp.isinf(next_event(data, busy, t))
    designated = jnp.where(last_chance & problem.must_finish, first_argmax(wait).astype(jnp.int32), IDLE)
    return state._replace(t=t, pools=pools, free=free, last_chance=last_chance, designated=designated,
                          ended=ended)


def init(problem: JaxDispatchProblem, data) -> DState:
    """The state before the first epoch is entered (at the first release)."""
    n, s = data["release"].shape[0], problem.stages
    dtype = data["release"].dtype
    return DState(
        t=data["release"][0], busy=jnp.zeros(N_RES, dtype), machine=jnp.full((n, s), IDLE, jnp.int32),
        start=jnp.full((n, s), jnp.nan, dtype), end=jnp.full((n, s), jnp.nan, dtype), load=jnp.zeros(N_RES, dtype),
        pools=jnp.zeros((N_RES, n), bool), free=jnp.ones(N_RES, bool), last_chance=jnp.bool_(False),
        designated=jnp.int32(IDLE), ended=jnp.bool_(False), reason=jnp.int32(0), void_role=jnp.int32(IDLE),
        steps=jnp.int32(0), collisions=jnp.int32(0),
    )


def done(state: DState):
    return state.ended | (state.reason > 0)


def view(data, state: DState, k: int) -> View:
    return View(k, state.t, data, state.busy, state.pools, state.machine, state.end, state.load)


def action_mask(state: DState, k: int):
    """``(N + 1,)`` int8 (twin of ``DispatchEpisode.action_mask``)."""
    acting = ~done(state) & state.free[k]
    jobs = state.pools[k] & acting
    idle = ~acting | (state.designated != k)
    return jnp.concatenate([idle[None], jobs]).astype(jnp.int8)


def observe(problem: JaxDispatchProblem, data, state: DState, role: str, interface: str = "paper") -> dict[str, Any]:
    """The role's observation: same keys and content as the PettingZoo env's."""
    k = ROLES.index(role)
    v = view(data, state, k)
    obs = {name: get(v) for name, get in problem.role_table(interface)[role].items()}
    obs["action_mask"] = action_mask(state, k)
    return obs


def as_job(role: str, value):
    """Trace-time check of a policy's answer: a scalar integer job id (as int32)."""
    return integer_answer(role, value, (), "job id").astype(jnp.int32)


def verdict(problem: JaxDispatchProblem, state: DState, answers):
    """``(reason, role)`` of the first rule the answers break (twin of ``check_team``), ``(0, -1)`` if none."""
    n = state.pools.shape[1]
    reason, role = jnp.int32(0), jnp.int32(IDLE)
    for k in range(N_RES):  # each acting role's own answer, in order A, B, C
        j = answers[k]
        bad_range = (j < IDLE) | (j >= n)
        bad_pool = ~bad_range & (j >= 0) & ~state.pools[k, jnp.clip(j, 0, n - 1)]
        why = jnp.where(bad_range, 1, jnp.where(bad_pool, 2, 0))
        first = state.free[k] & (why > 0) & (reason == 0)
        reason, role = jnp.where(first, why, reason), jnp.where(first, k, role)
    if problem.must_finish:  # the team stall: everyone acting idles at a last-chance epoch with work waiting
        answers = jnp.stack(answers)
        all_idle = jnp.all(~state.free | (answers == IDLE))
        idlers = state.free & state.pools.any(axis=1)
        stall = (reason == 0) & state.last_chance & all_idle & idlers.any()
        reason, role = jnp.where(stall, 3, reason), jnp.where(stall, first_argmax(idlers), role)
    return reason.astype(jnp.int32), role.astype(jnp.int32)


def apply(problem: JaxDispatchProblem, data, state: DState, answers) -> DState:
    """Dispatch the valid answers in order A, B, C (collisions idle); ``t`` becomes the next event."""
    n = state.pools.shape[1]
    machine, start, end, busy, load = state.machine, state.start, state.end, state.busy, state.load
    taken = jnp.zeros(n, bool)
    collisions = state.collisions
    t = state.t
    for k in range(N_RES):
        j = answers[k]
        jc = jnp.clip(j, 0, n - 1)
        wants = state.free[k] & (j >= 0)
        go = wants & ~taken[jc]
        collisions += (wants & taken[jc]).astype(jnp.int32)
        s = problem.numpy_problem.stage(k)
        d = data["dur"][k, jc, s]
        # Masked selects, not ``x.at[jc, s].set(where(go, v, x[jc, s]))``: with that read of
        # the old entry XLA copied the loop-carried (N, stages) arrays every epoch.
        hit = go & (jnp.arange(n)[:, None] == jc) & (jnp.arange(machine.shape[1]) == s)
        machine, start, end = jnp.where(hit, k, machine), jnp.where(hit, t, start), jnp.where(hit, t + d, end)
        busy = busy.at[k].set(jnp.where(go, t + d, busy[k]))
        load = load.at[k].add(jnp.where(go, d, 0.0))
        taken = taken.at[jc].set(taken[jc] | go)
    state = state._replace(machine=machine, start=start, end=end, busy=busy, load=load, collisions=collisions,
                           steps=state.steps + 1)
    nxt = next_event(data, busy, t)
    stopped = jnp.isinf(nxt)  # nothing is left to happen (all idled at a last-chance epoch)
    return state._replace(t=jnp.where(stopped, t, nxt), ended=stopped)  # the next epoch is entered by `epoch`


def epoch(problem: JaxDispatchProblem, policies: Mapping[str, Callable], data, state: DState,
          interface: str = "paper") -> DState:
    """Enter the epoch at or after ``state.t`` and play it (a state that is no longer
    :func:`running`, done or past the bound, comes back unchanged: the batched loop then
    need not freeze it, ``shrinking_while(idle_when_done=True)``).

    Entering at the top of the loop body, not after each dispatch, traces the inner
    event loop once (it dominates compile time otherwise).
    """
    state = enter(problem, data, state)
    answers = [as_job(r, policies[r](observe(problem, data, state, r, interface))) for r in ROLES]
    reason, role = verdict(problem, state, answers)
    voided = state._replace(reason=reason, void_role=role, steps=state.steps + 1)
    played = apply(problem, data, state, answers)
    new = jax.tree.map(lambda a, b: jnp.where(reason > 0, a, b), voided, played)
    return jax.tree.map(lambda a, b: jnp.where(running(problem, data, state), b, a), state, new)


def max_epochs(n_jobs: int, stages: int) -> int:
    """The bound on decision epochs (module docs): ``N`` releases and ``N * S`` completions."""
    return n_jobs * (stages + 1)


class Outcome(NamedTuple):
    objective: Any  # () raw objective (nan when voided)
    valid: Any  # () bool
    reason: Any  # () int32 index into REASONS
    void_role: Any  # () int32 0, 1, 2 = A, B, C; -1 if valid
    steps: Any  # () int32 decision epochs (the voiding one included)
    start: Any  # (N, S) start time of each operation (nan = not dispatched)
    end: Any  # (N, S) completion time of each operation (nan = not dispatched)
    machine: Any  # (N, S) int32 resource that ran each operation (-1 = not dispatched)
    collisions: Any  # () int32


def objective(problem: JaxDispatchProblem, data, state: DState):
    """Twin of ``DispatchEpisode.objective``; nan for a voided rollout."""
    completion = state.end[:, -1]
    if problem.must_finish:  # only after a stuck end: charged at the horizon
        completion = jnp.where(state.ended & (state.machine[:, -1] < 0), data["horizon"], completion)
    return jnp.where(state.reason > 0, jnp.nan, problem.objective(data, completion))


def rollout_one(problem: JaxDispatchProblem, policies: Mapping[str, Callable], data, interface: str = "paper",
                loop: str = "while") -> Outcome:
    """Every epoch of one instance (see the module docs for the bound and the two loops)."""
    play = functools.partial(epoch, problem, policies, data, interface=interface)
    state = init(problem, data)
    if loop == "while":
        final = jax.lax.while_loop(functools.partial(running, problem, data), play, state)
    else:
        final, _ = jax.lax.scan(lambda s, _: (play(s), None), state, None, length=epoch_bound(problem, data) + 1)
    return outcome(problem, data, final)


def epoch_bound(problem: JaxDispatchProblem, data) -> int:
    return max_epochs(data["release"].shape[0], problem.stages)  # + 1 iteration that only finds the end


def running(problem: JaxDispatchProblem, data, state) -> Any:
    return ~done(state) & (state.steps <= epoch_bound(problem, data))


def outcome(problem: JaxDispatchProblem, data, final) -> Outcome:
    return Outcome(objective(problem, data, final), final.reason == 0, final.reason, final.void_role, final.steps,
                   final.start, final.end, final.machine, final.collisions)


def rollout_batch(problem: JaxDispatchProblem, policies: Mapping[str, Callable], data, interface: str = "paper",
                  loop: str = "while") -> Outcome:
    """:func:`rollout_one` over a batch (leading axis of ``data``), the same epochs and
    results; the while loop drops finished episodes as they end
    (:func:`~relic_envs.core.jax_loop.shrinking_while`, ``problem.shrink_stages`` times)."""
    if loop != "while":
        return jax.vmap(lambda d: rollout_one(problem, policies, d, interface, loop))(data)
    state = jax.vmap(functools.partial(init, problem))(data)
    play = lambda d, s: epoch(problem, policies, d, s, interface=interface)
    final = shrinking_while(functools.partial(running, problem), play, data, state, stages=problem.shrink_stages,
                            idle_when_done=True)
    return jax.vmap(functools.partial(outcome, problem))(data, final)


def make_evaluator(problem: JaxDispatchProblem, policies: Mapping[str, Callable], *, interface: str = "paper",
                   x64: bool = True, loop: str = "while"):
    """A compiled ``run(batch) -> Outcome`` (numpy arrays with a batch axis) for a fixed team.

    Compilation happens on the first call for a batch shape; reuse the returned
    function to amortise it.
    """
    problem.role_table(interface)  # fail now, not at trace time, on an unknown interface
    if loop not in LOOPS:
        raise InvalidConfig(f"loop: {loop!r} is not one of {LOOPS}")
    check_team(policies)
    return batch_runner(lambda data: rollout_batch(problem, policies, data, interface, loop), x64=x64)


# -- getters shared by the benchmarks' role tables (twins of those in _dispatch.py) ---------
def t_now(v: View):
    return v.t


def my_busy_until(v: View):
    return jnp.maximum(v.busy[v.k], v.t)  # clamped to t_now: see _dispatch.my_busy_until


def busy_vector(v: View):
    return v.busy


def teammate_busy(v: View):
    return v.busy[jnp.array(v.teammates)]


def pool_dict(columns: Callable[[View], Any]) -> Getter:
    """Getter of a pool ``{"mask": int8 (N,), "value": columns(view)}``."""

    def get(v: View):
        return {"mask": v.pool.astype(jnp.int8), "value": columns(v)}

    return get
