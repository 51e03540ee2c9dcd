"""The constructive solver of :mod:`relic_envs.co._construct` in JAX, for the routing
benchmarks HMTSP and FSTSP (needs ``pip install 'relic-envs[jax]'``).

A benchmark supplies a :class:`JaxConstructProblem`: its static arrays, its construction
state (a dict of arrays holding ``done``), the pending decision (who decides, the
candidate mask over the role's identifier space, the fallback costs, whether ``-1`` is
allowed), the role observations, ``apply`` and the objective. This module runs the
decisions of one instance in a ``lax.while_loop`` until the construction is complete
(at most the benchmark's ``max_steps``, e.g. ``3 N``) and ``jit(vmap(...))`` over a batch
of same-size instances, or one loop over the whole batch (:func:`rollout_batch`, where
``batched_loop`` is set). Under ``vmap`` the loop runs until the batch's longest
construction completes and freezes the finished ones (JAX's batched ``while_loop``);
a fixed-length ``lax.scan`` of ``max_steps`` gave the same results at 2-3x the time,
because the seeds finish in ``N`` (HMTSP) or about ``1.5 N`` (FSTSP) decisions.

**Turn order and repairs** follow ``Episode.step``: only the deciding role's answer
counts; it is repaired to the fallback (the candidate of least cost, ties: the lowest id,
as ``cheapest``) when it is ``-1`` where skipping is not allowed, outside ``-1..n-1``, or
not a candidate, and each repair is counted for that role. JAX answers are always
integers, so the ``"exception"`` and ``"type"`` reasons cannot occur. All three policies
run at every decision (under ``vmap`` a switch on the role would run them all anyway),
except where the roles take turns in a fixed cycle (``cyclic``, HMTSP) or in rounds
A, B, C that may pass over a role (``staged``, FSTSP): there each decision of a
three-decision loop body runs its own role's policy only.

Batches, float32 casting and the ``Aligned`` observation encoding are shared with the
event-driven evaluators of :mod:`relic_envs.co._jax_events`. Float64 by default
(``jax.enable_x64``) so constructions match the numpy reference exactly; ``x64=False``
runs float32/int32 (faster, no parity promise).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from relic_envs.co._jax_events import (  # noqa: F401 - re-exported
    Batch,
    _cast,
    _first,
    _valid,
    aligned,
    first_min,
    going_within,
    jax,
    jnp,
    put,
    role_cycle,
    stack,
)
from relic_envs.core.benchmark import ROLES
from relic_envs.core.jax_devices import over_devices
from relic_envs.errors import InvalidConfig


class Decision(NamedTuple):
    """The pending decision of one construction state (``_construct.Decision`` as arrays)."""

    role: Any  # int32 () deciding role 0..2
    mask: Any  # bool (n,) feasible identifiers
    cost: Any  # float (n,) fallback cost of each identifier (only the masked ones matter)
    can_skip: Any  # bool () whether -1 is a valid answer


class Outcome(NamedTuple):
    """Per instance (numpy arrays with a batch axis once returned by ``run``)."""

    objective: Any  # (B,) raw objective (minimised)
    repairs: Any  # (B, 3) repairs per role A, B, C
    steps: Any  # (B,) decisions taken
    solution: Any  # dict of the benchmark's solution arrays (routes, sorties, counters)


class JaxConstructProblem(abc.ABC):
    """What one constructive routing benchmark defines in JAX; the decision loop is shared."""

    name: str
    # True where the roles decide in the fixed cycle A, B, C from the first decision on
    # (HMTSP's vehicles): the loop then runs three decisions per iteration, each with
    # only its role's observation and policy, instead of all three policies every time.
    cyclic: bool = False
    # True where each round of decisions goes A, B, C but a round may pass over roles
    # (FSTSP: no sortie, no truck stop): the loop runs one round per iteration, each
    # role's decision (its observation and policy only) where :meth:`turn` names it.
    staged: bool = False
    # One loop over the batch (:func:`rollout_batch`, ``cyclic`` or ``staged`` only) instead
    # of ``vmap`` of the per-instance loop; set where it measured faster (HMTSP: 0.083-0.085
    # -> 0.069-0.072 s per batch-1024 evaluation; FSTSP: 0.144-0.145 -> 0.141-0.144, kept off).
    batched_loop: bool = False

    def turn(self, data, s):
        """The deciding role (0..2) of state ``s``; override with something cheaper."""
        return self.decision(data, s).role

    @abc.abstractmethod
    def arrays(self, instance) -> dict[str, np.ndarray]:
        """Static per-instance arrays (float64 / int64 / bool; cast for float32 at run time)."""

    @abc.abstractmethod
    def shape(self, instance) -> tuple[int, ...]:
        """The size key: instances stack only when it is equal."""

    @abc.abstractmethod
    def max_steps(self, data) -> int:
        """The numpy ``max_steps`` from the (static) array shapes: the scan's length."""

    @abc.abstractmethod
    def init(self, data) -> dict:
        """The construction state before the first decision; holds ``done`` (bool)."""

    @abc.abstractmethod
    def decision(self, data, s, role: int | None = None) -> Decision:
        """The pending decision (meaningful only while not ``done``); ``role`` (static) is
        the deciding role where the loop knows it, so only its candidates are needed."""

    @abc.abstractmethod
    def observe(self, data, s, masks) -> dict[str, dict]:
        """Per role the paper observation (``masks[k]`` is all-false unless role ``k`` decides)."""

    @abc.abstractmethod
    def apply(self, data, s, choice, role: int | None = None) -> dict:
        """Commit the (valid) ``choice`` of the deciding role; updates ``done``. ``role``
        (static) as in :meth:`decision`: computing the same rows there and here lets XLA
        compute them once."""

    @abc.abstractmethod
    def objective(self, data, s) -> Any:
        ...

    @abc.abstractmethod
    def solution(self, data, s) -> dict:
        ...


def is_valid(d: Decision, j):
    """Whether answer ``j`` stands for ``d``: a candidate id, or ``-1`` where skipping is allowed."""
    return jnp.where(j == -1, d.can_skip, _valid(d.mask, j))


def fallback(d: Decision):
    """``d``'s repair: the candidate of least cost, ``-1`` where there is none (only where
    skipping is allowed)."""
    return jnp.where(d.mask.any(), first_min(d.mask, d.cost), -1)


def repaired(d: Decision, j) -> tuple[Any, Any]:
    """``(choice, valid)``: the answer ``j`` when valid for ``d``, else ``d``'s fallback."""
    valid = is_valid(d, j)
    return jnp.where(valid, j, fallback(d)).astype(jnp.int32), valid


def _answer(problem, policies, data, s, static_role: int | None = None):
    """``(decision, answer)`` of one instance, repairs aside; ``static_role`` is the deciding
    role where the caller knows it (only its observation and policy are needed)."""
    d = problem.decision(data, s, static_role)
    masks = tuple(d.mask & (d.role == k) for k in range(len(ROLES)))
    obs = problem.observe(data, s, masks)  # unused roles' observations are dead code to XLA
    if static_role is None:
        answers = jnp.stack([jnp.asarray(policies[r](obs[r])).astype(jnp.int32) for r in ROLES])
        return d, answers[d.role]
    role = ROLES[static_role]
    return d, jnp.asarray(policies[role](obs[role])).astype(jnp.int32)


def _step(problem, policies, data, carry, static_role: int | None = None):
    """One decision; ``static_role`` is the deciding role where the caller knows it."""
    s, repairs, steps = carry
    d, answer = _answer(problem, policies, data, s, static_role)
    choice, valid = repaired(d, answer)
    repairs = repairs + (jnp.arange(len(ROLES)) == d.role) * ~valid
    return problem.apply(data, s, choice, static_role), repairs, steps + 1


def rollout_one(problem: JaxConstructProblem, policies: Mapping[str, Callable], data) -> Outcome:
    """Every decision of one instance, until the construction is complete (at most ``max_steps``)."""
    bound = problem.max_steps(data)

    going = going_within(bound)

    if problem.cyclic or problem.staged:
        turn = (lambda c: problem.turn(data, c[0])) if problem.staged else None  # noqa: E731
        body = lambda c: role_cycle(lambda c, role: _step(problem, policies, data, c, role), going, c, turn)  # noqa: E731
    else:
        body = lambda c: _step(problem, policies, data, c)  # noqa: E731
    carry = (problem.init(data), jnp.zeros(len(ROLES), jnp.int32), jnp.int32(0))
    s, repairs, steps = jax.lax.while_loop(going, body, carry)
    return Outcome(problem.objective(data, s), repairs, steps, problem.solution(data, s))


def rollout_batch(problem: JaxConstructProblem, policies: Mapping[str, Callable], data, bound: int) -> Outcome:
    """Every decision of a batch (leading axis of ``data``) of a ``cyclic`` or ``staged``
    problem, one batched loop; the same decisions as ``vmap(rollout_one)``.

    Each iteration runs one round A, B, C; each role's decision is taken by the instances
    still going whose turn it is, and the others keep their state (a select, as
    ``role_cycle`` does). What ``vmap(rollout_one)`` paid besides: the repairs' fallback
    (a least-cost search over the candidates) at every decision, computed here only when
    some answer of the batch is invalid (a ``lax.cond`` on the batch), and the batched
    ``while_loop``'s own select over the whole carry at every iteration. Used where
    ``JaxConstructProblem.batched_loop`` is set (measured per benchmark).
    """
    size = jax.tree.leaves(data)[0].shape[0]

    going = going_within(bound)

    def decide(carry, role: int):
        s, repairs, steps = carry
        on = going(carry)
        if problem.staged:
            on = on & (jax.vmap(problem.turn)(data, s) == role)
        d, answer = jax.vmap(lambda dd, ss: _answer(problem, policies, dd, ss, role))(data, s)
        valid = jax.vmap(is_valid)(d, answer)
        bad = on & ~valid
        choice = jax.lax.cond(bad.any(), lambda: jnp.where(valid, answer, jax.vmap(fallback)(d)), lambda: answer)
        choice = choice.astype(jnp.int32)
        moved = jax.vmap(lambda dd, ss, c: problem.apply(dd, ss, c, role))(data, s, choice)
        s = jax.tree.map(lambda new, old: jnp.where(on.reshape(on.shape + (1,) * (new.ndim - 1)), new, old), moved, s)
        repairs = repairs.at[:, role].add(bad.astype(jnp.int32))
        return s, repairs, steps + on

    def body(carry):
        for role in range(len(ROLES)):
            carry = decide(carry, role)
        return carry

    carry = (jax.vmap(problem.init)(data), jnp.zeros((size, len(ROLES)), jnp.int32), jnp.zeros(size, jnp.int32))
    s, repairs, steps = jax.lax.while_loop(lambda c: going(c).any(), body, carry)
    return Outcome(jax.vmap(problem.objective)(data, s), repairs, steps, jax.vmap(problem.solution)(data, s))


def make_evaluator(problem: JaxConstructProblem, policies: Mapping[str, Callable], *, x64: bool = True):
    """A compiled ``run(batch) -> Outcome`` (numpy arrays with a batch axis) for a fixed team.

    Compilation happens on the first call for a batch shape; reuse the returned
    function to amortise it (``run.jitted`` is the ``jax.jit`` function of ``batch.data``).
    """
    missing = [r for r in ROLES if r not in policies]
    if missing:
        raise InvalidConfig(f"policies: need a JAX policy for every role {list(ROLES)}; missing {missing}")
    if problem.batched_loop and not (problem.cyclic or problem.staged):
        raise InvalidConfig(f"{problem.name}: batched_loop needs roles that decide in rounds (cyclic or staged)")
    if problem.batched_loop:
        batched = jax.jit(over_devices(lambda data: rollout_batch(problem, policies, data, problem.max_steps(_first(data)))))
    else:
        batched = jax.jit(over_devices(jax.vmap(lambda data: rollout_one(problem, policies, data))))

    def run(batch: Batch) -> Outcome:
        with jax.enable_x64(x64):
            out = batched(_cast(batch.data, x64))
            return jax.tree_util.tree_map(np.asarray, out)

    run.jitted = lambda data: batched(_cast(data, x64))
    run.jitted.lower = lambda data: batched.lower(_cast(data, x64))
    return run


def first_min_or_skip(mask, value):
    """The first id of least ``value`` among ``mask``, or -1 if ``mask`` is empty (the seeds'
    ``int(candidate_ids[argmin(...)])`` with their empty-candidates guard)."""
    return jnp.where(mask.any(), first_min(mask, value), -1).astype(jnp.int32)
