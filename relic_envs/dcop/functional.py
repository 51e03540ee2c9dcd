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
from relic_envs.core.functional import FunctionalEnv, cast_leaves, leaf_dtypes
from relic_envs.core.instance import Instance
from relic_envs.core.registry import get_benchmark
from relic_envs.dcop import _jax_sweep as js
from relic_envs.dcop._sweep import SWEEPS
from relic_envs.dcop.jax_eval import problem_module


class DCOPState(NamedTuple):
    sweep: js.JState  # the evaluator's state: assignment, previous assignment, sweep index
    score: Any  # () the team score so far (minus the objective), 0 before the first step


class DCOPFunctionalEnv(FunctionalEnv):
    """DGC, DiMES, SensorDCSP or SHDS as pure ``reset``/``step`` functions."""

    def __init__(self, name: str, interface: str = "paper"):
        self.benchmark = get_benchmark(name)
        self.benchmark.check_interface(interface)
        self.name, self.interface, self.roles = name, interface, tuple(ROLES)
        self._module = problem_module(name)
        self._problem = self._module.PROBLEM
        # Leaf dtypes of each role's observation: the same for every instance size.
        reference = self.benchmark.generate(next(iter(self.benchmark.regimes())), np.random.default_rng(0))
        self._dtypes = {r: leaf_dtypes(self.benchmark.observation_space(r, reference, interface)) for r in ROLES}

    def params(self, instances: Sequence[Instance]) -> dict[str, np.ndarray]:
        for instance in instances:
            self.benchmark.check_instance(instance, self.interface)
        data = dict(js.stack(self._problem, instances, peers=self._module.peers).data)
        # The penalty of a refused action, hi - lo + 1 with [lo, hi] = [-worst_cost, 0].
        data["penalty"] = np.array([self.benchmark.problem.worst_cost(i) + 1.0 for i in instances])
        return data

    def _observe(self, params, sweep: js.JState) -> dict[str, dict[str, Any]]:
        landscape = self._problem.landscape(params, sweep.x)
        obs = {}
        for role in ROLES:
            obs[role] = cast_leaves(js.observe(self._problem, params, sweep, role, landscape), self._dtypes[role])
        return obs

    def reset(self, key, params):
        params = jax.tree.map(jnp.asarray, params)  # numpy params work outside jit too
        sweep = js.init(params)
        return self._observe(params, sweep), DCOPState(sweep, jnp.zeros((), jnp.result_type(float)))

    def step(self, key, state: DCOPState, actions, params):
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
        live = sweep.t < SWEEPS
        new = jax.tree.map(lambda a, b: jnp.where(live, a, b), DCOPState(moved, score), state)
        reward = jnp.where(live, reward, 0.0)
        refused = jnp.where(live, refused, 0)
        done = new.sweep.t >= SWEEPS
        return self._observe(params, new.sweep), new, reward, done, {"invalid": refused, "score": new.score}


def make_functional(name: str, interface: str = "paper") -> DCOPFunctionalEnv:
    return DCOPFunctionalEnv(name, interface)
