"""SHDS cost and local landscape (Appendix B.4, Eq. shds).

Device ``i`` (duration ``d_i``, power ``p_i``, preferred start ``pref_i``) starts at
``x_i`` in 0..17 and runs slots ``x_i .. x_i + d_i - 1`` of a 24-slot day. With load
``L_h``, price ``theta_h`` and capacity ``kappa_h``::

    C = sum_h theta_h L_h + 5 sum_i |x_i - pref_i| + 200 sum_h max(0, L_h - kappa_h)

Every device can reach the overload term of every slot it could run in, so the local
cost of ``i`` at start ``v`` is its own energy price, its own preference term and the
whole neighbourhood's overload with ``i`` moved to ``v``. The violation landscape is
the overload part (capacity violation).

No BLAS here (CONTRIBUTING.md, "Numerics that do not depend on the CPU"): the load
adds the devices in index order, a run's price adds its slots from the first on, and
the cost's energy term is an exactly rounded sum, so every CPU computes the same bits.
"""

from __future__ import annotations

import math

import numpy as np

N_SLOTS = 24
N_STARTS = 18
MAX_DURATION = 6
PREFERENCE_COST = 5.0
OVERLOAD_COST = 200.0

# OCCUPANCY[d, v, h] = 1 when a device of duration d started at v runs in slot h.
_h = np.arange(N_SLOTS)[None, None, :]
_v = np.arange(N_STARTS)[None, :, None]
_d = np.arange(MAX_DURATION + 1)[:, None, None]
OCCUPANCY = ((_h >= _v) & (_h < _v + _d)).astype(np.float64)


def load(instance, x: np.ndarray) -> np.ndarray:
    """``(24,)`` aggregate load of assignment ``x``: the devices' powers added in index order."""
    per_device = OCCUPANCY[instance.duration, x]  # (N, 24), a fresh array
    per_device *= instance.power[:, None]
    return np.add.accumulate(per_device, axis=0)[-1] if x.size else np.zeros(N_SLOTS)


def run_price(price: np.ndarray) -> np.ndarray:
    """``(7, 18)``: ``[d, v]`` is the price of one kW run for ``d`` slots from start ``v``,
    ``theta_v + theta_{v+1} + ... + theta_{v+d-1}`` added from the first slot on."""
    out = np.zeros((MAX_DURATION + 1, N_STARTS))
    for d in range(1, MAX_DURATION + 1):
        out[d] = out[d - 1] + price[d - 1 : d - 1 + N_STARTS]
    return out


def cost(instance, x: np.ndarray) -> float:
    L = load(instance, x)
    energy = math.fsum(instance.price * L)
    preference = PREFERENCE_COST * float(np.abs(x - instance.pref_start).sum())
    overload = OVERLOAD_COST * float(np.maximum(0.0, L - instance.capacity).sum())
    return energy + preference + overload


def _moved_load(instance, x: np.ndarray) -> np.ndarray:
    """``(N, 18, 24)``: the load profile if only device ``i`` moved to start ``v``."""
    own = OCCUPANCY[instance.duration] * instance.power[:, None, None]  # (N, 18, 24)
    rest = load(instance, x)[None, :] - own[np.arange(x.size), x]  # (N, 24)
    return rest[:, None, :] + own


def violation(instance, x: np.ndarray) -> np.ndarray:
    overload = np.maximum(0.0, _moved_load(instance, x) - instance.capacity).sum(axis=2)
    return OVERLOAD_COST * overload


def own_cost(instance) -> np.ndarray:
    """``(N, 18)``: each device's energy price and preference term at each start (no coupling)."""
    energy = instance.power[:, None] * run_price(instance.price)[instance.duration]
    preference = PREFERENCE_COST * np.abs(np.arange(N_STARTS)[None, :] - instance.pref_start[:, None])
    return energy + preference


def landscape(instance, x: np.ndarray) -> np.ndarray:
    return own_cost(instance) + violation(instance, x)
