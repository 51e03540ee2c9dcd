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

    def arrays(self, instance):
        return {
            "duration": np.asarray(instance.duration, np.int32),
            "power": np.asarray(instance.power, np.float64),
            "pref_start": np.asarray(instance.pref_start, np.int32),
            "price": np.asarray(instance.price, np.float64),
            "capacity": np.asarray(instance.capacity, np.float64),
        }

    def _occupancy(self, data, dtype):
        return jnp.asarray(simulator.OCCUPANCY, dtype)[data["duration"]]  # (N, 18, 24)

    def load(self, data, x):
        occ = self._occupancy(data, data["power"].dtype)
        return data["power"] @ occ[jnp.arange(x.shape[0]), x]

    def cost(self, data, x):
        load = self.load(data, x)
        preference = simulator.PREFERENCE_COST * jnp.sum(jnp.abs(x - data["pref_start"]))
        overload = simulator.OVERLOAD_COST * jnp.sum(jnp.maximum(0.0, load - data["capacity"]))
        return data["price"] @ load + preference + overload

    def violation(self, data, x):
        own = self._occupancy(data, data["power"].dtype) * data["power"][:, None, None]
        rest = self.load(data, x)[None, :] - own[jnp.arange(x.shape[0]), x]
        moved = rest[:, None, :] + own
        return simulator.OVERLOAD_COST * jnp.maximum(0.0, moved - data["capacity"]).sum(axis=2)

    def landscape(self, data, x):
        occ = self._occupancy(data, data["power"].dtype)
        energy = data["power"][:, None] * (occ @ data["price"])
        preference = simulator.PREFERENCE_COST * jnp.abs(jnp.arange(D)[None, :] - data["pref_start"][:, None])
        return energy + preference + self.violation(data, x)

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
