"""DiMES in JAX: the functional twin of ``simulator.py`` + ``roles.py``."""

from __future__ import annotations

import numpy as np

from relic_envs.dcop import _jax_sweep as js
from relic_envs.dcop._jax_sweep import jnp
from relic_envs.dcop.dimes import simulator

D = simulator.N_SLOTS


class DiMESJax(js.JaxProblem):
    domain = D
    columns = True  # 20 values: built column by column (JaxProblem.columns)
    block = 128  # batch 1024 in 8 blocks (benchmarks/RESULTS.md)

    # ``meetings`` only carries the batch's largest meeting count as a static shape.
    ragged = {"meetings": 0}

    def arrays(self, instance):
        meeting = np.asarray(instance.meeting, np.int32)
        return {
            "meeting": meeting,
            "meeting_size": np.bincount(meeting)[meeting].astype(np.int32),  # attendances of i's meeting
            "meetings": np.zeros(int(meeting.max()) + 1, np.int8),
            "travel_time": simulator.travel_time(instance),
            "pref": np.asarray(instance.pref, np.float64),
        }

    def _counts(self, data, x):
        """``(M, 20)`` attendances of each meeting at each slot (``simulator.slot_counts``)."""
        m = data["meetings"].shape[0]
        return jnp.zeros(m * D, jnp.int32).at[data["meeting"] * D + x].add(1).reshape(m, D)

    def cost(self, data, x):
        counts = self._counts(data, x)
        off = jnp.sum(counts.sum(axis=1) - counts.max(axis=1))
        gap = jnp.abs(x[0::2] - x[1::2])
        travel = jnp.sum(jnp.maximum(0.0, data["travel_time"][0::2] - gap))
        pref = jnp.sum(jnp.take_along_axis(data["pref"], x[:, None], axis=1))
        return simulator.OFF_SLOT_COST * off + simulator.TRAVEL_COST * travel + pref

    def _columns(self, data, x, rows, pref=None):
        """The 20 columns ``(m,)`` of ``violation(data, x)[rows]`` (plus ``pref``'s columns
        where given), from the rows' own inputs (``JaxProblem.columns``)."""
        counts = self._counts(data, x)
        meeting, xr = data["meeting"][rows], x[rows]
        others = [counts[meeting, v] - (xr == v) for v in range(D)]  # the meeting without i, slot v
        best_other = others[0]
        for v in range(1, D):
            best_other = jnp.maximum(best_other, others[v])
        size = data["meeting_size"][rows]  # counts.sum(axis=1): every attendance has a slot
        partner_slot, travel_time = x[rows ^ 1], data["travel_time"][rows]
        columns = []
        for v in range(D):
            off = size - jnp.maximum(best_other, others[v] + 1)
            travel = jnp.maximum(0.0, travel_time - jnp.abs(v - partner_slot))
            column = simulator.OFF_SLOT_COST * off + simulator.TRAVEL_COST * travel
            columns.append(column if pref is None else column + pref[:, v])
        return columns

    def violation(self, data, x):
        return js.stack_columns(self._columns(data, x, jnp.arange(x.shape[0])))

    def landscape(self, data, x):
        return js.stack_columns(self._columns(data, x, jnp.arange(x.shape[0]), data["pref"]))

    def role_landscape(self, data, x, idx, landscape):
        return js.stack_columns(self._columns(data, x, idx, data["pref"][idx]))

    def features(self, data, state, landscape, role, idx):
        violation = self.violation(data, state.x) if role in ("A", "B") else None
        return js.graph_features(data, state, landscape, violation, role, idx, D)


PROBLEM = DiMESJax()
peers = simulator.peers
