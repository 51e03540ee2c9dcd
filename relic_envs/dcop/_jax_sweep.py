"""The functional JAX twin of the synchronous-sweep DCOP simulator (``_sweep.py``).

Pure functions over pytrees, vmapped over a batch of instances, with all 50 sweeps
inside one compiled program (``jit`` + ``vmap`` + ``lax.scan``):

- :func:`stack` turns same-size instances into a :class:`Batch` (static arrays).
- ``init(data) -> JState``, ``observe(problem, data, state, role) -> obs``,
  ``step(data, state, actions) -> JState``, ``objective(problem, data, state)`` work on
  ONE instance; :func:`rollout_batch` vmaps them over a batch inside one scan, and
  :func:`make_evaluator` compiles it.

A benchmark supplies a :class:`JaxProblem`: its static arrays, cost, landscape and role
features in ``jax.numpy``. Observations carry the same content as the PettingZoo env's
(same keys, same definitions); a JAX policy is ``obs -> values`` on one instance.

Precision: by default the evaluator traces and runs with 64-bit types enabled (inside
``jax.enable_x64``), so its decisions and costs match the numpy reference; pass
``x64=False`` for float32 speed where exact parity does not matter.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from relic_envs.core.benchmark import ROLES
from relic_envs.core.instance import Instance
from relic_envs.core.jax_kit import Batch, batch_runner, integer_answer, stack_arrays
from relic_envs.dcop._sweep import SWEEPS
from relic_envs.errors import MissingExtra

try:
    import jax
    import jax.numpy as jnp
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtra("jax", "jax") from exc

_M1, _M2, _GOLDEN, _STREAM = 0x7FEB352D, 0x846CA68B, 0x9E3779B9, 0x632BE5AB


def mix32(x):
    """The same 32-bit hash as ``relic_envs.dcop._explore.mix32``."""
    x = x.astype(jnp.uint32)
    x = x ^ (x >> 16)
    x = x * jnp.uint32(_M1)
    x = x ^ (x >> 15)
    x = x * jnp.uint32(_M2)
    return x ^ (x >> 16)


def exploration(seed, t, n_vars: int, width: int, stream=0, rows=None, columns: bool = False):
    """``u`` of sweep ``t``, bit for bit equal to ``_explore.exploration``.

    ``rows`` (variable indices) gives ``exploration(...)[rows]`` without computing the
    other rows, hashed from the indices directly. ``columns``: the same numbers built
    one column at a time and stacked (see ``JaxProblem.columns``).
    """
    key = mix32(jnp.asarray(seed, jnp.uint32) ^ mix32(jnp.asarray(t, jnp.uint32) * jnp.uint32(_GOLDEN)))
    key = key ^ mix32(jnp.asarray(stream, jnp.uint32) * jnp.uint32(_STREAM))
    if rows is None:
        rows = jnp.arange(n_vars, dtype=jnp.uint32)
    first = rows.astype(jnp.uint32) * jnp.uint32(width)  # each row's first counter

    def uniforms(counter):
        bits = mix32(mix32(counter ^ key) ^ key)
        return (bits >> 8).astype(jnp.result_type(float)) * (1.0 / (1 << 24))

    if columns:
        return stack_columns([uniforms(first + jnp.uint32(j)) for j in range(width)])
    return uniforms(first[:, None] + jnp.arange(width, dtype=jnp.uint32)[None, :])


def stack_columns(columns):
    """``(m, k)`` from ``k`` columns of shape ``(m,)``. A consumer that reads column ``j``
    back (``values[:, j]``) gets that column's own expression: XLA forwards a slice of
    the stack to its operand, so nothing ``(m, k)``-shaped is written to memory."""
    return jnp.stack(columns, axis=1)


def first_argmin(values):
    """``values.argmin(axis=-1)`` (the first index of the least value) as a running minimum.

    The last axis of a DCOP landscape is the domain (3 to 20 values). XLA's CPU backend
    evaluates ``argmin``'s paired value-and-index reduction element by element, with its
    fused producers (masks, gathers) inside; a running minimum over the domain is plain
    elementwise work that it vectorises over the variables (``benchmarks/RESULTS.md``:
    DiMES 14.2 -> 11.4 ms per sweep at batch 1024). ``<`` keeps the first of tied
    values, and an all-``inf`` row gives 0, as ``argmin`` does.
    """
    best = values[..., 0]
    index = jnp.zeros(best.shape, jnp.int32)
    for j in range(1, values.shape[-1]):
        lower = values[..., j] < best
        best = jnp.where(lower, values[..., j], best)
        index = jnp.where(lower, jnp.int32(j), index)
    return index


class JState(NamedTuple):
    """What changes during an episode (one instance)."""

    x: Any  # (N,) int32 current assignment
    x_prev: Any  # (N,) int32 assignment one sweep earlier (x itself at t = 0)
    local_prev: Any  # (N,) local cost at the previous state (0 at t = 0)
    t: Any  # () int32 sweep index
    valid: Any  # () bool: False once a policy returned an out-of-domain value


class JaxProblem(abc.ABC):
    """One DCOP benchmark in ``jax.numpy`` (per-instance functions)."""

    domain: int
    # Fields of ``arrays`` whose last axis varies between instances (neighbour lists),
    # with their fill value: :func:`stack` pads them to the batch's longest.
    ragged: Mapping[str, int] = {}
    # Instances per block when a batch runs block after block (``lax.map``), so that a
    # block's per-sweep arrays stay nearer the cores' caches; ``None``: the whole batch
    # at once. Set where measured (``benchmarks/RESULTS.md``); same decisions either way.
    block: int | None = None
    # Column by column (True): the role's ``u`` hashed from its variables' indices one
    # column at a time, its landscape rows built the same way (``role_landscape`` must
    # then return :func:`stack_columns` of its columns), and each role's answer read by
    # one consumer only (its domain test is read off the written assignment). A policy
    # that works on columns too (DSA: ``baselines.dcop.dsa_jax``) then compiles into one
    # loop over the role's variables, with no ``(m, domain)`` array in memory; XLA
    # otherwise wrote each intermediate of a row out, and computed the answer twice (for
    # the write and for the test). Same decisions either way. Measured at batch 1024
    # (``benchmarks/RESULTS.md``): DiMES 6.0 -> 4.1, SHDS 9.3 -> 4.8 ms per sweep; for
    # 3-4 values the row layout stays faster (DGC 1.8 -> 2.9, SensorDCSP 3.2 -> 4.5).
    columns: bool = False
    # Roles in contiguous rows (True): :func:`rollout_batch` renumbers each instance's
    # variables once, before the first sweep, so that role A owns rows ``0..m_A-1``, B the
    # next ``m_B`` and C the rest (each role's variables in their original order), and
    # renumbers them back after the last. A role's rows are then static slices: no
    # gather of its landscape rows, assignment or ``u`` rows per sweep, and the new
    # assignment is the concatenation of the roles' answers, not three scatters. ``u``
    # stays a function of the original indices, so the decisions are the same. Needs
    # :meth:`relabel`. Measured at batch 1024 (``benchmarks/RESULTS.md``).
    contiguous: bool = False

    def relabel(self, data: Mapping[str, Any], inverse) -> dict[str, Any]:
        """The benchmark's own arrays of one instance with variable ``i`` renamed
        ``inverse[i]`` (``x0``, ``owned_*`` and the peer lists are renamed by
        :func:`contiguous_roles`); needed where :attr:`contiguous` is set."""
        raise NotImplementedError(f"{type(self).__name__} sets contiguous but does not relabel its arrays")

    @abc.abstractmethod
    def arrays(self, instance: Instance) -> dict[str, np.ndarray]:
        """The instance's static data as numpy arrays (stacked by :func:`stack`)."""

    @abc.abstractmethod
    def cost(self, data: Mapping[str, Any], x):
        """Global cost of assignment ``x``."""

    @abc.abstractmethod
    def landscape(self, data: Mapping[str, Any], x):
        """``(N, domain)`` local cost landscape (same definition as the numpy reference)."""

    def sweep_inputs(self, data: Mapping[str, Any], x) -> Any:
        """What every role's landscape rows read that does not depend on the role (DiMES's
        slot counts, SHDS's load), computed once a sweep and passed to
        :meth:`role_landscape` as ``shared``; ``None`` by default.

        Computed inside each role's rows instead, XLA kept one copy per role (it does not
        merge the roles' scatters): DiMES 3.8 -> 3.3 ms per sweep at batch 1024.
        """
        return None

    def batch_sweep_inputs(self, data: Mapping[str, Any], x) -> Any:
        """:meth:`sweep_inputs` of a whole batch (``data`` and ``x`` batched). The default
        vmaps it; a benchmark overrides it where one operation over the flattened batch is
        faster (XLA's CPU scatter is: DiMES 3.4 -> 3.1 ms per sweep)."""
        return jax.vmap(self.sweep_inputs)(data, x)

    def role_landscape(self, data: Mapping[str, Any], x, idx, landscape, shared=None):
        """``landscape[idx]``: the ``(m, domain)`` landscape rows of a role's variables.

        A benchmark whose rows follow from a few inputs per variable overrides it to
        compute only those rows, from their gathered inputs: XLA fuses the landscape into
        the gather of its rows, element by element, which ran slower (DiMES 6.5 -> 5.9,
        SHDS 9.7 -> 9.2 ms per sweep at batch 1024; ``benchmarks/RESULTS.md``). With
        ``columns`` it returns :func:`stack_columns` of the rows' columns.
        """
        return landscape[idx]

    @abc.abstractmethod
    def features(self, data: Mapping[str, Any], state: JState, landscape, role: str, idx, shared=None) -> dict[str, Any]:
        """The role's features for its owned variables ``idx`` (``shared``: this sweep's
        :meth:`sweep_inputs`, where computed)."""

    def batch_landscape(self, data: Mapping[str, Any], x):
        """``(B, N, domain)`` landscapes of a whole batch (``data`` and ``x`` batched).

        The default vmaps :meth:`landscape`; a benchmark overrides it where one operation
        over the flattened batch beats the vmapped one (XLA's CPU scatter does).
        """
        return jax.vmap(self.landscape)(data, x)


def peer_arrays(pairs: np.ndarray, n_slots: int) -> dict[str, np.ndarray]:
    """Both directions of peer pairs, padded to ``n_slots`` rows with a 0/1 mask."""
    src = np.concatenate([pairs[:, 0], pairs[:, 1]])
    dst = np.concatenate([pairs[:, 1], pairs[:, 0]])
    pad = n_slots - src.size
    return {
        "peer_src": np.concatenate([src, np.zeros(pad, np.int64)]).astype(np.int32),
        "peer_dst": np.concatenate([dst, np.zeros(pad, np.int64)]).astype(np.int32),
        "peer_mask": np.concatenate([np.ones(src.size), np.zeros(pad)]),
    }


def stack(problem: JaxProblem, instances: Sequence[Instance], peers: Callable[[Instance], np.ndarray] | None = None) -> Batch:
    """Stack same-size instances into a :class:`Batch` (owned indices included).

    ``peers`` (optional) gives each instance's peer pairs; they are padded to the
    batch's largest count so the batch has one shape.
    """
    per_instance = [problem.arrays(i) for i in instances]
    for inst, arrays in zip(instances, per_instance):
        arrays["x0"] = np.asarray(inst.x0, np.int32)
        arrays["seed"] = np.asarray(int(inst.seed), np.uint32)
        for r, role in enumerate(ROLES):
            arrays[f"owned_{role}"] = np.flatnonzero(np.asarray(inst.owner) == r).astype(np.int32)
    if peers is not None:
        pair_lists = [peers(i) for i in instances]
        slots = max(2 * p.shape[0] for p in pair_lists)
        for arrays, pairs in zip(per_instance, pair_lists):
            arrays.update(peer_arrays(pairs, slots))
    for key, fill in problem.ragged.items():
        width = max(a[key].shape[-1] for a in per_instance)
        for arrays in per_instance:
            pad = [(0, 0)] * (arrays[key].ndim - 1) + [(0, width - arrays[key].shape[-1])]
            arrays[key] = np.pad(arrays[key], pad, constant_values=fill)
    return Batch(stack_arrays(per_instance), len(instances))


def contiguous_roles(problem: JaxProblem, data: Mapping[str, Any]) -> dict[str, Any]:
    """One instance's data renumbered so that each role's variables are contiguous rows
    (A first, then B, then C, each in its original order; see
    :attr:`JaxProblem.contiguous`). ``data["order"][i]`` is the original index of row
    ``i``: :func:`observe` hashes ``u`` from it, and :func:`rollout_batch` renumbers the
    final assignment back with it."""
    order = jnp.concatenate([data[f"owned_{role}"] for role in ROLES])
    if order.shape[0] != data["x0"].shape[0]:  # a renumbering needs every variable owned once
        raise ValueError(f"the roles own {order.shape[0]} variables of {data['x0'].shape[0]}: cannot renumber them")
    inverse = jnp.zeros_like(order).at[order].set(jnp.arange(order.shape[0], dtype=order.dtype))
    new = dict(data)
    new.update(problem.relabel(data, inverse))
    new["x0"] = data["x0"][order]
    new["order"] = order
    for role, rows in _role_slices(data).items():
        new[f"owned_{role}"] = jnp.arange(rows.start, rows.stop, dtype=order.dtype)
    for key in ("peer_src", "peer_dst"):
        if key in data:
            new[key] = inverse[data[key]]
    return new


def role_rows(data: Mapping[str, Any], role: str):
    """Where a role's variables sit: its index array ``owned_<role>``, or, once
    :func:`contiguous_roles` renumbered the instance, the static slice of its rows."""
    if "order" not in data:
        return data[f"owned_{role}"]
    return _role_slices(data)[role]


def _role_slices(data: Mapping[str, Any]) -> dict[str, slice]:
    """Each role's rows once the roles are contiguous: A's first, then B's, then C's."""
    slices, start = {}, 0
    for role in ROLES:
        m = data[f"owned_{role}"].shape[-1]
        slices[role], start = slice(start, start + m), start + m
    return slices


def init(data: Mapping[str, Any]) -> JState:
    x0 = jnp.asarray(data["x0"], jnp.int32)
    zero = jnp.zeros(x0.shape, jnp.result_type(float))
    return JState(x0, x0, zero, jnp.int32(0), jnp.bool_(True))


def observe(problem: JaxProblem, data: Mapping[str, Any], state: JState, role: str, landscape=None, shared=None) -> dict[str, Any]:
    """The role's observation (same keys and content as the PettingZoo env's).

    ``landscape`` and ``shared`` (:meth:`JaxProblem.sweep_inputs`) are computed here
    unless given: pass them to compute them once for the three roles.
    """
    if landscape is None:
        landscape = problem.landscape(data, state.x)
    if shared is None:
        shared = problem.sweep_inputs(data, state.x)
    idx = role_rows(data, role)
    if "order" in data:
        u = exploration(data["seed"], state.t, state.x.shape[0], problem.domain + 1, rows=data["order"][idx])
    elif problem.columns:
        u = exploration(data["seed"], state.t, state.x.shape[0], problem.domain + 1, rows=idx, columns=True)
    else:
        u = exploration(data["seed"], state.t, state.x.shape[0], problem.domain + 1)[idx]
    obs = {"cur": state.x[idx], "delta": problem.role_landscape(data, state.x, idx, landscape, shared), "u": u, "t": state.t}
    obs.update(problem.features(data, state, landscape, role, idx, shared))
    return obs


def check_actions(role: str, value, m: int, domain: int):
    """Trace-time shape/dtype checks (raise ``InvalidReturn``) and the runtime domain test."""
    value = integer_answer(role, value, (m,), "array of values")
    in_domain = jnp.all((value >= 0) & (value < domain))
    return jnp.clip(value, 0, domain - 1).astype(jnp.int32), in_domain


def step(problem: JaxProblem, data: Mapping[str, Any], state: JState, actions: Mapping[str, Any], landscape=None) -> JState:
    """Apply one sweep of actions (values for each role's owned variables)."""
    if landscape is None:
        landscape = problem.landscape(data, state.x)
    x_new, valid = state.x, state.valid
    if problem.columns or "order" in data:
        x_new, valid = _write_tagged(problem.domain, data, x_new, valid, actions)
    else:
        for role in ROLES:
            idx = data[f"owned_{role}"]
            value, ok = check_actions(role, actions[role], idx.shape[0], problem.domain)
            x_new = x_new.at[idx].set(value)
            valid = valid & ok
    local_now = jnp.take_along_axis(landscape, state.x[:, None], axis=1)[:, 0]
    return JState(x_new, state.x, local_now, state.t + 1, valid)


def _write_tagged(domain: int, data: Mapping[str, Any], x, valid, actions):
    """The roles' values written as ``step`` writes them, with one read of each answer.

    A value out of the domain is written clipped plus ``domain`` (a tag no value in the
    domain carries), so the domain test reads the assignment once all roles wrote, and
    the tag comes off there: the same assignment and validity as :func:`check_actions`.
    With contiguous roles (:func:`contiguous_roles`) the written assignment is the
    roles' tagged answers in a row; the tags spare a domain test per answer, into
    which XLA fused the role's policy a second time (DGC 1.35 -> 1.17 ms per sweep at
    batch 1024, ``benchmarks/RESULTS.md``).
    """
    tagged_answers = {}
    for role in ROLES:
        value, _ = check_actions(role, actions[role], data[f"owned_{role}"].shape[0], domain)  # trace-time checks; the clip
        raw = jnp.asarray(actions[role])
        tagged_answers[role] = jnp.where((raw >= 0) & (raw < domain), value, value + domain)
    if "order" in data:
        x = jnp.concatenate([tagged_answers[role] for role in ROLES])
    else:
        for role in ROLES:
            x = x.at[data[f"owned_{role}"]].set(tagged_answers[role])
    tagged = x >= domain
    return jnp.where(tagged, x - domain, x), valid & ~tagged.any()


def objective(problem: JaxProblem, data: Mapping[str, Any], state: JState):
    return problem.cost(data, state.x)


def rollout_batch(problem: JaxProblem, policies: Mapping[str, Callable], data: Mapping[str, Any], sweeps: int = SWEEPS):
    """All sweeps of a batch; returns ``(costs, valid, final x)``.

    Each sweep computes the landscapes and the shared inputs of the whole batch in one
    call each (:meth:`JaxProblem.batch_landscape`, :meth:`JaxProblem.batch_sweep_inputs`),
    then vmaps the per-instance ``observe``, the policies and ``step`` over the instances.
    """

    def one(d, state, landscape, shared):
        actions = {r: policies[r](observe(problem, d, state, r, landscape, shared)) for r in ROLES}
        return step(problem, d, state, actions, landscape)

    def body(state, _):
        landscape, shared = problem.batch_landscape(data, state.x), problem.batch_sweep_inputs(data, state.x)
        return jax.vmap(one)(data, state, landscape, shared), None

    if problem.contiguous:
        data = jax.vmap(lambda d: contiguous_roles(problem, d))(data)
    final, _ = jax.lax.scan(body, jax.vmap(init)(data), None, length=sweeps)
    costs = jax.vmap(lambda d, state: objective(problem, d, state))(data, final)
    x = final.x
    if problem.contiguous:  # back to the original numbering: row i held variable order[i]
        x = jax.vmap(lambda order, xi: jnp.zeros_like(xi).at[order].set(xi))(data["order"], x)
    return costs, final.valid, x


def rollout_blocks(problem: JaxProblem, policies: Mapping[str, Callable], data: Mapping[str, Any], sweeps: int = SWEEPS):
    """:func:`rollout_batch` over blocks of ``problem.block`` instances, one block after
    another (``lax.map``), where the batch splits into two or more whole blocks; else
    :func:`rollout_batch` of the whole batch. Each instance's decisions are the same
    either way; only how XLA tiles the final cost sums (last bits) may differ."""
    size = jax.tree.leaves(data)[0].shape[0]
    block = problem.block
    if block is None or size <= block or size % block:
        return rollout_batch(problem, policies, data, sweeps)
    blocks = jax.tree.map(lambda a: a.reshape((size // block, block) + a.shape[1:]), data)
    out = jax.lax.map(lambda d: rollout_batch(problem, policies, d, sweeps), blocks)
    return jax.tree.map(lambda a: a.reshape((size,) + a.shape[2:]), out)


def make_evaluator(problem: JaxProblem, policies: Mapping[str, Callable], *, sweeps: int = SWEEPS, x64: bool = True):
    """A compiled ``run(batch) -> (costs, valid, x)`` for a fixed team of JAX policies.

    Compilation happens on the first call for a batch shape; reuse the returned
    function to amortise it.
    """
    return batch_runner(lambda data: rollout_blocks(problem, policies, data, sweeps), x64=x64)


def graph_features(data: Mapping[str, Any], state: JState, landscape_rows, violation_rows, role: str, idx, domain: int) -> dict[str, Any]:
    """JAX twin of ``_features.graph_features`` (DGC and DiMES), same definitions, from the
    ``(m, domain)`` landscape and violation rows of the role's variables ``idx``."""
    rows = jnp.arange(landscape_rows.shape[0])
    x = state.x
    if role == "A":
        now = violation_rows[rows, x[idx]]
        return {"violation_now": now, "repair_gain": now[:, None] - violation_rows}
    if role == "B":
        flexible = violation_rows <= violation_rows.min(axis=1, keepdims=True) + 1e-9
        return {
            "opportunity_gain": landscape_rows[rows, x[idx]][:, None] - landscape_rows,
            "flexibility": flexible.sum(axis=1).astype(landscape_rows.dtype),
        }
    n, dtype = x.shape[0], landscape_rows.dtype
    src, dst, mask = data["peer_src"], data["peer_dst"], data["peer_mask"].astype(dtype)
    hist = jnp.zeros(n * domain, dtype).at[src * domain + x[dst]].add(mask).reshape(n, domain)
    count = jnp.zeros(n, dtype).at[src].add(mask)
    changed = jnp.zeros(n, dtype).at[src].add(mask * (x[dst] != state.x_prev[dst]))
    churn = changed / jnp.maximum(count, 1.0)
    local_now = landscape_rows[rows, x[idx]]
    trend = jnp.where(state.t > 0, local_now - state.local_prev[idx], 0.0)
    return {"peer_value_hist": hist[idx], "peer_churn_rate": churn[idx], "local_trend": trend}
