"""MAPP-PC instances and the paper's generator (Appendix B.1, "Instance generation").

Training: five batches of ten instances with N = 40 nodes (depot at (0.5, 0.5) plus 39
uniform customers). Prizes: a mixture of two or three Gaussian hotspots plus a 0.1
baseline, normalised to unit mean over the customers. Budget: 1.2 times the geometric
estimate with a third of the customers as the per-agent target. Test: 20 instances at
each of N = 50 and N = 80 from the same distribution and disjoint seeds (the split
seeds in ``relic_envs.core.splits``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from relic_envs.errors import InvalidInstance
from relic_envs.mapp._geometry import coordinates, geometric_budget, hotspot_prizes
from relic_envs.mapp._routing import RoutingInstance

VISIT_SCALE = 1.0 / 3.0  # target visits per agent = a third of the customers


@dataclasses.dataclass(frozen=True)
class PCRegime:
    n_nodes: int


TRAIN_N, TEST_NS = 40, (50, 80)
REGIMES = {f"train{b}": PCRegime(TRAIN_N) for b in range(1, 6)}
REGIMES.update({f"test{n}": PCRegime(n) for n in TEST_NS})


@dataclasses.dataclass(frozen=True)
class PCInstance(RoutingInstance):
    """Customers with prizes; the depot's prize is 0."""

    kind = "mapp_pc"
    prizes: np.ndarray  # (N,) float64 >= 0, prizes[0] = 0

    def validate(self) -> None:
        super().validate()
        self.node_array("prizes", self.prizes, 0.0, np.inf)
        if self.prizes[0] != 0:
            raise InvalidInstance(f"field 'prizes' must be 0 at the depot, got {self.prizes[0]}")


def generate(regime: PCRegime, rng: np.random.Generator) -> PCInstance:
    coords = coordinates(regime.n_nodes, rng)
    prizes = hotspot_prizes(coords, rng)
    return PCInstance(coords=coords, budget=geometric_budget(coords, VISIT_SCALE), prizes=prizes)
