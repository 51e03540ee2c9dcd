"""DiMES cost and local landscape (Appendix B.4, Eq. dimes), PEAV form.

Variable ``i`` is one person-meeting attendance choosing a slot in 0..19; variables
``2p`` and ``2p + 1`` are person ``p``'s two attendances. The meeting time is the
majority slot of its attendances, so the off-majority count of a meeting is
``size - (largest slot count)`` whatever slot wins a tie::

    C = 100 * sum_i [x_i != q_m(i)]
      + 10 * sum_p max(0, tau_p - |x_2p - x_2p+1|)
      + sum_i a[i, x_i]

The local cost of ``i`` at slot ``v`` sums the three terms that involve ``i``: its
meeting's whole off-majority term, its person's travel term and its own preference.
The violation landscape (for DSA-B's conflict test and role A's features) is the
first two.
"""

from __future__ import annotations

import numpy as np

N_SLOTS = 20
OFF_SLOT_COST = 100.0
TRAVEL_COST = 10.0


def partner(n: int) -> np.ndarray:
    """The other attendance of the same person: ``i ^ 1``."""
    return np.arange(n) ^ 1


def travel_time(instance) -> np.ndarray:
    """``(N,)`` travel time between a variable's meeting and its partner's meeting."""
    loc = instance.location
    return instance.travel[loc, loc[partner(loc.size)]].astype(np.float64)


def slot_counts(instance, x: np.ndarray) -> np.ndarray:
    """``(M, 20)`` attendances of each meeting at each slot."""
    n_meetings = int(instance.meeting.max()) + 1
    flat = np.bincount(instance.meeting * N_SLOTS + x, minlength=n_meetings * N_SLOTS)
    return flat.reshape(n_meetings, N_SLOTS)


def cost(instance, x: np.ndarray) -> float:
    counts = slot_counts(instance, x)
    off = float(np.sum(counts.sum(axis=1) - counts.max(axis=1)))
    even = np.arange(0, x.size, 2)
    gap = np.abs(x[even] - x[even + 1])
    travel = float(np.sum(np.maximum(0.0, travel_time(instance)[even] - gap)))
    pref = float(np.sum(instance.pref[np.arange(x.size), x]))
    return OFF_SLOT_COST * off + TRAVEL_COST * travel + pref


def violation(instance, x: np.ndarray) -> np.ndarray:
    """``(N, 20)`` off-majority plus travel cost of each slot, others fixed."""
    n = x.size
    counts = slot_counts(instance, x)[instance.meeting]  # (N, 20): i's meeting
    others = counts.copy()
    others[np.arange(n), x] -= 1  # the meeting without i
    best_other = others.max(axis=1, keepdims=True)
    size = counts.sum(axis=1, keepdims=True)
    off = size - np.maximum(best_other, others + 1)
    gap = np.abs(np.arange(N_SLOTS)[None, :] - x[partner(n)][:, None])
    travel = np.maximum(0.0, travel_time(instance)[:, None] - gap)
    return OFF_SLOT_COST * off + TRAVEL_COST * travel


def landscape(instance, x: np.ndarray) -> np.ndarray:
    return violation(instance, x) + instance.pref


def peers(instance) -> np.ndarray:
    """Pairs sharing a cost term: co-attendees of a meeting, and a person's two attendances."""
    meeting = instance.meeting
    i, j = np.triu_indices(meeting.size, k=1)
    same = (meeting[i] == meeting[j]) | (j == (i ^ 1))
    return np.stack([i[same], j[same]], axis=1)
