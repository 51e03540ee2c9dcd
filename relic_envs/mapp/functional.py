"""Functional JAX envs of the three routing benchmarks (the contract: :mod:`relic_envs.core.functional`).

Built on the batch evaluator's per-instance dynamics (``_jax_routing``: ``init``,
``observe``, ``step``, ``objective``). What this module adds is the env's bookkeeping:
the team score so far, the shared reward, ``done`` once every route is closed, and the
``on_invalid="penalize"`` rule.

Actions are ``{role: () int}``, a node id (the PettingZoo ``Discrete(N)`` action); the
observation's ``action_mask`` marks the admitted nodes plus the depot. An agent whose
answer is refused (any node outside the mask while its route is open) holds its position
for this epoch (``WAIT``) and the team pays ``hi - lo + 1`` (``Benchmark.score_bounds``),
exactly as the numpy env does; answering the depot closes the route. Agents already home
are ignored. A non-scalar or non-integer answer is a trace-time
:class:`~relic_envs.errors.InvalidReturn`.

Observations have the PettingZoo env's keys, nesting, shapes and dtypes (the sparse
``{"mask", "value"}`` dicts are padded over all ``N`` nodes, as in the numpy env). Both
interfaces, like the batch evaluator (``interface="alt"``: ``relic_envs.mapp._jax_alt``).
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
from relic_envs.mapp import _jax_routing as jr
from relic_envs.mapp.jax_eval import problem


class RoutingState(NamedTuple):
    routing: jr.JState  # the evaluator's state: positions, budgets, closed routes, visits, node state
    score: Any  # () the team score so far (the objective; 0 before the first step)


class RoutingFunctionalEnv(FunctionalEnv):
    """MAPP-PC, MAPP-AR or MAPP-DS as pure ``reset``/``step`` functions."""

    def __init__(self, name: str, interface: str = "paper"):
        self._bind(name, interface)
        self._problem = problem(name)
        self._problem.role_table(interface)  # fail now on an interface the evaluator lacks

    def params(self, instances: Sequence[Instance]) -> dict[str, np.ndarray]:
        penalty = self._penalties(instances)
        return {**jr.stack(self._problem, instances).data, "penalty": penalty}

    def _observe(self, params, routing: jr.JState) -> dict[str, dict[str, Any]]:
        nodes = self._problem.node_view(params, routing.dyn, routing.t)  # one pre-step state for all roles
        return {r: cast_leaves(jr.observe(self._problem, params, routing, r, self.interface, nodes), self._dtypes[r])
                for r in ROLES}

    def reset(self, key, params):
        params = jax.tree.map(jnp.asarray, params)  # numpy params work outside jit too
        routing = jr.init(self._problem, params)
        return self._observe(params, routing), RoutingState(routing, jnp.zeros((), params["dist"].dtype))

    def step(self, key, state: RoutingState, actions, params):
        actions = self._joint(actions)
        params = jax.tree.map(jnp.asarray, params)
        routing = state.routing
        refused = []
        for k, role in enumerate(ROLES):
            j = jr.as_node(role, actions[role])
            _, admitted = jr.admit(self._problem, params, routing, k, j)
            refused.append(~routing.home[k] & (j != 0) & ~admitted)  # the depot is always allowed
        wait = jnp.stack(refused)
        moved, _ = jr.step(self._problem, params, routing, actions, wait=wait)
        score = jr.objective(self._problem, params, moved)
        n_refused = wait.sum().astype(jnp.int32)
        reward = score - state.score - params["penalty"] * n_refused
        new, reward, info = self._close_step(~routing.home.all(), RoutingState(moved, score), state, reward, n_refused)
        return self._observe(params, new.routing), new, reward, new.routing.home.all(), info


def make_functional(name: str, interface: str = "paper") -> RoutingFunctionalEnv:
    return RoutingFunctionalEnv(name, interface)
