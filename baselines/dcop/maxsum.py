"""Max-Sum (Farinelli, Rogers, Petcu & Jennings 2008) in its min-sum form, with damping,
one synchronous round of messages per sweep.

**Factors from the benchmark's own landscape.** Max-Sum needs the cost as a sum of
unary and pairwise tables. We derive them from the benchmark's ``landscape`` (no copy of
its cost): at the base assignment ``z = 0``, ``U_i(a) = delta_z[i, a] - delta_z[i, 0]``
and, for each coupled pair, ``P_ij(a, b) = (delta_{z, j<-b}[i, a] - delta_{z, j<-b}[i, 0])
- (delta_z[i, a] - delta_z[i, 0])``. For a pairwise cost this is exact:
``C(x) = C(z) + sum_i U_i(x_i) + sum_ij P_ij(x_i, x_j)``; we check it on random
assignments and refuse a benchmark where it fails.

**Where the cost is not pairwise.** Only DGC is. DiMES's off-majority term couples
all ten attendances of a meeting (a 10-ary factor over 20 slots), SensorDCSP's coverage
terms couple every sensor that sees a target, and SHDS's overload terms couple all 120
devices. Max-Sum on those needs n-ary factors whose messages are exponential in the
arity unless one writes a benchmark-specific message rule (cardinality factors for the
counts); we do not, so ``MaxSum`` raises ``InvalidConfig`` there and the tables show no
Max-Sum row for them.

**Messages.** ``m_{i->j}(b) = min_a [P_ij(a, b) + U_i(a) + n_i(a) + sum_{k != j} m_{k->i}(a)]``,
normalised to minimum 0, then damped: ``m <- damping * m_old + (1 - damping) * m_new``.
Each variable takes the value of least belief ``U_i + n_i + sum_k m_{k->i}``. ``n_i`` is
a small noise in ``[0, noise)`` per value, from ``numpy.random.default_rng(instance.seed)``,
that breaks the symmetry of DGC's colours (without it every message stays 0); pyDCOP's
Max-Sum uses the same device with the same default ``noise = 0.01``, and its default
damping 0.5 is ours.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from baselines.dcop.sweep import SweepSolver
from relic_envs.errors import InvalidConfig

WHY_NOT_PAIRWISE = {
    "dimes": "its off-majority term couples all attendances of a meeting (10-ary over 20 slots)",
    "sensor_dcsp": "its coverage terms couple every sensor that can see a target",
    "shds": "its overload terms couple all 120 devices",
}


@dataclasses.dataclass
class PairwiseCost:
    """``C(x) = base + sum_i unary[i, x_i] + sum_e pair[e, x_a, x_b]`` with ``pairs[e] = (a, b)``."""

    base: float
    unary: np.ndarray  # (N, d)
    pairs: np.ndarray  # (E, 2)
    pair: np.ndarray  # (E, d, d)

    def __call__(self, x: np.ndarray) -> float:
        return float(self.base + self.unary[np.arange(x.size), x].sum() + self.pair[np.arange(len(self.pairs)), x[self.pairs[:, 0]], x[self.pairs[:, 1]]].sum())


def pairwise_cost(problem, instance, checks: int = 5) -> PairwiseCost:
    """Unary and pairwise tables of a pairwise benchmark, from its ``landscape`` (module doc)."""
    n, d = problem.n_vars(instance), problem.domain
    z = np.zeros(n, dtype=np.int64)
    l0 = problem.landscape(instance, z)
    rel0 = l0 - l0[:, :1]
    pairs = np.asarray(problem.coupled(instance), dtype=np.int64).reshape(-1, 2)
    table = np.zeros((len(pairs), d, d))
    as_first = [np.flatnonzero(pairs[:, 0] == j) for j in range(n)]
    as_second = [np.flatnonzero(pairs[:, 1] == j) for j in range(n)]
    for j in range(n):
        if not (as_first[j].size or as_second[j].size):
            continue
        for b in range(1, d):
            zb = z.copy()
            zb[j] = b
            lb = problem.landscape(instance, zb)
            rel = lb - lb[:, :1] - rel0  # rel[i, a] = P_ij(a, b) for every neighbour i of j
            e2 = as_second[j]
            table[e2, :, b] = rel[pairs[e2, 0]]
            e1 = as_first[j]
            table[e1, b, :] = rel[pairs[e1, 1]]
    model = PairwiseCost(problem.cost(instance, z), rel0, pairs, table)
    rng = np.random.default_rng(int(instance.seed))
    scale = 1.0 + abs(model.base) + np.abs(table).sum()
    for _ in range(checks):
        x = rng.integers(0, d, size=n)
        if abs(model(x) - problem.cost(instance, x)) > 1e-9 * scale:
            raise InvalidConfig(
                f"Max-Sum needs a pairwise cost; {problem.name}'s is not: "
                f"{WHY_NOT_PAIRWISE.get(problem.name, 'some cost term involves more than two variables')}"
            )
    return model


@dataclasses.dataclass
class _State:
    unary: np.ndarray  # (N, d) with noise
    send: np.ndarray  # (2E,) sender of each directed edge
    recv: np.ndarray  # (2E,) receiver
    table: np.ndarray  # (2E, d_sender, d_receiver)
    rev: np.ndarray  # (2E,) index of the opposite direction
    msg: np.ndarray  # (2E, d)


@dataclasses.dataclass(frozen=True)
class MaxSum(SweepSolver):
    """Min-sum Max-Sum with ``damping`` in [0, 1) and tie-breaking ``noise`` >= 0."""

    damping: float = 0.5
    noise: float = 0.01
    label = "maxsum"

    def __post_init__(self) -> None:
        if not 0.0 <= self.damping < 1.0:
            raise InvalidConfig(f"Max-Sum damping must lie in [0, 1), got {self.damping}")
        if not self.noise >= 0.0:
            raise InvalidConfig(f"Max-Sum noise must be >= 0, got {self.noise}")

    def start(self, problem, instance) -> _State:
        model = pairwise_cost(problem, instance)
        n, d = model.unary.shape
        noise = np.random.default_rng(int(instance.seed)).random((n, d)) * self.noise
        e = len(model.pairs)
        a, b = model.pairs[:, 0], model.pairs[:, 1]
        send = np.concatenate([a, b])
        recv = np.concatenate([b, a])
        table = np.concatenate([model.pair, model.pair.transpose(0, 2, 1)])
        rev = np.concatenate([np.arange(e) + e, np.arange(e)])
        return _State(model.unary + noise, send, recv, table, rev, np.zeros((2 * e, d)))

    def sweep(self, state: _State, x: np.ndarray, t: int) -> np.ndarray:
        n, d = state.unary.shape
        incoming = np.zeros((n, d))
        np.add.at(incoming, state.recv, state.msg)
        belief = state.unary + incoming
        h = belief[state.send] - state.msg[state.rev]  # sender's belief without the receiver's message
        new = (state.table + h[:, :, None]).min(axis=1)
        new -= new.min(axis=1, keepdims=True)
        state.msg = self.damping * state.msg + (1.0 - self.damping) * new
        incoming = np.zeros((n, d))
        np.add.at(incoming, state.recv, state.msg)
        return (state.unary + incoming).argmin(axis=1).astype(np.int64)
