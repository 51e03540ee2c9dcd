"""DGC cost and local landscape (Appendix B.4, Eq. dgc).

``C(x) = sum over edges (i, j) of w_ij * [x_i == x_j]``; the local cost of variable
``i`` at colour ``c`` is ``sum of w_ij over neighbours j with x_j == c``. Every term
of DGC is a constraint penalty, so the violation landscape equals the landscape.
"""

from __future__ import annotations

import numpy as np

N_COLORS = 3


def cost(instance, x: np.ndarray) -> float:
    """Total weight of monochromatic edges (padding self-loops weigh 0)."""
    e = instance.edges
    return float(np.sum(instance.weights * (x[e[:, 0]] == x[e[:, 1]])))


def landscape_of(edges: np.ndarray, weights: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``delta[i, c]``: total weight of ``i``'s neighbours that have colour ``c``."""
    n = x.shape[0]
    src = np.concatenate([edges[:, 0], edges[:, 1]])
    dst = np.concatenate([edges[:, 1], edges[:, 0]])
    w = np.concatenate([weights, weights]).astype(np.float64)
    flat = np.bincount(src * N_COLORS + x[dst], weights=w, minlength=n * N_COLORS)
    return flat.reshape(n, N_COLORS)


def landscape(instance, x: np.ndarray) -> np.ndarray:
    return landscape_of(instance.edges, instance.weights, x)


def peers(instance) -> np.ndarray:
    """Distinct neighbour pairs (padding self-loops and duplicates dropped)."""
    e = instance.edges[instance.edges[:, 0] != instance.edges[:, 1]]
    return np.unique(np.sort(e, axis=1), axis=0)
