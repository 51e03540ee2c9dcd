"""One tour: nearest-neighbour construction and 2-opt improvement (shared by HMTSP and FSTSP).

- **Nearest neighbour** (Rosenkrantz, Stearns & Lewis 1977, "An analysis of several
  heuristics for the traveling salesman problem", SIAM J. Comput. 6(3)): from the start
  node, always go to the nearest unvisited node (ties: the lowest id).
- **2-opt** (Croes 1958, "A method for solving traveling-salesman problems", Oper. Res.
  6(6)): replace two edges ``(p_i, p_i+1), (p_j, p_j+1)`` by ``(p_i, p_j), (p_i+1, p_j+1)``
  (reversing the path between them) while that shortens the path; best improvement per
  pass (the pair of largest gain, ties: the first in row-major order), until no pair
  gains more than ``EPS``. The endpoints (depots) stay fixed, so the same code improves
  a closed tour (``start == end``) and a path between two depots.
"""

from __future__ import annotations

import numpy as np

EPS = 1e-12


def nearest_neighbour(dist: np.ndarray, start: int, nodes: np.ndarray) -> list[int]:
    """Visit ``nodes`` from ``start`` always going to the nearest unvisited one (ties: lowest id)."""
    left = sorted(int(v) for v in nodes)
    tour: list[int] = []
    u = start
    while left:
        arr = np.array(left)
        j = int(arr[np.argmin(dist[u, arr])])
        tour.append(j)
        left.remove(j)
        u = j
    return tour


def path_length(dist: np.ndarray, start: int, tour: list[int], end: int) -> float:
    path = [start, *tour, end]
    return float(sum(dist[a, b] for a, b in zip(path[:-1], path[1:])))


def two_opt(dist: np.ndarray, start: int, tour: list[int], end: int) -> list[int]:
    """The 2-opt local optimum reached from ``tour`` (a list of node ids between ``start`` and ``end``).

    ``dist`` must be symmetric (a reversed segment keeps its length).
    """
    path = np.array([start, *tour, end], dtype=np.int64)
    m = path.size - 1  # edges 0..m-1: (path[e], path[e+1])
    if m < 3:
        return [int(v) for v in path[1:-1]]
    while True:
        a, b = path[:-1], path[1:]
        edge = dist[a, b]
        # delta[i, j] for edges i < j: new (a_i, a_j), (b_i, b_j) minus old (a_i, b_i), (a_j, b_j)
        delta = dist[a[:, None], a[None, :]] + dist[b[:, None], b[None, :]] - edge[:, None] - edge[None, :]
        delta[np.tril_indices(m, 1)] = 0.0  # only i + 1 < j changes anything
        flat = int(np.argmin(delta))
        if delta.flat[flat] >= -EPS:
            return [int(v) for v in path[1:-1]]
        i, j = divmod(flat, m)
        path[i + 1 : j + 1] = path[i + 1 : j + 1][::-1].copy()
