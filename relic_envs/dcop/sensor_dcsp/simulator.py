"""SensorDCSP cost and local landscape (Appendix B.4, Eq. sensordcsp).

Sensor ``s`` takes a value in 0..3: 0 sleeps, value ``v >= 1`` tracks target
``candidate[s, v]`` (``-1`` for a padded value, which tracks nothing). With coverage
``n_t`` (sensors tracking ``t``), target value ``v_t`` and incompatibility ``I``::

    C = sum_t v_t [n_t < 3] + sum_t max(0, n_t - 3) + 100 * sum_{s<s', same target} I_ss'

The local cost of sensor ``s`` at value ``v`` sums the coverage terms of its (at most
three) candidate targets and its incompatibility terms. Every term is a constraint
penalty of the original CSP, so the violation landscape equals the landscape.
"""

from __future__ import annotations

import numpy as np

N_VALUES = 4
REQUIRED = 3
INCOMPATIBLE_COST = 100.0


def tracked(instance, x: np.ndarray) -> np.ndarray:
    """``(N,)`` target each sensor tracks, ``-1`` when asleep or on a padded value."""
    return instance.candidate[np.arange(x.size), x]


def coverage(instance, x: np.ndarray) -> np.ndarray:
    """``(T,)`` number of sensors tracking each target."""
    g = tracked(instance, x)
    return np.bincount(g[g >= 0], minlength=instance.target_value.size)


def target_cost(n: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Coverage term of a target with coverage ``n`` and value ``value`` (elementwise)."""
    return value * (n < REQUIRED) + np.maximum(0, n - REQUIRED)


def incompatible_on_target(instance, x: np.ndarray) -> np.ndarray:
    """``(N, T)``: incompatible sensors tracking each target (excluding the sensor itself)."""
    g = tracked(instance, x)
    onehot = np.zeros((x.size, instance.target_value.size))
    active = g >= 0
    onehot[np.flatnonzero(active), g[active]] = 1.0
    return instance.incompatible.astype(np.float64) @ onehot  # exact: 0/1 entries, integer sums < 2**53, any BLAS kernel


def cost(instance, x: np.ndarray) -> float:
    n = coverage(instance, x)
    g = tracked(instance, x)
    clash = incompatible_on_target(instance, x)
    active = np.flatnonzero(g >= 0)
    pairs = clash[active, g[active]].sum() / 2.0  # each incompatible pair counted from both ends
    return float(np.sum(target_cost(n, instance.target_value)) + INCOMPATIBLE_COST * pairs)


def landscape(instance, x: np.ndarray) -> np.ndarray:
    cand = instance.candidate
    valid = cand >= 0
    safe = np.where(valid, cand, 0)
    n = coverage(instance, x)
    g = tracked(instance, x)
    # Coverage of each candidate target with this sensor removed.
    without = n[safe] - (valid & (safe == g[:, None]))
    value = instance.target_value[safe]
    base = np.where(valid, target_cost(without, value), 0.0)
    joined = np.where(valid, target_cost(without + 1, value), 0.0)
    coverage_part = base.sum(axis=1, keepdims=True) + (joined - base)
    clash = incompatible_on_target(instance, x)[np.arange(x.size)[:, None], safe]
    return coverage_part + INCOMPATIBLE_COST * np.where(valid, clash, 0.0)


def supply(instance) -> np.ndarray:
    """``(T,)`` number of sensors that have each target as a value."""
    c = instance.candidate[instance.candidate >= 0]
    return np.bincount(c, minlength=instance.target_value.size)


def shares_target(instance) -> np.ndarray:
    """``(N, N)`` bool: sensors with a candidate target in common (True on the diagonal
    of every sensor with a target)."""
    cand = instance.candidate
    sees = np.zeros((cand.shape[0], instance.target_value.size), dtype=np.int64)
    rows, cols = np.nonzero(cand >= 0)
    sees[rows, cand[rows, cols]] = 1
    return (sees @ sees.T) > 0  # exact: int64, numpy's own integer loop (no BLAS)


def peers(instance) -> np.ndarray:
    """Pairs of sensors with a candidate target in common."""
    shared = shares_target(instance)
    i, j = np.triu_indices(shared.shape[0], k=1)
    keep = shared[i, j]
    return np.stack([i[keep], j[keep]], axis=1)
