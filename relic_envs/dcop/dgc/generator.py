"""DGC instances and the paper's generator (Appendix B.4, "Instance generation").

120 variables, 3 colours, 50 sweeps. Training: five batches of ten fixed-edge-count
Erdos-Renyi graphs with mean degree 3, 5, 7, 9, 12 (``round(120 * d / 2)`` distinct
edges drawn uniformly), integer weights uniform on 1..100, uniform initial colours.
Training edge arrays are padded with zero-weight self-loops to the largest training
edge count (720), so every training instance has the same shape; the test split
(mean degree 6, 360 edges) is unpadded.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from relic_envs.core.instance import Instance, check_array, check_range
from relic_envs.dcop._sweep import balanced_ownership
from relic_envs.dcop.dgc.simulator import N_COLORS, landscape_of
from relic_envs.errors import InvalidInstance

N_VARS = 120
TRAIN_DEGREES = (3, 5, 7, 9, 12)
TEST_DEGREE = 6
TRAIN_EDGE_SLOTS = round(N_VARS * max(TRAIN_DEGREES) / 2)


@dataclasses.dataclass(frozen=True)
class DGCRegime:
    mean_degree: float
    edge_slots: int | None  # pad the edge arrays to this length (None: no padding)
    n_vars: int = N_VARS


REGIMES = {f"train{b}": DGCRegime(d, TRAIN_EDGE_SLOTS) for b, d in enumerate(TRAIN_DEGREES, start=1)}
REGIMES["test"] = DGCRegime(TEST_DEGREE, None)


@dataclasses.dataclass(frozen=True)
class DGCInstance(Instance):
    """A weighted graph to 3-colour.

    Padded edges are self-loops ``(i, i)`` with weight 0; they add nothing to any cost.
    """

    kind = "dgc"
    edges: np.ndarray  # (E, 2) int64, endpoints in 0..N-1
    weights: np.ndarray  # (E,) int64, 1..100 (0 on padding self-loops)
    x0: np.ndarray  # (N,) int64, initial colours in 0..2
    owner: np.ndarray  # (N,) int8, role of each variable: 0=A, 1=B, 2=C
    seed: int  # uint32 seed of the exploration tensor u

    def validate(self) -> None:
        check_array("x0", self.x0, (None,), "iu")
        n = self.x0.shape[0]
        check_array("edges", self.edges, (None, 2), "iu")
        check_array("weights", self.weights, (self.edges.shape[0],), "iu")
        check_array("owner", self.owner, (n,), "iu")
        check_range("edges", self.edges, 0, n - 1)
        check_range("weights", self.weights, 0, 10**6)
        check_range("x0", self.x0, 0, N_COLORS - 1)
        check_range("owner", self.owner, 0, 2)
        loops = self.edges[:, 0] == self.edges[:, 1]
        if np.any(self.weights[loops] != 0):
            raise InvalidInstance("field 'weights' must be 0 on self-loops (they only pad the edge arrays)")


def generate(regime: DGCRegime, rng: np.random.Generator) -> DGCInstance:
    """Draw one DGC instance of a regime."""
    n = regime.n_vars
    n_edges = round(n * regime.mean_degree / 2)
    # Fixed-edge-count G(n, M): M distinct unordered pairs, uniformly.
    pair_ids = rng.choice(n * (n - 1) // 2, size=n_edges, replace=False)
    pair_ids.sort()
    rows, cols = np.triu_indices(n, k=1)
    edges = np.stack([rows[pair_ids], cols[pair_ids]], axis=1).astype(np.int64)
    weights = rng.integers(1, 101, size=n_edges).astype(np.int64)
    x0 = rng.integers(0, N_COLORS, size=n).astype(np.int64)
    seed = int(rng.integers(0, 2**32))
    if regime.edge_slots is not None and regime.edge_slots > n_edges:
        pad = regime.edge_slots - n_edges
        loops = np.arange(pad, dtype=np.int64) % n
        edges = np.concatenate([edges, np.stack([loops, loops], axis=1)])
        weights = np.concatenate([weights, np.zeros(pad, dtype=np.int64)])
    owner = ownership(edges, weights, x0)
    return DGCInstance(edges=edges, weights=weights, x0=x0, owner=owner, seed=seed)


def ownership(edges: np.ndarray, weights: np.ndarray, x0: np.ndarray) -> np.ndarray:
    """Balanced thirds from incident-edge statistics at the initial colouring.

    A (constraint risk): weight of currently conflicting incident edges.
    B (improvement opportunity): the best local-cost decrease a recolour would give.
    C (coordination coupling): number of distinct neighbours (degree).
    Ties are broken by total incident weight, then by index.
    """
    n = x0.shape[0]
    real = edges[:, 0] != edges[:, 1]
    e, w = edges[real], weights[real].astype(np.float64)
    strength = np.bincount(e.ravel(), weights=np.repeat(w, 2), minlength=n)
    degree = np.bincount(e.ravel(), minlength=n).astype(np.float64)
    delta = landscape_of(e, w, x0)
    risk = delta[np.arange(n), x0]
    opportunity = risk - delta.min(axis=1)
    tie = strength / (strength.max() + 1.0)  # < 1, so it only breaks ties
    return balanced_ownership(np.stack([risk + tie, opportunity + tie, degree + tie], axis=1))

