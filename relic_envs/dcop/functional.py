"""Functional JAX envs of the four DCOPs (the contract: :mod:`relic_envs.core.functional`).

Built on the batch evaluator's per-instance dynamics (``_jax_sweep``: ``init``,
``observe``, ``step``, ``objective``), so the functional env and the evaluator cannot
disagree. What this module adds is the env's bookkeeping: the team score so far, the
shared reward, ``done`` after the 50th sweep, and the ``on_invalid="penalize"`` rule.

Actions are ``{role: (m_role,) int array}``, the role's values for its owned variables in
the order of ``obs["cur"]`` (the PettingZoo ``MultiDiscrete`` action). A role whose values
leave the domain holds its variables (``WAIT``) and the team pays ``worst_cost + 1``,
exactly as the numpy env does; a wrong shape or a float dtype is a trace-time error
(:class:`~relic_envs.errors.InvalidReturn`), since a jitted function has fixed shapes.

Observations have the PettingZoo env's keys, shapes and dtypes (int64/float64 under
``jax.enable_x64``; JAX's 32-bit types otherwise). Padding: none is needed, every DCOP
observation has a fixed shape per instance size.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from relic_envs.core.benchmark import ROLES
from relic_envs.core.functional import FunctionalEnv, cast_leaves
from relic_envs.core.instance import Instance
from relic_envs.dcop import _jax_sweep as js
from relic_envs.dcop._sweep import SWEEPS
from relic_envs.dcop.jax_eval import problem_module


class DCOPState(NamedTuple):
    sweep: js.JState  # the evaluator's state: assignment, previous assignment, sweep index
    score: Any  # () the team score so far (minus the objective), 0 before the first step


class DCOPFunctionalEnv(FunctionalEnv):
    """DGC, DiMES, SensorDCSP or SHDS as pure ``reset``/``step`` functions."""

    def __init__(self, name: str, interface: str = "paper"):
        self._bind(name, interface)
        self._module = problem_module(name)
        self._problem = self._module.PROBLEM

    def params(self, instances: Sequence[Instance]) -> dict[str, np.ndarray]:
        penalty = self._penalties(instances)  # hi - lo + 1 with [lo, hi] = [-worst_cost, 0]
        return {**js.stack(self._problem, instances, peers=self._module.peers).data, "penalty": penalty}

    def _observe(self, params, sweep: js.JState) -> dict[str, dict[str, Any]]:
        landscape = self._problem.landscape(params, sweep.x)
        shared = self._problem.sweep_inputs(params, sweep.x)
        obs = {}
        for role in ROLES:
            obs[role] = cast_leaves(js.observe(self._problem, params, sweep, role, landscape, shared), self._dtypes[role])
        return obs

    def reset(self, key, params):
        params = jax.tree.map(jnp.asarray, params)  # numpy params work outside jit too
        sweep = js.init(params)
        return self._observe(params, sweep), DCOPState(sweep, jnp.zeros((), jnp.result_type(float)))

    def step(self, key, state: DCOPState, actions, params):
        actions = self._joint(actions)
        params = jax.tree.map(jnp.asarray, params)
        sweep = state.sweep
        landscape = self._problem.landscape(params, sweep.x)
        held, refused = {}, jnp.int32(0)
        for role in ROLES:
            idx = params[f"owned_{role}"]
            value, ok = js.check_actions(role, actions[role], idx.shape[0], self._problem.domain)
            held[role] = jnp.where(ok, value, sweep.x[idx])  # a refused role holds its values (WAIT)
            refused = refused + (~ok).astype(jnp.int32)
        moved = js.step(self._problem, params, sweep, held, landscape)
        score = -js.objective(self._problem, params, moved)
        reward = score - state.score - params["penalty"] * refused
        new, reward, info = self._close_step(sweep.t < SWEEPS, DCOPState(moved, score), state, reward, refused)
        return self._observe(params, new.sweep), new, reward, new.sweep.t >= SWEEPS, info


def make_functional(name: str, interface: str = "paper") -> DCOPFunctionalEnv:
    return DCOPFunctionalEnv(name, interface)
