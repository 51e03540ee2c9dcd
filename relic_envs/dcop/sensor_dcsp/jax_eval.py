"""SensorDCSP in JAX: the functional twin of ``simulator.py`` + ``roles.py``."""

from __future__ import annotations

import numpy as np

from relic_envs.dcop import _jax_sweep as js
from relic_envs.dcop._jax_sweep import jax, jnp
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
            "incompatible_bits": bit_rows(np.asarray(instance.incompatible, bool)),
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

        Bit sets over the sensors, 32 per word: which sensors track each target (built
        each call from the tracked targets) ANDed with each sensor's incompatible set
        (static) and counted with ``population_count``. The same integers as the numpy
        reference's ``incompatible @ onehot``, in O(N x W x N / 32) word operations
        instead of O(N^2 x T) (or of the rival lists this replaced: 6.7 -> 3.4 ms per
        sweep at batch 1024, ``benchmarks/RESULTS.md``).
        """
        g = self._tracked(data, x)
        n_targets, words = data["target_value"].shape[0], data["incompatible_bits"].shape[-1]
        sensor = jnp.arange(g.shape[0], dtype=jnp.uint32)
        bit = jnp.where(g >= 0, jnp.uint32(1) << (sensor % 32), jnp.uint32(0))  # sleeping (-1) tracks none
        # A scatter (a fusion of its own): each sensor's bit added once to its target's word.
        bits = jnp.zeros((n_targets, words), jnp.uint32).at[jnp.maximum(g, 0), sensor // 32].add(bit)
        common = data["incompatible_bits"][:, None, :] & bits[targets]  # (N, W, words)
        count = jax.lax.population_count(common).astype(jnp.int32).sum(axis=2, dtype=jnp.int32)
        return count.astype(data["target_value"].dtype)

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

    def features(self, data, state, landscape, role, idx, shared=None):
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


def bit_rows(matrix: np.ndarray) -> np.ndarray:
    """``(N, ceil(N / 32))`` uint32: row ``i`` of a bool ``(N, N)`` matrix as bit words
    (column ``32 w + b`` is bit ``b`` of word ``w``)."""
    n = matrix.shape[1]
    words = -(-n // 32)
    padded = np.zeros((matrix.shape[0], 32 * words), np.uint64)
    padded[:, :n] = matrix
    return (padded.reshape(matrix.shape[0], words, 32) << np.arange(32, dtype=np.uint64)).sum(axis=2).astype(np.uint32)


PROBLEM = SensorJax()
peers = simulator.peers
