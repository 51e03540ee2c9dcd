"""SHDS in JAX: the functional twin of ``simulator.py`` + ``roles.py``."""

from __future__ import annotations

import numpy as np

from relic_envs.dcop import _jax_sweep as js
from relic_envs.dcop._jax_sweep import jnp
from relic_envs.dcop.shds import simulator
from relic_envs.dcop.shds.roles import ROLE_FEATURES

D = simulator.N_STARTS


class SHDSJax(js.JaxProblem):
    domain = D
    u_by_rows = True  # 18-20 values: faster (JaxProblem.u_by_rows)
    block = 256  # batch 1024 in 4 blocks: 22.6 -> 15.6 ms per sweep (benchmarks/RESULTS.md)

    def arrays(self, instance):
        return {
            "duration": np.asarray(instance.duration, np.int32),
            "power": np.asarray(instance.power, np.float64),
            "pref_start": np.asarray(instance.pref_start, np.int32),
            "price": np.asarray(instance.price, np.float64),
            "capacity": np.asarray(instance.capacity, np.float64),
            # Energy and preference terms of the landscape do not depend on x: computed
            # once, by the numpy reference's own code, so they carry its exact bits.
            "own_cost": simulator.own_cost(instance),
        }

    @staticmethod
    def _running(start, duration, dtype):
        """``(N, 24)``: 1 where a device started at ``start`` for ``duration`` slots runs in slot ``h``."""
        h = jnp.arange(simulator.N_SLOTS)[None, :]
        return ((h >= start[:, None]) & (h < (start + duration)[:, None])).astype(dtype)

    def load(self, data, x):
        return data["power"] @ self._running(x, data["duration"], data["power"].dtype)

    def cost(self, data, x):
        load = self.load(data, x)
        preference = simulator.PREFERENCE_COST * jnp.sum(jnp.abs(x - data["pref_start"]))
        overload = simulator.OVERLOAD_COST * jnp.sum(jnp.maximum(0.0, load - data["capacity"]))
        return data["price"] @ load + preference + overload

    def violation(self, data, x, rows=None):
        """``(N, 18)`` overload with device ``i`` moved to start ``v``, in O(N x 24) (``rows``:
        those devices' rows only, from their own inputs, for ``role_landscape``).

        Moving ``i`` to ``v`` adds its power to the slots of its window ``v .. v+d_i-1``
        and leaves the others at the rest of the load, so the overload is the rest's
        overload over all 24 slots plus, per window slot, what ``i``'s power adds to it:
        a window sum over at most six slots instead of the ``(18, 24)`` moved-load
        profile per device (what ``simulator.violation`` builds; same terms, summed in
        another order).
        """
        power, duration, start, capacity = data["power"], data["duration"], x, data["capacity"]
        if rows is not None:
            power, duration, start = power[rows], duration[rows], x[rows]
        rest = self.load(data, x)[None, :] - power[:, None] * self._running(start, duration, power.dtype)  # (N, 24)
        over = jnp.maximum(0.0, rest - capacity)
        added = jnp.maximum(0.0, (rest + power[:, None]) - capacity) - over
        window = jnp.zeros((power.shape[0], D), rest.dtype)
        for k in range(simulator.MAX_DURATION):
            window = window + jnp.where(k < duration[:, None], added[:, k : k + D], 0.0)
        # The rest's overload summed slot by slot: as ``over.sum(axis=1)`` XLA ran it as a
        # library (YNN) reduction fused with the window terms, a quarter of the sweep
        # (13.8 -> 10.0 ms per sweep at batch 1024, benchmarks/RESULTS.md).
        total = over[:, 0]
        for h in range(1, over.shape[1]):
            total = total + over[:, h]
        return simulator.OVERLOAD_COST * (total[:, None] + window)

    def landscape(self, data, x):
        return data["own_cost"] + self.violation(data, x)

    def role_landscape(self, data, x, idx, landscape):
        return data["own_cost"][idx] + self.violation(data, x, idx)

    def features(self, data, state, landscape, role, idx):
        load = self.load(data, state.x)
        available = {
            "duration": lambda: data["duration"][idx],
            "power": lambda: data["power"][idx],
            "pref_start": lambda: data["pref_start"][idx],
            "load_now": lambda: load,
            "capacity": lambda: data["capacity"],
            "price": lambda: data["price"],
            "capacity_slack": lambda: data["capacity"] - load,
            "load_change": lambda: load - self.load(data, state.x_prev),
        }
        return {f.name: available[f.name]() for f in ROLE_FEATURES[role]}


PROBLEM = SHDSJax()
peers = None  # SHDS features use no peer structure
