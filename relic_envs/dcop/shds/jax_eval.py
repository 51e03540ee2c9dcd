"""SHDS in JAX: the functional twin of ``simulator.py`` + ``roles.py``."""

from __future__ import annotations

import numpy as np

from relic_envs.dcop import _jax_sweep as js
from relic_envs.dcop._jax_sweep import jax, jnp
from relic_envs.dcop.shds import simulator
from relic_envs.dcop.shds.roles import ROLE_FEATURES

D = simulator.N_STARTS


class SHDSJax(js.JaxProblem):
    domain = D
    columns = True  # 18 values: built column by column (JaxProblem.columns)
    block = 256  # batch 1024 in 4 blocks (benchmarks/RESULTS.md)

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

    def load(self, data, x):
        """``(24,)`` aggregate load of ``x``: each device's power added to the slots it runs
        in, device after device, as ``simulator.load`` adds them (the same bits).

        A loop over the devices (unrolled half at a time) of elementwise adds over the 24
        slots: the product ``power @ running`` with its ``(N, 24)`` 0/1 matrix cost two
        fifths of the sweep (SHDS 4.8 -> 2.9 ms per sweep at batch 1024,
        ``benchmarks/RESULTS.md``).
        """
        power, duration, slots = data["power"], data["duration"], jnp.arange(simulator.N_SLOTS)

        def add(i, total):
            return total + jnp.where((slots >= x[i]) & (slots < x[i] + duration[i]), power[i], 0.0)

        # At least two trips of a loop: fully unrolled, XLA fused the chain of adds into
        # each consumer of the load and ran it again for every element it reads (the
        # seed team's features ran 8x slower).
        n = power.shape[0]
        return jax.lax.fori_loop(0, n, add, jnp.zeros(simulator.N_SLOTS, power.dtype), unroll=max(1, -(-n // 2)))

    def cost(self, data, x):
        load = self.load(data, x)
        preference = simulator.PREFERENCE_COST * jnp.sum(jnp.abs(x - data["pref_start"]))
        overload = simulator.OVERLOAD_COST * jnp.sum(jnp.maximum(0.0, load - data["capacity"]))
        return data["price"] @ load + preference + overload

    def _columns(self, data, x, rows, own=None, load=None):
        """The 18 columns ``(m,)`` of ``simulator.violation``'s rows ``rows`` (plus ``own``'s columns
        where given), from the rows' own inputs (``JaxProblem.columns``), in O(m x 24);
        ``load``: the aggregate load where already computed.

        Moving ``i`` to ``v`` adds its power to the slots of its window ``v .. v+d_i-1``
        and leaves the others at the rest of the load, so the overload is the rest's
        overload over all 24 slots plus, per window slot, what ``i``'s power adds to it:
        a window sum over at most six slots instead of the ``(18, 24)`` moved-load
        profile per device (what ``simulator.violation`` builds; same terms, summed in
        another order). Each slot ``h`` is a column too: the rest's overload is summed
        slot by slot.
        """
        load = self.load(data, x) if load is None else load
        capacity = data["capacity"]
        power, duration, start = data["power"][rows], data["duration"][rows], x[rows]
        over, added = [], []  # per slot h: the rest's overload, and what i's power adds to it
        for h in range(simulator.N_SLOTS):
            running = ((h >= start) & (h < start + duration)).astype(power.dtype)
            rest = load[h] - power * running
            over.append(jnp.maximum(0.0, rest - capacity[h]))
            added.append(jnp.maximum(0.0, (rest + power) - capacity[h]) - over[h])
        total = over[0]
        for h in range(1, simulator.N_SLOTS):
            total = total + over[h]
        columns = []
        for v in range(D):
            window = jnp.zeros(power.shape, power.dtype)
            for k in range(simulator.MAX_DURATION):
                window = window + jnp.where(k < duration, added[k + v], 0.0)
            column = simulator.OVERLOAD_COST * (total + window)
            columns.append(column if own is None else own[:, v] + column)
        return columns

    def landscape(self, data, x):
        return js.stack_columns(self._columns(data, x, jnp.arange(x.shape[0]), data["own_cost"]))

    def sweep_inputs(self, data, x):
        return self.load(data, x)

    def role_landscape(self, data, x, idx, landscape, shared=None):
        return js.stack_columns(self._columns(data, x, idx, data["own_cost"][idx], shared))

    def features(self, data, state, landscape, role, idx, shared=None):
        load = self.load(data, state.x) if shared is None else shared
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
