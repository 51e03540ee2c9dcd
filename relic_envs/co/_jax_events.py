"""The constructive solver of :mod:`relic_envs.co._construct` in JAX, for the event-driven
scheduling benchmarks (FJAGV, MRCPS; needs ``pip install 'relic-envs[jax]'``).

A benchmark supplies a :class:`JaxEventProblem`: its static arrays, its construction
state (a dict of arrays), the pending decision (per role a candidate mask over the
role's identifier space and the fallback costs), the role observations, ``apply`` and
``advance`` (jump event time until a decision is pending or the construction is
complete). This module runs the decisions of a batch of same-size instances in one
batched loop (:func:`rollout_batch`; a problem whose roles decide in a fixed cycle runs
``jit(vmap(...))`` of the per-instance loop :func:`rollout_one`).

**Repairs** follow ``Episode.step``: the deciding role's answer is repaired to the
fallback, the candidate of least cost (ties: the lowest id, as ``cheapest``), when it
is outside ``0..n-1`` (``-1`` included: neither benchmark lets a role skip) or not a
candidate; each repair is counted for that role. JAX answers are always integers, so
the ``"exception"`` and ``"type"`` reasons cannot occur.

**Bound.** The loop runs while the construction is incomplete, at most
``problem.max_decisions(shape)`` times (each benchmark derives its bound: one decision
per role per operation or task); all three policies are evaluated at every decision
(under ``vmap`` a switch on the role would evaluate them all anyway) and the answers of
the roles not deciding are ignored; the repairs' fallbacks are computed only when some
answer of the batch needs one, except where the roles decide in a fixed cycle
(``cyclic``, MRCPS): there each decision of a three-decision loop body runs its own
role's policy only.

Float64 by default (``jax.enable_x64``) so schedules match the numpy reference exactly;
``x64=False`` runs float32/int32 (faster, no parity promise).
"""

from __future__ import annotations

import abc
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from relic_envs.core.benchmark import ROLES
from relic_envs.core.jax_devices import over_devices
from relic_envs.errors import InvalidConfig, MissingExtra

try:
    import jax
    import jax.numpy as jnp
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtra("jax", "jax") from exc


NONE = -1  # ``role`` of a state with no decision pending (the construction complete)
ALL_ROLES = tuple(range(len(ROLES)))  # role indices 0, 1, 2 (A, B, C)


class Batch(NamedTuple):
    """Stacked static data of a batch: ``data[k]`` has a leading batch axis."""

    data: dict[str, Any]
    size: int
    shape: tuple[int, ...]  # the benchmark's size key (e.g. number of operations)


class Outcome(NamedTuple):
    """Per instance (numpy arrays with a batch axis once returned by ``run``)."""

    objective: Any  # (B,) raw objective (minimised)
    repairs: Any  # (B, 3) repairs per role A, B, C
    steps: Any  # (B,) decisions taken
    schedule: Any  # dict of the benchmark's schedule arrays (start / finish / assignment)


class JaxEventProblem(abc.ABC):
    """What one event-driven benchmark defines in JAX; the decision loop is shared."""

    name: str
    # Where the roles decide in the fixed cycle A, B, C (MRCPS's project, task, worker),
    # the loop runs one cycle per iteration with only the deciding role's policy, and
    # ``advance`` only after the roles in ``advances_after`` (after MRCPS's A and B the
    # next decision is always pending at the same time: advancing would not move).
    cyclic: bool = False
    advances_after: tuple[bool, bool, bool] = (True, True, True)

    @abc.abstractmethod
    def arrays(self, instance) -> dict[str, np.ndarray]:
        """Static per-instance arrays (float64 / int64 / bool; cast for float32 at run time)."""

    @abc.abstractmethod
    def shape(self, instance) -> tuple[int, ...]:
        """The size key: instances stack only when it is equal."""

    @abc.abstractmethod
    def max_decisions(self, data) -> int:
        """An upper bound on the decisions of one construction, from the (static) array shapes."""

    @abc.abstractmethod
    def init(self, data) -> dict:
        """The construction state before the first ``advance``; must hold ``done`` (bool) and ``role`` (int)."""

    @abc.abstractmethod
    def advance(self, data, s) -> dict:
        """Jump event time until a decision is pending (``role``) or the construction is complete (``done``)."""

    @abc.abstractmethod
    def candidates(self, data, s) -> tuple[tuple[Any, Any], ...]:
        """Per role ``(mask, cost)`` over its identifier space; only the deciding role's is used."""

    @abc.abstractmethod
    def observe(self, data, s, masks) -> dict[str, dict]:
        """Per role the paper observation (``masks[k]`` is all-false unless role ``k`` decides)."""

    @abc.abstractmethod
    def apply(self, data, s, choice) -> dict:
        """Commit the (valid) ``choice`` of the deciding role. With ``s["role"] == NONE`` it
        must return ``s`` unchanged, bit for bit, and ``advance`` of an advanced state
        must change nothing: :func:`rollout_batch` relies on both to let finished
        instances idle (the batched-loop test checks it against :func:`rollout_one`)."""

    @abc.abstractmethod
    def objective(self, data, s) -> Any:
        ...

    @abc.abstractmethod
    def schedule(self, data, s) -> dict:
        ...


def stack(problem: JaxEventProblem, instances: Sequence) -> Batch:
    """Stack same-size instances into a :class:`Batch`."""
    if len(instances) == 0:
        raise InvalidConfig("instances: need at least one instance to stack, got an empty sequence")
    shapes = sorted({problem.shape(inst) for inst in instances})
    if len(shapes) != 1:
        raise InvalidConfig(f"instances: a batch needs one size; got sizes {shapes} (stack each size apart)")
    per_instance = [problem.arrays(inst) for inst in instances]
    data = {key: np.stack([a[key] for a in per_instance]) for key in per_instance[0]}
    return Batch(data, len(instances), shapes[0])


def put(x, i, value, on=True):
    """``x`` with row ``i`` set to ``value`` where ``on``: ``x.at[i].set`` as a one-hot select,
    which XLA vectorises under ``vmap`` (a batched scatter is several times slower on CPU)."""
    hit = (jnp.arange(x.shape[0]) == i) & on
    return jnp.where(hit.reshape(hit.shape + (1,) * (x.ndim - 1)), value, x)


def first_min(mask, cost):
    """The first id (ascending) of least ``cost`` among ``mask`` (``cheapest``'s fallback).

    ``argmin``'s result (0 when ``mask`` is empty) from two plain reductions, a min and
    a min over the ids that reach it: XLA's CPU backend vectorises those and not the
    paired value-and-index reduction of ``argmin`` (2x faster at 300 ids, batch 1024).
    """
    masked = jnp.where(mask, cost, jnp.inf)
    ids = jnp.arange(masked.shape[-1], dtype=jnp.int32)
    return jnp.min(jnp.where(masked == masked.min(), ids, masked.shape[-1]))


def lex_first(mask, *keys):
    """The first id (ascending) among ``mask`` ordered by ``keys`` (primary first): the
    twin of ``ids[np.lexsort((..., secondary, primary))[0]]`` (lexsort is stable); -1 if
    ``mask`` is empty. Keys may be infinite, not NaN (the order is then undefined).

    One pass: a variadic reduction over ``(not on the mask, key..., id)`` whose combiner
    keeps the lexicographically smaller tuple (a total order, ids being distinct, so the
    combiner is associative and commutative as ``lax.reduce`` needs). Per key a masked
    minimum and a narrowed mask, then a first index, read the arrays 2k + 1 times, each
    masked key written out for its reduction (FJAGV: 3.0 -> 2.2 s per batch-1024
    evaluation, ``benchmarks/RESULTS.md``).
    """
    ids = jnp.arange(mask.shape[-1], dtype=jnp.int32)
    operands = ((~mask).astype(jnp.int8), *(jnp.where(mask, key, jnp.inf) for key in keys), ids)
    identity = tuple(jnp.asarray(x, o.dtype) for x, o in zip((1, *(jnp.inf,) * len(keys), mask.shape[-1]), operands))
    smallest = jax.lax.reduce(operands, identity, _lex_smaller, (mask.ndim - 1,))
    return jnp.where(smallest[0] == 0, smallest[-1], -1)


def _lex_smaller(a, b):
    """Of two tuples, elementwise, the lexicographically smaller (the last entries, ids, differ)."""
    less = a[-1] < b[-1]
    for x, y in zip(reversed(a[:-1]), reversed(b[:-1])):
        less = (x < y) | ((x == y) & less)
    return tuple(jnp.where(less, x, y) for x, y in zip(a, b))


def aligned(mask, values):
    """An ``Aligned`` observation entry: ``{"mask": int8, "value": float}``, 0 off the mask."""
    return {"mask": mask.astype(jnp.int8), "value": jnp.where(mask, values, 0.0).astype(jnp.result_type(float))}


def _step(problem, policies, data, carry, static_role: int | None = None):
    """One decision; ``static_role`` is the deciding role where the caller knows it."""
    s, repairs, steps = carry
    roles = ALL_ROLES if static_role is None else (static_role,)
    answer, valid = _answer(problem, policies, data, s, roles)
    choice = jnp.where(valid, answer, _fallback(problem, data, s, roles))
    s = problem.apply(data, s, choice)
    if static_role is None or problem.advances_after[static_role]:
        s = problem.advance(data, s)
    repairs = repairs.at[carry[0]["role"]].add((~valid).astype(jnp.int32))
    return s, repairs, steps + 1


def going_within(bound: int) -> Callable:
    """The loops' predicate on a ``(state, repairs, steps)`` carry: the construction is not
    complete and has taken fewer than ``bound`` decisions (per instance under a batch)."""

    def going(carry):
        s, _, steps = carry
        return ~s["done"] & (steps < bound)

    return going


def _valid(mask, j):
    """Whether answer ``j`` is one of ``mask``'s candidates (``0 <= j < n`` and on the mask)."""
    return (j >= 0) & (j < mask.shape[0]) & mask[jnp.clip(j, 0, mask.shape[0] - 1)]


def _answer(problem, policies, data, s, roles=ALL_ROLES):
    """The deciding role's answer (repairs aside) and whether it is valid, for one instance;
    only the policies of ``roles`` run (``0`` and valid where none of them decides)."""
    role = s["role"]
    masks = tuple(m & (role == k) for k, (m, _) in enumerate(problem.candidates(data, s)))
    obs = problem.observe(data, s, masks)  # unused roles' observations are dead code to XLA
    answer, valid = jnp.int32(0), jnp.bool_(True)
    for k in roles:
        j = jnp.asarray(policies[ROLES[k]](obs[ROLES[k]])).astype(jnp.int32)
        mine = role == k
        answer = jnp.where(mine, j, answer)
        valid = jnp.where(mine, _valid(masks[k], j), valid)
    return answer, valid


def _fallback(problem, data, s, roles=ALL_ROLES):
    """The deciding role's repair, its candidate of least cost (``first_min``), for one instance."""
    fallback = jnp.int32(0)
    picked = problem.candidates(data, s)
    for k in roles:
        mask, cost = picked[k]
        fallback = jnp.where(s["role"] == k, first_min(mask & (s["role"] == k), cost), fallback)
    return fallback


def rollout_batch(problem: JaxEventProblem, policies: Mapping[str, Callable], data, bound: int) -> Outcome:
    """Every decision of a batch (leading axis of ``data``), one batched loop; the same
    decisions as ``vmap(rollout_one)``, for a problem that does not decide in a cycle.

    Two things a ``vmap``-ped ``while_loop`` pays at every decision are skipped: the
    repairs' fallbacks (a least-cost search per role) are computed only when some answer
    of the batch is invalid (a ``lax.cond`` on the batch, which a per-instance loop cannot
    have: under ``vmap`` both branches run), and the select that freezes finished
    instances is not needed, because a finished instance decides as role ``NONE``
    (``apply`` leaves the state as it is) and ``advance`` of an advanced state changes
    nothing; its step and repair counts do not move.
    """
    state = jax.vmap(lambda d: problem.advance(d, problem.init(d)))(data)
    size = state["done"].shape[0]

    going = going_within(bound)

    def body(carry):
        s, repairs, steps = carry
        live = going(carry)
        role = jnp.where(live, s["role"], NONE)
        s = {**s, "role": role}
        answer, valid = jax.vmap(functools.partial(_answer, problem, policies))(data, s)
        bad = live & ~valid
        choice = jax.lax.cond(bad.any(), lambda: jnp.where(valid, answer, jax.vmap(functools.partial(_fallback, problem))(data, s)),
                              lambda: answer)
        s = jax.vmap(lambda d, s, c: problem.advance(d, problem.apply(d, s, c)))(data, s, choice)
        repairs = repairs + (bad[:, None] & (role[:, None] == jnp.arange(len(ROLES)))).astype(jnp.int32)
        return s, repairs, steps + live

    carry = (state, jnp.zeros((size, len(ROLES)), jnp.int32), jnp.zeros(size, jnp.int32))
    s, repairs, steps = jax.lax.while_loop(lambda c: going(c).any(), body, carry)
    return Outcome(jax.vmap(problem.objective)(data, s), repairs, steps, jax.vmap(problem.schedule)(data, s))


def role_cycle(step: Callable, going: Callable, carry, turn: Callable | None = None):
    """Decisions 3t, 3t+1, 3t+2 of a fixed A, B, C cycle: ``step(carry, role)`` with a static
    role each; a decision the construction does not reach (``going`` false: complete, or
    the bound) leaves the carry as it is. With ``turn(carry) -> role`` the roles still
    come in the order A, B, C but may be passed over (a staged round: only the role
    whose turn it is decides)."""
    for role in range(len(ROLES)):
        on = going(carry) if turn is None else going(carry) & (turn(carry) == role)
        stepped = step(carry, role)
        carry = jax.tree.map(lambda new, old, on=on: jnp.where(on, new, old), stepped, carry)
    return carry


def rollout_one(problem: JaxEventProblem, policies: Mapping[str, Callable], data, bound: int) -> Outcome:
    """Every decision of one instance, until the construction is complete (at most ``bound``)."""
    s = problem.advance(data, problem.init(data))

    going = going_within(bound)

    if problem.cyclic:
        body = lambda c: role_cycle(lambda c, role: _step(problem, policies, data, c, role), going, c)  # noqa: E731
    else:
        body = lambda c: _step(problem, policies, data, c)  # noqa: E731
    carry = (s, jnp.zeros(len(ROLES), jnp.int32), jnp.int32(0))
    s, repairs, steps = jax.lax.while_loop(going, body, carry)
    return Outcome(problem.objective(data, s), repairs, steps, problem.schedule(data, s))


def make_evaluator(problem: JaxEventProblem, policies: Mapping[str, Callable], *, x64: bool = True):
    """A compiled ``run(batch) -> Outcome`` (numpy arrays with a batch axis) for a fixed team.

    Compilation happens on the first call for a batch shape; reuse the returned
    function to amortise it (``run.jitted`` is the ``jax.jit`` function of ``batch.data``).
    """
    missing = [r for r in ROLES if r not in policies]
    if missing:
        raise InvalidConfig(f"policies: need a JAX policy for every role {list(ROLES)}; missing {missing}")
    if problem.cyclic:
        batched = jax.jit(over_devices(jax.vmap(lambda data: rollout_one(problem, policies, data, problem.max_decisions(data)))))
    else:
        batched = jax.jit(over_devices(lambda data: rollout_batch(problem, policies, data, problem.max_decisions(_first(data)))))

    def run(batch: Batch) -> Outcome:
        with jax.enable_x64(x64):
            out = batched(_cast(batch.data, x64))
            return jax.tree_util.tree_map(np.asarray, out)

    run.jitted = lambda data: batched(_cast(data, x64))
    run.jitted.lower = lambda data: batched.lower(_cast(data, x64))
    return run


def _first(data):
    """The first instance of a batch (its arrays' shapes are every instance's)."""
    return jax.tree.map(lambda a: a[0], data)


def _cast(data: Mapping[str, np.ndarray], x64: bool) -> dict[str, np.ndarray]:
    """float64 / int64 arrays as float32 / int32 when running without x64."""
    if x64:
        return dict(data)
    out = {}
    for k, v in data.items():
        kind = np.asarray(v).dtype.kind
        out[k] = v.astype(np.float32) if kind == "f" else v.astype(np.int32) if kind in "iu" else v
    return out
