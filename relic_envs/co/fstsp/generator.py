"""FSTSP instances and the paper's generator (Appendix B.3, "Instance generation").

The shared depot is fixed at ``(0.5, 0.5)``; customer coordinates are uniform in
``[0, 1]^2``; each customer is drone-eligible with probability 0.7; drone endurance is
``U[0.65, 0.9]`` (time units), drone speed ``U[1.8, 2.5]``, truck speed 1. Training:
five batches of ten 50-customer instances (one regime, five seeds: the paper gives no
per-batch variation); test: 20 instances at each of 100 and 200 customers (disjoint
seeds: the split seeds of ``relic_envs.core.splits``).

Node ids: the depot is ``0``, customer ``i`` (row ``i - 1`` of ``customers``) is ``i``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from relic_envs.core.instance import Instance, check_array, check_range
from relic_envs.errors import InvalidInstance

TRAIN_N, TEST_NS = 50, (100, 200)
DEPOT = (0.5, 0.5)
ELIGIBLE_P = 0.7
ENDURANCE = (0.65, 0.9)
DRONE_SPEED = (1.8, 2.5)
TRUCK_SPEED = 1.0


@dataclasses.dataclass(frozen=True)
class FSTSPRegime:
    n_customers: int


REGIMES = {f"train{b}": FSTSPRegime(TRAIN_N) for b in range(1, 6)}
REGIMES.update({f"test{n}": FSTSPRegime(n) for n in TEST_NS})


@dataclasses.dataclass(frozen=True)
class FSTSPInstance(Instance):
    """Customers (some drone-eligible), one depot, one truck and one drone."""

    kind = "fstsp"
    depot: np.ndarray  # (2,) float64 in [0, 1]: depot coordinates (node 0)
    customers: np.ndarray  # (N, 2) float64 in [0, 1]: customer i + 1's coordinates
    eligible: np.ndarray  # (N,) bool: customer i + 1 may be served by the drone
    endurance: float  # drone endurance E > 0 (time from launch to recovery, waiting included)
    drone_speed: float  # > 0
    truck_speed: float  # > 0

    def validate(self) -> None:
        check_array("depot", self.depot, (2,), "f")
        check_range("depot", self.depot, 0.0, 1.0)
        check_array("customers", self.customers, (None, 2), "f")
        if self.customers.shape[0] < 1:
            raise InvalidInstance("field 'customers' needs at least one customer")
        check_range("customers", self.customers, 0.0, 1.0)
        check_array("eligible", self.eligible, (self.n_customers,), "b")
        for name in ("endurance", "drone_speed", "truck_speed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value) or value <= 0:
                raise InvalidInstance(f"field {name!r} must be a positive finite float, got {value!r}")

    @property
    def n_customers(self) -> int:
        return int(self.customers.shape[0])

    @property
    def nodes(self) -> np.ndarray:
        """``(N + 1, 2)`` coordinates of every node id (depot first)."""
        return np.concatenate([self.depot[None, :], self.customers])

    def distances(self) -> np.ndarray:
        """``(N + 1, N + 1)`` Euclidean distances between node ids."""
        xy = self.nodes
        return np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(-1))


def generate(regime: FSTSPRegime, rng: np.random.Generator) -> FSTSPInstance:
    n = regime.n_customers
    customers = rng.uniform(0.0, 1.0, (n, 2))
    eligible = rng.uniform(0.0, 1.0, n) < ELIGIBLE_P
    endurance = float(rng.uniform(*ENDURANCE))
    drone_speed = float(rng.uniform(*DRONE_SPEED))
    return FSTSPInstance(
        depot=np.array(DEPOT), customers=customers, eligible=eligible, endurance=endurance,
        drone_speed=drone_speed, truck_speed=TRUCK_SPEED,
    )
