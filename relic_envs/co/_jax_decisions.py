"""The decision loop of the combinatorial benchmarks in JAX: the constructive solver of
:mod:`relic_envs.co._construct` for HMTSP, FSTSP, FJAGV and MRCPS (needs
``pip install 'relic-envs[jax]'``).

**The contract.** A benchmark supplies a :class:`JaxDecisionProblem`: its static arrays
and a construction state (a dict of arrays holding ``done``) with

* ``start(data)``: the state at the first pending decision;
* ``pending(data, s, role=None) -> Pending``: who decides, per role the candidate mask
  (all false for the roles not deciding) and the fallback costs, whether ``-1`` (a skip)
  is a valid answer;
* ``observe(data, s, masks)``: per role the paper observation;
* ``commit(data, s, choice, role=None)``: take the deciding role's (valid) choice and
  move on to the next pending decision (or to ``done``);
* ``objective(data, s)`` and ``result(data, s)`` (the solution or schedule arrays).

``role``, where given, is a Python int: the deciding role wherever the loop knows it (in
a cycle of static roles), so only its candidates are needed. Two thin adapters give the
benchmarks their own form of the contract: :mod:`relic_envs.co._jax_construct` (HMTSP,
FSTSP: one ``decision`` at a time, turn order and skips) and
:mod:`relic_envs.co._jax_events` (FJAGV, MRCPS: per-role ``candidates``, and
``advance`` in event time until a decision is pending).

**The loop.** :func:`rollout_one` runs the decisions of one instance in a
``lax.while_loop`` until the construction is complete (at most ``max_decisions``, each
benchmark's bound, e.g. ``3 N``), ``jit(vmap(...))`` over a batch of same-size instances;
:func:`rollout_batch` runs one loop over the whole batch, where ``batched_loop`` is set
(measured per benchmark). Under ``vmap`` the loop runs until the batch's longest
construction completes and freezes the finished ones (JAX's batched ``while_loop``); a
fixed-length ``lax.scan`` of the bound gave the same results at 2-3x the time, because
the seeds finish in ``N`` (HMTSP) or about ``1.5 N`` (FSTSP) decisions.

**Turn order and repairs** follow ``Episode.step``: only the deciding role's answer
counts; it is repaired to the fallback (the candidate of least cost, ties: the lowest id,
as ``cheapest``) when it is ``-1`` where skipping is not allowed (FJAGV and MRCPS never
let a role skip), outside ``-1..n-1``, or not a candidate, and each repair is counted for
that role. JAX answers are always integers, so the ``"exception"`` and ``"type"`` reasons
cannot occur. All three policies run at every decision (under ``vmap`` a switch on the
role would run them all anyway), except where the roles take turns in a fixed cycle A, B,
C (``cyclic``: HMTSP's vehicles; MRCPS's project, task, worker) or in rounds A, B, C that
may pass over a role (``staged``: FSTSP): there each decision of a three-decision loop
body has a static role and runs its own role's observation and policy only.

Float64 by default (``jax.enable_x64``) so constructions match the numpy reference
exactly; ``x64=False`` runs float32/int32 (faster, no parity promise).
"""

from __future__ import annotations

import abc
import functools
import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from relic_envs.core.benchmark import ROLES
from relic_envs.core.jax_kit import Batch, batch_runner, check_team, one_size, stack_arrays
from relic_envs.errors import InvalidConfig, MissingExtra

try:
    import jax
    import jax.numpy as jnp
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtra("jax", "jax") from exc


NONE = -1  # the deciding role of a state with no decision pending (see :func:`rollout_batch`)
ALL_ROLES = tuple(range(len(ROLES)))  # role indices 0, 1, 2 (A, B, C)


class Pending(NamedTuple):
    """The pending decision of one construction state."""

    role: Any  # () int deciding role 0..2 (NONE where none is pending, if the state says so)
    masks: tuple  # per role (n_k,) bool candidates; all false for the roles not deciding (a static
    #               role's own mask may skip that test: the loop reads it only where the role decides)
    costs: tuple  # per role (n_k,) float fallback costs (only the candidates' matter)
    can_skip: Any  # () bool whether -1 is a valid answer


class Outcome(NamedTuple):
    """Per instance (numpy arrays with a batch axis once returned by ``run``)."""

    objective: Any  # (B,) raw objective (minimised)
    repairs: Any  # (B, 3) repairs per role A, B, C
    steps: Any  # (B,) decisions taken
    result: Any  # dict of the benchmark's result arrays (routes and sorties, or schedules)

    @property
    def solution(self):
        """``result`` under the routing benchmarks' name."""
        return self.result

    @property
    def schedule(self):
        """``result`` under the scheduling benchmarks' name."""
        return self.result


class JaxDecisionProblem(abc.ABC):
    """What one combinatorial benchmark defines in JAX; the decision loop is shared."""

    name: str
    # True where the roles decide in the fixed cycle A, B, C from the first decision on
    # (HMTSP's vehicles, MRCPS's project, task, worker): the loop then runs three
    # decisions per iteration, each with only its role's observation and policy, instead
    # of all three policies every time.
    cyclic: bool = False
    # True where each round of decisions goes A, B, C but a round may pass over roles
    # (FSTSP: no sortie, no truck stop): the loop runs one round per iteration, each
    # role's decision (its observation and policy only) where :meth:`turn` names it.
    staged: bool = False
    # One loop over the batch (:func:`rollout_batch`) instead of ``vmap`` of the
    # per-instance loop; set where it measured faster (HMTSP: 0.083-0.085 -> 0.069-0.072 s
    # per batch-1024 evaluation; FJAGV: 5.5-5.8 -> 4.2 s; FSTSP: 0.144-0.145 -> 0.141-0.144,
    # kept off).
    batched_loop: bool = False

    def turn(self, data, s):
        """The deciding role (0..2) of state ``s``; override with something cheaper."""
        return self.pending(data, s).role

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
    def start(self, data) -> dict:
        """The construction state at the first pending decision; holds ``done`` (bool)."""

    @abc.abstractmethod
    def pending(self, data, s, role: int | None = None) -> Pending:
        """The pending decision (meaningful only while not ``done``); ``role`` (static) is
        the deciding role where the loop knows it, so only its candidates are needed."""

    @abc.abstractmethod
    def observe(self, data, s, masks) -> dict[str, dict]:
        """Per role the paper observation (``masks[k]`` is all-false unless role ``k`` decides)."""

    @abc.abstractmethod
    def commit(self, data, s, choice, role: int | None = None) -> dict:
        """Take the (valid) ``choice`` of the deciding role and move on to the next pending
        decision (or ``done``). ``role`` (static) as in :meth:`pending`."""

    @abc.abstractmethod
    def objective(self, data, s) -> Any:
        """The raw objective (minimised) of the construction so far."""

    @abc.abstractmethod
    def result(self, data, s) -> dict:
        """The benchmark's solution or schedule arrays (``Outcome.result``)."""


def stack(problem: JaxDecisionProblem, instances: Sequence) -> Batch:
    """Stack same-size instances into a :class:`Batch`."""
    shape = one_size(instances, problem.shape)
    return Batch(stack_arrays([problem.arrays(inst) for inst in instances]), len(instances), shape)


# -- helpers of the benchmarks, their seeds and the loop -----------------------------------
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


def first_min_or_skip(mask, value):
    """The first id of least ``value`` among ``mask``, or -1 if ``mask`` is empty: a role's
    repair (``-1`` only where there is no candidate), and the routing seeds'
    ``int(candidate_ids[argmin(...)])`` with their empty-candidates guard."""
    return jnp.where(mask.any(), first_min(mask, value), -1).astype(jnp.int32)


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


def is_valid(mask, can_skip, j):
    """Whether answer ``j`` stands: a candidate id of ``mask`` (``0 <= j < n`` and on the
    mask), or ``-1`` where skipping is allowed."""
    n = mask.shape[0]
    return jnp.where(j == -1, can_skip, (j >= 0) & (j < n) & mask[jnp.clip(j, 0, n - 1)])


# -- one decision ---------------------------------------------------------------------------
def _answer(problem, policies, data, s, role: int | None = None):
    """``(pending, answer, valid)`` of one instance, repairs aside: the deciding role's answer
    and whether it stands. With a static ``role`` only its observation and policy run, and
    its answer is taken as is (the caller keeps it only where ``role`` decides); else all
    three policies run and the deciding role's answer is picked (``0`` and valid where no
    role decides)."""
    p = problem.pending(data, s, role)
    obs = problem.observe(data, s, p.masks)  # unused roles' observations are dead code to XLA

    def answer_of(k):
        j = jnp.asarray(policies[ROLES[k]](obs[ROLES[k]])).astype(jnp.int32)
        return j, is_valid(p.masks[k], p.can_skip, j)

    if role is not None:
        return (p, *answer_of(role))
    answer, valid = jnp.int32(0), jnp.bool_(True)
    for k in ALL_ROLES:
        j, ok = answer_of(k)
        mine = p.role == k
        answer, valid = jnp.where(mine, j, answer), jnp.where(mine, ok, valid)
    return p, answer, valid


def _fallback(p: Pending, role: int | None = None):
    """The deciding role's repair, its candidate of least cost (:func:`first_min_or_skip`),
    for one instance; ``role`` as in :func:`_answer`. The batched loops ask for the pending
    decision again inside their ``lax.cond``, so the costs are computed only there; a
    per-instance step passes the one it has (XLA did not merge the two in FSTSP's step)."""
    if role is not None:
        return first_min_or_skip(p.masks[role], p.costs[role])
    fallback = jnp.int32(-1)
    for k in ALL_ROLES:
        fallback = jnp.where(p.role == k, first_min_or_skip(p.masks[k], p.costs[k]), fallback)
    return fallback


def _step(problem, policies, data, carry, role: int | None = None):
    """One decision of one instance; ``role`` (static) is the deciding role where the caller knows it."""
    s, repairs, steps = carry
    p, answer, valid = _answer(problem, policies, data, s, role)
    choice = jnp.where(valid, answer, _fallback(p, role))
    repairs = repairs + ((jnp.arange(len(ROLES)) == p.role) & ~valid).astype(jnp.int32)
    return problem.commit(data, s, choice, role), repairs, steps + 1


def going_within(bound: int) -> Callable:
    """The loops' predicate on a ``(state, repairs, steps)`` carry: the construction is not
    complete and has taken fewer than ``bound`` decisions (per instance under a batch)."""

    def going(carry):
        s, _, steps = carry
        return ~s["done"] & (steps < bound)

    return going


def role_cycle(step: Callable, going: Callable, carry, turn: Callable | None = None):
    """Decisions 3t, 3t+1, 3t+2 of a fixed A, B, C cycle: ``step(carry, role)`` with a static
    role each; a decision the construction does not reach (``going`` false: complete, or
    the bound) leaves the carry as it is. With ``turn(carry) -> role`` the roles still
    come in the order A, B, C but may be passed over (a staged round: only the role
    whose turn it is decides)."""
    for role in ALL_ROLES:
        on = going(carry) if turn is None else going(carry) & (turn(carry) == role)
        stepped = step(carry, role)
        carry = jax.tree.map(lambda new, old, on=on: jnp.where(on, new, old), stepped, carry)
    return carry


# -- the loops ------------------------------------------------------------------------------
def rollout_one(problem: JaxDecisionProblem, policies: Mapping[str, Callable], data, bound: int) -> Outcome:
    """Every decision of one instance, until the construction is complete (at most ``bound``):
    one decision per iteration in free order, or one cycle (round) of static roles for a
    ``cyclic`` (``staged``) problem."""
    going = going_within(bound)
    if problem.cyclic or problem.staged:
        turn = (lambda c: problem.turn(data, c[0])) if problem.staged else None  # noqa: E731
        body = lambda c: role_cycle(lambda c, role: _step(problem, policies, data, c, role), going, c, turn)  # noqa: E731
    else:
        body = lambda c: _step(problem, policies, data, c)  # noqa: E731
    carry = (problem.start(data), jnp.zeros(len(ROLES), jnp.int32), jnp.int32(0))
    s, repairs, steps = jax.lax.while_loop(going, body, carry)
    return Outcome(problem.objective(data, s), repairs, steps, problem.result(data, s))


def rollout_batch(problem: JaxDecisionProblem, policies: Mapping[str, Callable], data, bound: int) -> Outcome:
    """Every decision of a batch (leading axis of ``data``), one batched loop; the same
    decisions as ``vmap(rollout_one)``: in rounds A, B, C for a ``cyclic`` or ``staged``
    problem (:func:`_rounds`), else in free order (:func:`_free_order`).

    Both skip what a ``vmap``-ped ``while_loop`` pays at every decision: the repairs'
    fallbacks (a least-cost search over the candidates) are computed only when some
    answer of the batch is invalid (a ``lax.cond`` on the batch, which a per-instance
    loop cannot have: under ``vmap`` both branches run), and the batched ``while_loop``'s
    own select over the whole carry at every iteration.
    """
    loop = _rounds if problem.cyclic or problem.staged else _free_order
    return loop(problem, policies, data, bound)


def _rounds(problem, policies, data, bound):
    """One round A, B, C per iteration: each role's decision (static: its observation and
    policy only) is taken by the instances still going whose turn it is, and the others
    keep their state (a select, as :func:`role_cycle` does)."""
    size = jax.tree.leaves(data)[0].shape[0]
    going = going_within(bound)

    def decide(carry, role: int):
        s, repairs, steps = carry
        on = going(carry)
        if problem.staged:
            on = on & (jax.vmap(problem.turn)(data, s) == role)
        _, answer, valid = jax.vmap(lambda d, s: _answer(problem, policies, d, s, role))(data, s)
        bad = on & ~valid

        def repaired():
            fallback = jax.vmap(lambda d, s: _fallback(problem.pending(d, s, role), role))(data, s)
            return jnp.where(valid, answer, fallback)

        choice = jax.lax.cond(bad.any(), repaired, lambda: answer)
        moved = jax.vmap(lambda d, s, c: problem.commit(d, s, c, role))(data, s, choice)
        s = jax.tree.map(lambda new, old: jnp.where(on.reshape(on.shape + (1,) * (new.ndim - 1)), new, old), moved, s)
        repairs = repairs.at[:, role].add(bad.astype(jnp.int32))
        return s, repairs, steps + on

    def body(carry):
        for role in ALL_ROLES:
            carry = decide(carry, role)
        return carry

    carry = (jax.vmap(problem.start)(data), jnp.zeros((size, len(ROLES)), jnp.int32), jnp.zeros(size, jnp.int32))
    s, repairs, steps = jax.lax.while_loop(lambda c: going(c).any(), body, carry)
    return Outcome(jax.vmap(problem.objective)(data, s), repairs, steps, jax.vmap(problem.result)(data, s))


def _free_order(problem, policies, data, bound):
    """One decision per iteration, whichever role's, for a problem whose state carries the
    deciding ``role``. The select that would freeze finished instances is not needed: an
    instance no longer going decides as role ``NONE``, which ``commit`` must leave as it
    is, bit for bit (a state with no pending decision stays so); its step and repair
    counts do not move (the batched-loop test checks it against :func:`rollout_one`)."""
    state = jax.vmap(problem.start)(data)
    if "role" not in state:
        raise InvalidConfig(f"{problem.name}: batched_loop needs roles that decide in rounds (cyclic or staged) "
                            "or a state that carries the deciding 'role' (NONE where none)")
    size = state["done"].shape[0]
    going = going_within(bound)

    def body(carry):
        s, repairs, steps = carry
        live = going(carry)
        s = {**s, "role": jnp.where(live, s["role"], NONE)}
        p, answer, valid = jax.vmap(functools.partial(_answer, problem, policies))(data, s)
        bad = live & ~valid

        def repaired():
            fallback = jax.vmap(lambda d, s: _fallback(problem.pending(d, s)))(data, s)
            return jnp.where(valid, answer, fallback)

        choice = jax.lax.cond(bad.any(), repaired, lambda: answer)
        s = jax.vmap(problem.commit)(data, s, choice)
        repairs = repairs + (bad[:, None] & (p.role[:, None] == jnp.arange(len(ROLES)))).astype(jnp.int32)
        return s, repairs, steps + live

    carry = (state, jnp.zeros((size, len(ROLES)), jnp.int32), jnp.zeros(size, jnp.int32))
    s, repairs, steps = jax.lax.while_loop(lambda c: going(c).any(), body, carry)
    return Outcome(jax.vmap(problem.objective)(data, s), repairs, steps, jax.vmap(problem.result)(data, s))


def make_evaluator(problem: JaxDecisionProblem, policies: Mapping[str, Callable], *, x64: bool = True):
    """A compiled ``run(batch) -> Outcome`` (numpy arrays with a batch axis) for a fixed team.

    Compilation happens on the first call for a batch shape; reuse the returned
    function to amortise it (``run.jitted`` is the ``jax.jit`` function of ``batch.data``).
    """
    check_team(policies)
    if problem.batched_loop:
        batched = lambda data: rollout_batch(problem, policies, data, problem.max_decisions(_first(data)))  # noqa: E731
    else:
        batched = jax.vmap(lambda data: rollout_one(problem, policies, data, problem.max_decisions(data)))
    return batch_runner(batched, x64=x64, prepare=functools.partial(_cast, x64=x64))


def entry_points(problem: JaxDecisionProblem, seeds: str) -> tuple[Callable, Callable, Callable]:
    """``stack, evaluator, seed_policies`` of a per-benchmark module (the contract in
    :mod:`relic_envs.co.jax_eval`), the same three for every benchmark:

    * ``stack(instances) -> Batch``: same-size instances stacked (:func:`stack` of ``problem``);
    * ``evaluator(policies, *, x64=True) -> run``: :func:`make_evaluator` of ``problem``;
    * ``seed_policies() -> dict role -> JAX policy``: the module ``seeds``' own (the twins of
      the paper seeds), imported at the first call.
    """

    def stack_instances(instances: Sequence) -> Batch:
        """Stack same-size instances of the benchmark for :func:`evaluator`."""
        return stack(problem, instances)

    def evaluator(policies: Mapping[str, Callable], *, x64: bool = True):
        """A compiled ``run(batch) -> Outcome`` for a team of JAX policies (``obs -> id``)."""
        return make_evaluator(problem, policies, x64=x64)

    def seed_policies() -> dict[str, Callable]:
        """The JAX twins of the benchmark's paper seeds, one policy per role."""
        return importlib.import_module(seeds).seed_policies()

    return stack_instances, evaluator, seed_policies


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
