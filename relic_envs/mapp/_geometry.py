"""Instance geometry shared by the routing generators (Appendix B.1, "Instance generation").

Every routing instance is a complete Euclidean graph on the unit square: node 0 is the
depot at (0.5, 0.5), the other ``N - 1`` nodes are uniform customers. The per-agent
budget is "1.2 times a geometric estimate combining the mean depot distance and the
expected nearest-neighbour spacing"; :func:`geometric_budget` is our reading of it
(see docs/benchmarks/mapp.md, "Decisions the paper leaves open").
"""

from __future__ import annotations

import numpy as np

from relic_envs.core.numerics import exp

DEPOT_XY = (0.5, 0.5)
BUDGET_FACTOR = 1.2
N_AGENTS = 3


def coordinates(n_nodes: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_nodes, 2)`` float64: the depot, then ``n_nodes - 1`` uniform customers."""
    customers = rng.random((n_nodes - 1, 2))
    return np.concatenate([np.array([DEPOT_XY]), customers]).astype(np.float64)


def distances(coords: np.ndarray) -> np.ndarray:
    """Euclidean distance matrix ``l_ij`` (float64, exact zero diagonal)."""
    diff = coords[:, None, :] - coords[None, :, :]
    return np.sqrt(np.sum(diff * diff, axis=-1))


def geometric_budget(coords: np.ndarray, visit_scale: float) -> float:
    """``1.2 * (2 * mean depot distance + K * nearest-neighbour spacing)``.

    ``K = (N - 1) * visit_scale`` is the target number of visits per agent: a third of
    the customers for MAPP-PC/DS (``visit_scale = 1/3``) and ``1/(3 * 2.5)`` of them
    for MAPP-AR, where one scan also clears its neighbourhood. The expected
    nearest-neighbour spacing of ``m`` uniform points in the unit square is
    ``0.5 / sqrt(m)``; the out-and-back term is twice the mean depot distance.
    """
    customers = coords[1:]
    depot_distance = np.sqrt(np.sum((customers - coords[0]) ** 2, axis=1)).mean()
    m = customers.shape[0]
    spacing = 0.5 / np.sqrt(m)
    return float(BUDGET_FACTOR * (2.0 * depot_distance + m * visit_scale * spacing))


def hotspot_prizes(coords: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Prizes from 2 or 3 Gaussian hotspots plus a 0.1 baseline, unit mean over customers.

    Centres uniform in [0.1, 0.9]^2, standard deviations in [0.08, 0.15], weights in
    [0.6, 1.0]; the depot's prize is 0.
    """
    k = int(rng.integers(2, 4))
    centres = rng.uniform(0.1, 0.9, (k, 2))
    stds = rng.uniform(0.08, 0.15, k)
    weights = rng.uniform(0.6, 1.0, k)
    sq = np.sum((coords[1:, None, :] - centres[None]) ** 2, axis=-1)
    raw = 0.1 + np.sum(weights * exp(-sq / (2.0 * stds**2)), axis=1)  # CPU-independent exp (CONTRIBUTING)
    return np.concatenate([[0.0], raw / raw.mean()])
