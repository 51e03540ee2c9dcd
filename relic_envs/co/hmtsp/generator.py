"""HMTSP instances and the paper's generator (Appendix B.3, "Instance generation").

Customer coordinates and the three depots are uniform in ``[0, 1]^2``; each customer
gets one of three task types uniformly. Vehicle ``k``'s travel multiplier ``gamma_k``
and its service multipliers ``s_{k,c}`` (one per task type) are ``U[0.8, 1.3]``; then
``s_{k,k}`` (its own type, "specialization") is multiplied by ``U[0.25, 0.55]``. Each
soft budget is ``B_k = 0.42 N``. Training: five batches of ten 50-customer instances
(the paper gives no per-batch variation: one regime, five seeds); test: 20 instances
at each of 100 and 200 customers (disjoint seeds: the split seeds of
``relic_envs.core.splits``).

Node ids: customers ``0..N-1``, vehicle ``k``'s depot ``N + k``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from relic_envs.core.instance import Instance, check_array, check_range
from relic_envs.errors import InvalidInstance

TRAIN_N, TEST_NS = 50, (100, 200)
MULT_LOW, MULT_HIGH = 0.8, 1.3
SPEC_LOW, SPEC_HIGH = 0.25, 0.55
BUDGET_PER_CUSTOMER = 0.42
VEHICLES = 3


@dataclasses.dataclass(frozen=True)
class HMTSPRegime:
    n_customers: int


REGIMES = {f"train{b}": HMTSPRegime(TRAIN_N) for b in range(1, 6)}
REGIMES.update({f"test{n}": HMTSPRegime(n) for n in TEST_NS})


@dataclasses.dataclass(frozen=True)
class HMTSPInstance(Instance):
    """Customers with task types; three vehicles with depots, multipliers and soft budgets."""

    kind = "hmtsp"
    customers: np.ndarray  # (N, 2) float64 in [0, 1]: customer coordinates
    task_type: np.ndarray  # (N,) int64 in 0..2: task type c(v)
    depots: np.ndarray  # (3, 2) float64 in [0, 1]: depot d_k of vehicle k (A, B, C)
    travel: np.ndarray  # (3,) float64 > 0: travel multiplier gamma_k
    service: np.ndarray  # (3, 3) float64 >= 0: service cost s_{k,c} of vehicle k on task type c
    budget: np.ndarray  # (3,) float64 >= 0: soft budget B_k

    def validate(self) -> None:
        check_array("customers", self.customers, (None, 2), "f")
        if self.customers.shape[0] < 1:
            raise InvalidInstance("field 'customers' needs at least one customer")
        n = self.n_customers
        check_range("customers", self.customers, 0.0, 1.0)
        check_array("task_type", self.task_type, (n,), "iu")
        check_range("task_type", self.task_type, 0, VEHICLES - 1)
        check_array("depots", self.depots, (VEHICLES, 2), "f")
        check_range("depots", self.depots, 0.0, 1.0)
        check_array("travel", self.travel, (VEHICLES,), "f")
        check_range("travel", self.travel, 1e-9, np.inf)
        check_array("service", self.service, (VEHICLES, VEHICLES), "f")
        check_range("service", self.service, 0.0, np.inf)
        check_array("budget", self.budget, (VEHICLES,), "f")
        check_range("budget", self.budget, 0.0, np.inf)

    @property
    def n_customers(self) -> int:
        return int(self.customers.shape[0])

    @property
    def nodes(self) -> np.ndarray:
        """``(N + 3, 2)`` coordinates of every node id (customers, then the depots)."""
        return np.concatenate([self.customers, self.depots])

    def distances(self) -> np.ndarray:
        """``(N + 3, N + 3)`` Euclidean distances ``l`` between node ids."""
        xy = self.nodes
        return np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(-1))


def generate(regime: HMTSPRegime, rng: np.random.Generator) -> HMTSPInstance:
    n = regime.n_customers
    customers = rng.uniform(0.0, 1.0, (n, 2))
    depots = rng.uniform(0.0, 1.0, (VEHICLES, 2))
    task_type = rng.integers(0, VEHICLES, n).astype(np.int64)
    travel = rng.uniform(MULT_LOW, MULT_HIGH, VEHICLES)
    service = rng.uniform(MULT_LOW, MULT_HIGH, (VEHICLES, VEHICLES))
    service[np.arange(VEHICLES), np.arange(VEHICLES)] *= rng.uniform(SPEC_LOW, SPEC_HIGH, VEHICLES)
    budget = np.full(VEHICLES, BUDGET_PER_CUSTOMER * n)
    return HMTSPInstance(customers=customers, task_type=task_type, depots=depots, travel=travel, service=service, budget=budget)
