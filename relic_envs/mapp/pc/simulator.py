"""MAPP-PC reward (Eq. mapp-pc): each node's prize counts once, whoever reaches it.

``R_PC = sum_i q_i 1{exists k, t: v_kt = i}``. Simultaneous arrivals at one node in
one step collect it once: the first arrival in rollout order zeroes the remaining
prize, the later ones find nothing.
"""

from __future__ import annotations

import numpy as np


def init_dynamic(instance, dist) -> dict[str, np.ndarray]:
    n = instance.n_nodes
    return {"remaining": np.array(instance.prizes, dtype=np.float64), "reached": np.zeros(n, dtype=bool)}


def arrive(instance, dyn, node: int, t: int) -> None:
    dyn["reached"][node] = True
    dyn["remaining"][node] = 0.0


def objective(instance, dyn) -> float:
    return float(np.sum(instance.prizes[dyn["reached"]]))


def node_view(instance, dyn, t: int) -> dict[str, np.ndarray]:
    open_ = ~dyn["reached"]
    open_[0] = False
    return {"prize": dyn["remaining"].copy(), "open": open_}


def objective_bound(instance, dyn) -> float:
    """The largest reward any team can collect: every prize."""
    return float(np.sum(np.abs(instance.prizes)))
