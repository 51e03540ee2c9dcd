"""MAPP-AR instances and the paper's generator (Appendix B.1, "Instance generation").

Central depot, uniform customers. Training: five batches of ten N = 40 instances, the
correlation length fixed within a batch and following sigma = 0.08, 0.12, 0.10, 0.15,
0.09 across the batches. Budget: the MAPP-PC geometric rule with the target number of
visits scaled by 1/(3 x 2.5). Test: 20 instances at each of N = 50, 80 with
sigma = 0.11.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from relic_envs.errors import InvalidInstance
from relic_envs.mapp._geometry import coordinates, geometric_budget
from relic_envs.mapp._routing import RoutingInstance

VISIT_SCALE = 1.0 / (3.0 * 2.5)
TRAIN_SIGMAS = (0.08, 0.12, 0.10, 0.15, 0.09)
TEST_SIGMA = 0.11


@dataclasses.dataclass(frozen=True)
class ARRegime:
    n_nodes: int
    sigma: float


TRAIN_N, TEST_NS = 40, (50, 80)
REGIMES = {f"train{b}": ARRegime(TRAIN_N, s) for b, s in enumerate(TRAIN_SIGMAS, start=1)}
REGIMES.update({f"test{n}": ARRegime(n, TEST_SIGMA) for n in TEST_NS})


@dataclasses.dataclass(frozen=True)
class ARInstance(RoutingInstance):
    """Nodes to scan; every customer starts with unit residual uncertainty."""

    kind = "mapp_ar"
    sigma: float  # spatial correlation length, > 0

    def validate(self) -> None:
        super().validate()
        if not (np.isfinite(self.sigma) and self.sigma > 0):
            raise InvalidInstance(f"field 'sigma' must be a finite number > 0, got {self.sigma!r}")


def generate(regime: ARRegime, rng: np.random.Generator) -> ARInstance:
    coords = coordinates(regime.n_nodes, rng)
    return ARInstance(coords=coords, budget=geometric_budget(coords, VISIT_SCALE), sigma=float(regime.sigma))
