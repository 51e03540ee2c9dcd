"""SHDS roles: A capacity-violation repair using current load, B price and preference
opportunity using capacity slack, C load-trend stabilisation (Appendix B.4).

Per-device features are ``(m,)`` arrays aligned with ``cur``; neighbourhood curves are
``(24,)`` arrays over the day's slots:

- ``duration`` (int), ``power``, ``pref_start`` (int): the owned devices' data.
- ``load_now``: aggregate load ``L_h`` now. ``capacity``: ``kappa_h``. ``price``: ``theta_h``.
- ``capacity_slack``: ``kappa_h - L_h`` (negative where overloaded).
- ``load_change``: ``L_h`` now minus ``L_h`` one sweep earlier (0 at ``t = 0``).
"""

from __future__ import annotations

import numpy as np

from relic_envs.dcop._sweep import DCOPProblem, Feature, SweepContext, per_var
from relic_envs.dcop.shds import generator, simulator


def per_slot(m, problem):
    return (simulator.N_SLOTS,)


DURATION = Feature("duration", "int64 (m,): run length of each owned device in slots (1..6)", per_var, "int", 1, simulator.MAX_DURATION)
POWER = Feature("power", "float64 (m,): power draw of each owned device", per_var, low=0.0)
PREF = Feature("pref_start", "int64 (m,): preferred start of each owned device (0..17)", per_var, "int", 0, simulator.N_STARTS - 1)
LOAD = Feature("load_now", "float64 (24,): neighbourhood load per slot now", per_slot, low=0.0)
CAPACITY = Feature("capacity", "float64 (24,): neighbourhood capacity per slot", per_slot, low=0.0)
PRICE = Feature("price", "float64 (24,): energy price per slot", per_slot)
SLACK = Feature("capacity_slack", "float64 (24,): capacity minus load per slot (negative = overload)", per_slot)
CHANGE = Feature("load_change", "float64 (24,): change of the load per slot over the last sweep", per_slot)

ROLE_FEATURES = {
    "A": (DURATION, POWER, LOAD, CAPACITY),
    "B": (DURATION, POWER, PREF, PRICE, SLACK),
    "C": (DURATION, POWER, LOAD, CHANGE, CAPACITY),
}
PURPOSES = {
    "A": "capacity-violation repair using current load",
    "B": "price and preference opportunity using capacity slack",
    "C": "load-trend stabilisation",
}


class SHDSProblem(DCOPProblem, instance=generator.SHDSInstance, simulator=simulator):
    domain = simulator.N_STARTS
    purposes = PURPOSES
    role_features = ROLE_FEATURES

    def worst_cost(self, instance):
        # Each device at its dearest slots, farthest from its preference, and the whole
        # neighbourhood's power on every slot for the overload term.
        power = np.abs(instance.power)
        energy = float((power * instance.duration).sum()) * float(np.abs(instance.price).max())
        far = np.maximum(instance.pref_start, simulator.N_STARTS - 1 - instance.pref_start)
        overload = np.maximum(0.0, power.sum() - instance.capacity).sum()
        return energy + simulator.PREFERENCE_COST * float(np.abs(far).sum()) + simulator.OVERLOAD_COST * float(overload)

    def peers(self, instance):
        """Devices of the same home (every device shares the overload terms; homes give
        the semantic coupling the paper uses for ownership)."""
        home = instance.home
        i, j = np.triu_indices(home.size, k=1)
        same = home[i] == home[j]
        return np.stack([i[same], j[same]], axis=1)

    def coupled(self, instance):
        """Every pair of devices: all of them can run in slots 0..17, so they share the
        overload terms of those slots."""
        i, j = np.triu_indices(instance.home.size, k=1)
        return np.stack([i, j], axis=1)

    def features(self, ctx: SweepContext, role: str, idx: np.ndarray):
        inst = ctx.instance
        load = ctx.cache("load", lambda: simulator.load(inst, ctx.x))
        available = {
            "duration": lambda: inst.duration[idx],
            "power": lambda: inst.power[idx],
            "pref_start": lambda: inst.pref_start[idx],
            "load_now": lambda: load,
            "capacity": lambda: inst.capacity,
            "price": lambda: inst.price,
            "capacity_slack": lambda: inst.capacity - load,
            "load_change": lambda: load - simulator.load(inst, ctx.x_prev),
        }
        return self.pick(role, available)
