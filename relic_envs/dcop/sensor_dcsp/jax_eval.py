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
    block = 256  # batch 1024 in 4 blocks: 6.7 ms per sweep, whole: 6.7 or 8.1 (RESULTS.md)

    ragged = {"rivals": -1}

    def arrays(self, instance):
        return {
            "candidate": np.asarray(instance.candidate, np.int32),
            "target_value": np.asarray(instance.target_value, np.float64),
            "rivals": rivals(instance),
            "supply": simulator.supply(instance).astype(np.float64),
        }

    def _tracked(self, data, x):
        return jnp.take_along_axis(data["candidate"], x[:, None], axis=1)[:, 0]

    def _coverage(self, data, x):
        g = self._tracked(data, x)
        t = data["target_value"].shape[0]
        return jnp.zeros(t, jnp.int32).at[jnp.maximum(g, 0)].add((g >= 0).astype(jnp.int32))

    def _clash(self, data, x, targets):
        """``(N, W)``: incompatible sensors tracking ``targets[i, w]`` (any ``(N, W)`` targets).

        Counts the rivals (incompatible sensors sharing a candidate target: no other
        incompatible sensor can track one of ``i``'s targets), the same integers as the
        numpy reference's ``incompatible @ onehot`` in O(N x rivals) instead of O(N^2 x T).
        """
        rivals = data["rivals"]
        g = self._tracked(data, x)
        rival_target = jnp.where(rivals >= 0, g[jnp.maximum(rivals, 0)], -2)  # -2 matches no target
        hits = rival_target[:, None, :] == targets[:, :, None]
        return hits.sum(axis=2, dtype=jnp.int32).astype(data["target_value"].dtype)

    def cost(self, data, x):
        n = self._coverage(data, x)
        g = self._tracked(data, x)
        clash = self._clash(data, x, jnp.maximum(g, 0)[:, None])[:, 0]
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
        # The four values' sum added left to right, as numpy adds so short a row (and
        # cheaper in XLA than a reduction over an axis of four).
        total = base[:, 0]
        for v in range(1, D):
            total = total + base[:, v]
        coverage_part = total[:, None] + (joined - base)
        clash = self._clash(data, x, safe)
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
            * jnp.where(valid, self._clash(data, state.x, data["candidate"])[idx], 0.0),
            "coverage_change": lambda: per_target(n_now - self._coverage(data, state.x_prev)),
        }
        return {f.name: available[f.name]() for f in ROLE_FEATURES[role]}


def rivals(instance) -> np.ndarray:
    """``(N, K)``: each sensor's incompatible sensors that share a candidate target with
    it, padded with ``-1`` (``K`` the largest count in this instance)."""
    rival = simulator.shares_target(instance) & instance.incompatible
    width = max(1, int(rival.sum(axis=1).max(initial=0)))
    out = np.full((rival.shape[0], width), -1, np.int32)
    for i, row in enumerate(rival):
        found = np.flatnonzero(row)
        out[i, : found.size] = found
    return out


PROBLEM = SensorJax()
peers = simulator.peers
