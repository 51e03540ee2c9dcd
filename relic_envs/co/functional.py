"""Functional JAX envs of the four combinatorial benchmarks (the contract: :mod:`relic_envs.core.functional`).

Built on the batch evaluators' per-instance construction (the decision contract of
:mod:`relic_envs.co._jax_decisions`: ``start``, ``pending``, ``commit``). One
``step`` is one decision of the construction, taken by exactly one role, as in the
PettingZoo env; the other roles' answers are ignored. What this module adds is the env's
bookkeeping: the team score so far (the partial construction's objective, negated),
the shared reward, ``done``, and the ``on_invalid="penalize"`` rule, which for this
family reads: the deciding role's answer, when it is not a candidate (``-1`` where
skipping is not allowed, an id outside the role's space, an infeasible id), becomes
``WAIT`` (skip where the decision allows skipping, the evaluator's deterministic
fallback otherwise: the candidate of least cost, ties the lowest id) and the team pays
``hi - lo + 1`` (``Benchmark.score_bounds``). It is not counted as a repair, exactly as
in the numpy env.

Actions are ``{role: () int}``, an id in the role's identifier space or ``-1``; the
observation's ``action_mask`` is ``(n + 1,)`` (index 0 = skip). A non-scalar or
non-integer answer is a trace-time :class:`~relic_envs.errors.InvalidReturn`.
Observations have the PettingZoo env's keys, nesting, shapes and dtypes (candidate sets
are ``(n,)`` int8 masks and aligned arrays ``{"mask", "value"}`` with 0 off the mask,
as in the numpy env). Paper interface only (the family has no other).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from relic_envs.co._jax_decisions import Pending, first_min_or_skip, is_valid
from relic_envs.co.jax_eval import module
from relic_envs.core.benchmark import ROLES
from relic_envs.core.functional import FunctionalEnv, cast_leaves
from relic_envs.core.instance import Instance
from relic_envs.core.jax_kit import integer_answer


class ConstructState(NamedTuple):
    construction: dict  # the evaluator's construction state (holds ``done``), at the pending decision
    score: Any  # () the team score so far: minus the partial construction's objective (0 before the first step)


def as_id(role: str, value):
    """Trace-time check of an action: a scalar integer id (as int32)."""
    return integer_answer(role, value, (), "id").astype(jnp.int32)


class ConstructiveFunctionalEnv(FunctionalEnv):
    """HMTSP, FSTSP, FJAGV or MRCPS as pure ``reset``/``step`` functions."""

    def __init__(self, name: str, interface: str = "paper"):
        self._bind(name, interface)
        self._module = module(name)
        self._problem = self._module.PROBLEM
        self._sign = -1.0 if self.benchmark.minimize else 1.0  # raw objective -> score

    def params(self, instances: Sequence[Instance]) -> dict[str, np.ndarray]:
        penalty = self._penalties(instances)
        return {**self._module.stack(instances).data, "penalty": penalty}

    def _pending(self, data, s) -> Pending:
        """The problem's pending decision, with no candidate once done, and ``-1`` valid
        also when no role has a candidate (as ``cheapest`` says)."""
        p = self._problem.pending(data, s)
        masks = tuple(m & ~s["done"] for m in p.masks)
        deciding = jnp.stack([m.any() for m in masks]).any()
        return Pending(jnp.asarray(p.role, jnp.int32), masks, p.costs, p.can_skip | ~deciding)

    def _observe(self, data, s, pending: Pending) -> dict[str, dict[str, Any]]:
        obs = self._problem.observe(data, s, pending.masks)
        live = ~s["done"]
        out = {}
        for k, r in enumerate(ROLES):
            deciding = live & (pending.role == k)
            skip = ~deciding | pending.can_skip  # a role not deciding may only answer -1
            mask = jnp.concatenate([skip[None], pending.masks[k]]).astype(jnp.int8)
            out[r] = cast_leaves({**obs[r], "action_mask": mask}, self._dtypes[r])
        return out

    # -- the contract ------------------------------------------------------------------
    def reset(self, key, params):
        params = jax.tree.map(jnp.asarray, params)  # numpy params work outside jit too
        s = self._problem.start(params)
        score = jnp.zeros((), params["penalty"].dtype)  # as the numpy env: the first reward is the first score
        return self._observe(params, s, self._pending(params, s)), ConstructState(s, score)

    def step(self, key, state: ConstructState, actions, params):
        actions = self._joint(actions)
        params = jax.tree.map(jnp.asarray, params)
        s = state.construction
        pending = self._pending(params, s)
        live = ~s["done"]
        choice, refused = jnp.int32(-1), jnp.bool_(False)
        for k, r in enumerate(ROLES):
            j, mask = as_id(r, actions[r]), pending.masks[k]
            valid = is_valid(mask, pending.can_skip, j)
            wait = jnp.where(pending.can_skip, -1, first_min_or_skip(mask, pending.costs[k]))
            mine = live & (pending.role == k)
            choice = jnp.where(mine, jnp.where(valid, j, wait), choice)
            refused = refused | (mine & ~valid)
        moved = self._problem.commit(params, s, choice)
        score = self._sign * self._problem.objective(params, moved)
        n_refused = refused.astype(jnp.int32)
        reward = score - state.score - params["penalty"] * n_refused
        new, reward, info = self._close_step(live, ConstructState(moved, score), state, reward, n_refused)
        obs = self._observe(params, new.construction, self._pending(params, new.construction))
        return obs, new, reward, new.construction["done"], info


def make_functional(name: str, interface: str = "paper") -> ConstructiveFunctionalEnv:
    return ConstructiveFunctionalEnv(name, interface)

