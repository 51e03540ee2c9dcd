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

    # ``meetings`` and ``count_words`` only carry static shapes: the batch's largest
    # meeting count, and the 32-bit words that hold a meeting's 20 slot counts.
    ragged = {"meetings": 0, "count_words": 0}

    def arrays(self, instance):
        meeting = np.asarray(instance.meeting, np.int32)
        sizes = np.bincount(meeting)
        return {
            "meeting": meeting,
            "meeting_size": sizes[meeting].astype(np.int32),  # attendances of i's meeting
            "meetings": np.zeros(sizes.size, np.int8),
            "count_words": np.zeros(_count_words(int(sizes.max())), np.int8),
            "travel_time": simulator.travel_time(instance),
            "pref": np.asarray(instance.pref, np.float64),
        }

    def _counts(self, data, x):
        """``(M, 20)`` attendances of each meeting at each slot (``simulator.slot_counts``)."""
        m = data["meetings"].shape[0]
        return jnp.zeros(m * D, jnp.int32).at[data["meeting"] * D + x].add(1).reshape(m, D)

    def _packed_counts(self, data, x):
        """``(B, M, W)`` uint32 for a batch (``data`` and ``x`` batched): the slot counts of
        ``_counts``, packed ``20 / W`` to a word (8 bits a count where meetings have at
        most 255 attendances), in one scatter over the flattened batch.

        Each role's landscape reads its variables' meeting counts, 20 per variable;
        packed, that is ``W`` (5) gathers per variable instead of 20, and the gathers are
        what the landscape's time went to (DiMES 4.2 -> 3.8 ms per sweep at batch 1024,
        ``benchmarks/RESULTS.md``). Each attendance adds a one at its slot's field; a
        field holds the meeting's size, so no count carries into the next field.
        """
        b, (m, n_words) = x.shape[0], (data["meetings"].shape[-1], data["count_words"].shape[-1])
        per = -(-D // n_words)
        one = jnp.left_shift(jnp.uint32(1), (32 // per * (x % per)).astype(jnp.uint32))
        cell = (jnp.arange(b, dtype=jnp.int32)[:, None] * m + data["meeting"]) * n_words + x // per
        words = jnp.zeros(b * m * n_words, jnp.uint32).at[cell.reshape(-1)].add(one.reshape(-1))
        return words.reshape(b, m, n_words)

    def cost(self, data, x):
        counts = self._counts(data, x)
        off = jnp.sum(counts.sum(axis=1) - counts.max(axis=1))
        gap = jnp.abs(x[0::2] - x[1::2])
        travel = jnp.sum(jnp.maximum(0.0, data["travel_time"][0::2] - gap))
        pref = jnp.sum(jnp.take_along_axis(data["pref"], x[:, None], axis=1))
        return simulator.OFF_SLOT_COST * off + simulator.TRAVEL_COST * travel + pref

    def _columns(self, data, x, rows, pref=None, words=None):
        """The 20 columns ``(m,)`` of ``simulator.violation``'s rows ``rows`` (plus ``pref``'s columns
        where given), from the rows' own inputs (``JaxProblem.columns``); ``words``: the
        packed slot counts where already computed."""
        if words is None:
            words = self.sweep_inputs(data, x)
        meeting, xr = data["meeting"][rows], x[rows]
        per = -(-D // words.shape[1])  # slot counts a word holds
        bits = 32 // per
        mine = [words[meeting, k] for k in range(words.shape[1])]  # i's meeting's words
        field = jnp.uint32((1 << bits) - 1)
        counts = [((mine[v // per] >> jnp.uint32(bits * (v % per))) & field).astype(jnp.int32) for v in range(D)]
        others = [counts[v] - (xr == v) for v in range(D)]  # the meeting without i, slot v
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

    def landscape(self, data, x):
        return js.stack_columns(self._columns(data, x, jnp.arange(x.shape[0]), data["pref"]))

    def sweep_inputs(self, data, x):
        return self._packed_counts({k: v[None] for k, v in data.items()}, x[None])[0]

    def batch_sweep_inputs(self, data, x):
        return self._packed_counts(data, x)

    def role_landscape(self, data, x, idx, landscape, shared=None):
        return js.stack_columns(self._columns(data, x, idx, data["pref"][idx], shared))

    def features(self, data, state, landscape, role, idx, shared=None):
        rows = self.role_landscape(data, state.x, idx, landscape, shared)
        violation = None if role == "C" else js.stack_columns(self._columns(data, state.x, idx, None, shared))
        return js.graph_features(data, state, rows, violation, role, idx, D)


def _count_words(largest_meeting: int) -> int:
    """32-bit words per meeting for its 20 slot counts: 8-, 16- or 32-bit fields, the
    narrowest that holds ``largest_meeting`` (``DiMESJax._packed_counts``)."""
    for words, bits in ((5, 8), (10, 16)):
        if largest_meeting < 1 << bits:
            return words
    return D


PROBLEM = DiMESJax()
peers = simulator.peers
