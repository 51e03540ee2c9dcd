"""SensorDCSP in JAX: the functional twin of ``simulator.py`` + ``roles.py``."""

from __future__ import annotations

import numpy as np

from relic_envs.dcop import _jax_sweep as js
from relic_envs.dcop._jax_sweep import jnp
from relic_envs.dcop.sensor_dcsp import simulator
from relic_envs.dcop.sensor_dcsp.roles import ROLE_FEATURES

D = simulator.N_VALUES


def _target_cost(n, value):
    return value * (n < simulator.REQUIRED) + jnp.maximum(0, n - simulator.REQUIRED)


class SensorJax(js.JaxProblem):
    domain = D

    def arrays(self, instance):
        return {
            "candidate": np.asarray(instance.candidate, np.int32),
            "target_value": np.asarray(instance.target_value, np.float64),
            "incompatible": np.asarray(instance.incompatible, np.float64),
            "supply": simulator.supply(instance).astype(np.float64),
        }

    def _tracked(self, data, x):
        return jnp.take_along_axis(data["candidate"], x[:, None], axis=1)[:, 0]

    def _coverage(self, data, x):
        g = self._tracked(data, x)
        t = data["target_value"].shape[0]
        return jnp.zeros(t, jnp.int32).at[jnp.maximum(g, 0)].add((g >= 0).astype(jnp.int32))

    def _clash(self, data, x):
        """(N, T): incompatible sensors tracking each target."""
        g = self._tracked(data, x)
        t = data["target_value"].shape[0]
        onehot = (g[:, None] == jnp.arange(t)[None, :]).astype(data["incompatible"].dtype)
        return data["incompatible"] @ onehot

    def cost(self, data, x):
        n = self._coverage(data, x)
        g = self._tracked(data, x)
        clash = jnp.take_along_axis(self._clash(data, x), jnp.maximum(g, 0)[:, None], axis=1)[:, 0]
        pairs = jnp.sum(jnp.where(g >= 0, clash, 0.0)) / 2.0
        return jnp.sum(_target_cost(n, data["target_value"])) + simulator.INCOMPATIBLE_COST * pairs

    def landscape(self, data, x):
        cand = data["candidate"]
        valid = cand >= 0
        safe = jnp.where(valid, cand, 0)
        n = self._coverage(data, x)
        g = self._tracked(data, x)
        without = n[safe] - (valid & (safe == g[:, None]))
        value = data["target_value"][safe]
        base = jnp.where(valid, _target_cost(without, value), 0.0)
        joined = jnp.where(valid, _target_cost(without + 1, value), 0.0)
        coverage_part = base.sum(axis=1, keepdims=True) + (joined - base)
        clash = jnp.take_along_axis(self._clash(data, x), safe, axis=1)
        return coverage_part + simulator.INCOMPATIBLE_COST * jnp.where(valid, clash, 0.0)

    def features(self, data, state, landscape, role, idx):
        cand = data["candidate"][idx]
        valid = cand >= 0
        safe = jnp.where(valid, cand, 0)
        dtype = landscape.dtype

        def per_target(values):
            return jnp.where(valid, values[safe].astype(dtype), 0.0)

        n_now = self._coverage(data, state.x)
        available = {
            "candidate_target": lambda: cand,
            "valid_mask": lambda: valid.at[:, 0].set(True),
            "target_value": lambda: per_target(data["target_value"]),
            "target_coverage": lambda: per_target(n_now),
            "target_supply": lambda: per_target(data["supply"]),
            "incompatibility_cost": lambda: simulator.INCOMPATIBLE_COST
            * jnp.where(valid, jnp.take_along_axis(self._clash(data, state.x)[idx], safe, axis=1), 0.0),
            "coverage_change": lambda: per_target(n_now - self._coverage(data, state.x_prev)),
        }
        return {f.name: available[f.name]() for f in ROLE_FEATURES[role]}


PROBLEM = SensorJax()
peers = simulator.peers
