"""MAPP-DS instances, request streams and the paper's generator (Appendix B.1).

Central depot, uniform customers, the MAPP-PC budget rule. Training: five batches of
ten N = 40 instances with mean arrival rate lambda_bar = 0.08, 0.12, 0.10, 0.15, 0.09;
test: 20 instances at each of N = 50, 80 with lambda_bar = 0.11. Per customer,
``lambda_i ~ Gamma(shape 2, scale lambda_bar / 2)`` and the exponential value rate
``mu_i = clip(1.5 - 0.5 lambda_i / lambda_bar, 0.5, 3.0)``.

The request stream is not stored: :func:`stream` regenerates it from the instance's
``seed``. Node ``i`` fires at each step ``tau = 0..N`` with probability
``1 - exp(-lambda_i)``; a request's value is exponential with mean ``1 / mu_i`` and its
time-to-live a uniform integer in 3..10. ``N + 1`` arrival steps cover every time an
agent can arrive (an episode lasts at most ``N`` steps).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from relic_envs.core.instance import check_range
from relic_envs.core.numerics import exp
from relic_envs.errors import InvalidInstance
from relic_envs.mapp._geometry import coordinates, geometric_budget
from relic_envs.mapp._routing import RoutingInstance

VISIT_SCALE = 1.0 / 3.0
TRAIN_RATES = (0.08, 0.12, 0.10, 0.15, 0.09)
TEST_RATE = 0.11
TTL_MIN, TTL_MAX = 3, 10


@dataclasses.dataclass(frozen=True)
class DSRegime:
    n_nodes: int
    mean_rate: float


TRAIN_N, TEST_NS = 40, (50, 80)
REGIMES = {f"train{b}": DSRegime(TRAIN_N, r) for b, r in enumerate(TRAIN_RATES, start=1)}
REGIMES.update({f"test{n}": DSRegime(n, TEST_RATE) for n in TEST_NS})


@dataclasses.dataclass(frozen=True)
class DSInstance(RoutingInstance):
    """Customers with request rates; the stream comes from ``seed``."""

    kind = "mapp_ds"
    rates: np.ndarray  # (N,) float64 >= 0, per-step arrival rate lambda_i (0 at the depot)
    value_rates: np.ndarray  # (N,) float64 in [0.5, 3.0], exponential value rate mu_i (1.0 at the depot, unused)
    mean_rate: float  # the regime's lambda_bar
    seed: int  # uint32 seed of the request stream

    def validate(self) -> None:
        super().validate()
        self.node_array("rates", self.rates, 0.0, np.inf)
        self.node_array("value_rates", self.value_rates, 0.5, 3.0)
        if self.rates[0] != 0:
            raise InvalidInstance(f"field 'rates' must be 0 at the depot, got {self.rates[0]}")
        check_range("seed", np.array([self.seed]), 0, 2**32 - 1)


@dataclasses.dataclass(frozen=True)
class Stream:
    """A request grid: row ``tau`` = arrival step, column = node; ``fire`` marks real requests."""

    fire: np.ndarray  # (H, N) bool
    value: np.ndarray  # (H, N) float64 > 0 where fire, 0 elsewhere
    expiry: np.ndarray  # (H, N) int64, last active step tau + ttl


def stream(instance: DSInstance) -> Stream:
    """The instance's request stream, the same bits on every call."""
    n = instance.n_nodes
    horizon = n + 1
    rng = np.random.default_rng(np.random.SeedSequence(instance.seed))
    draws = rng.random((horizon, n))
    values = rng.standard_exponential((horizon, n)) / instance.value_rates
    ttl = rng.integers(TTL_MIN, TTL_MAX + 1, (horizon, n))
    fire = draws < 1.0 - exp(-instance.rates)  # exactly 0 at the depot; CPU-independent exp (CONTRIBUTING)
    expiry = np.arange(horizon)[:, None] + ttl
    return Stream(fire=fire, value=np.where(fire, values, 0.0), expiry=expiry.astype(np.int64))


def generate(regime: DSRegime, rng: np.random.Generator) -> DSInstance:
    coords = coordinates(regime.n_nodes, rng)
    lam = rng.gamma(2.0, regime.mean_rate / 2.0, regime.n_nodes - 1)
    mu = np.clip(1.5 - 0.5 * lam / regime.mean_rate, 0.5, 3.0)
    return DSInstance(
        coords=coords,
        budget=geometric_budget(coords, VISIT_SCALE),
        rates=np.concatenate([[0.0], lam]),
        value_rates=np.concatenate([[1.0], mu]),
        mean_rate=float(regime.mean_rate),
        seed=int(rng.integers(0, 2**32)),
    )
