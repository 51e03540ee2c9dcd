"""SHDS instances and the paper's generator (Appendix B.4, "Instance generation").

120 devices assigned uniformly to 24 homes, starts 0..17 over 24 slots, 50 sweeps.
Durations uniform on 1..6, powers U[0.5, 3.0], preferred and initial starts uniform on
0..17. Price ``theta_h = 1 + exp(-(h-8)^2 / 8) + exp(-(h-19)^2 / 8) + jitter_h`` with
``jitter_h ~ U[-0.1, 0.1]`` (morning and evening peaks of height 1 and width 2 slots on
a base of 1: the paper gives only the centres and the jitter). Capacity is constant:
``tightness x sum_i p_i d_i / 24``. Training tightness 1.1, 1.25, 1.4, 1.6, 1.8; test 1.35.

Every float is computed the same way on every CPU (CONTRIBUTING.md, "Numerics that do
not depend on the CPU"): the price curve with :func:`relic_envs.core.numerics.exp`, the
capacity's ``sum_i p_i d_i`` in the fixed order of :func:`energy_total`.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np

from relic_envs.core.instance import Instance, check_array, check_range
from relic_envs.core.numerics import exp
from relic_envs.dcop._sweep import balanced_ownership
from relic_envs.dcop.shds.simulator import MAX_DURATION, N_SLOTS, N_STARTS, PREFERENCE_COST, run_price

N_DEVICES = 120
N_HOMES = 24
TRAIN_TIGHTNESS = (1.1, 1.25, 1.4, 1.6, 1.8)
TEST_TIGHTNESS = 1.35
PEAKS = (8, 19)
PEAK_WIDTH = 2.0


@dataclasses.dataclass(frozen=True)
class SHDSRegime:
    tightness: float
    n_devices: int = N_DEVICES


REGIMES = {f"train{b}": SHDSRegime(k) for b, k in enumerate(TRAIN_TIGHTNESS, start=1)}
REGIMES["test"] = SHDSRegime(TEST_TIGHTNESS)


@dataclasses.dataclass(frozen=True)
class SHDSInstance(Instance):
    """Devices of a neighbourhood sharing one price and capacity curve."""

    kind = "shds"
    duration: np.ndarray  # (N,) int64, 1..6 slots
    power: np.ndarray  # (N,) float64, kW in [0.5, 3.0]
    pref_start: np.ndarray  # (N,) int64, 0..17
    home: np.ndarray  # (N,) int64, 0..23
    price: np.ndarray  # (24,) float64, theta_h
    capacity: np.ndarray  # (24,) float64, kappa_h
    x0: np.ndarray  # (N,) int64, initial starts 0..17
    owner: np.ndarray  # (N,) int8, role of each variable: 0=A, 1=B, 2=C
    seed: int  # uint32 seed of the exploration tensor u

    def validate(self) -> None:
        check_array("x0", self.x0, (None,), "iu")
        n = self.x0.shape[0]
        for name in ("duration", "pref_start", "home"):
            check_array(name, getattr(self, name), (n,), "iu")
        check_array("power", self.power, (n,), "f")
        check_array("price", self.price, (N_SLOTS,), "f")
        check_array("capacity", self.capacity, (N_SLOTS,), "f")
        check_array("owner", self.owner, (n,), "iu")
        check_range("duration", self.duration, 1, MAX_DURATION)
        check_range("pref_start", self.pref_start, 0, N_STARTS - 1)
        check_range("x0", self.x0, 0, N_STARTS - 1)
        check_range("owner", self.owner, 0, 2)


def price_curve(rng: np.random.Generator) -> np.ndarray:
    h = np.arange(N_SLOTS, dtype=np.float64)
    peaks = sum(exp(-((h - c) ** 2) / (2 * PEAK_WIDTH**2)) for c in PEAKS)
    return 1.0 + peaks + rng.uniform(-0.1, 0.1, size=N_SLOTS)


_LANES = 16


def energy_total(power: np.ndarray, duration: np.ndarray) -> float:
    """``sum_i p_i d_i`` in a fixed order, the same bits on every CPU.

    The order is the one that made the shipped splits (OpenBLAS's Haswell/Zen ``ddot``
    kernel, which numpy's ``power @ duration`` ran on the machine that wrote them),
    spelled out in exact arithmetic: device ``i < 16 * (N // 16)`` goes into lane
    ``i % 16`` by a fused multiply-add (one rounding of ``lane + p_i d_i``); lanes
    ``l`` and ``l + 2`` of each group of four are added, then the groups' pairs
    (0 + 1, 2 + 3, then the two), then the two halves; the last ``N % 16`` devices
    follow in order, each product rounded before it is added.
    """
    p = [float(v) for v in power]
    d = [int(v) for v in duration]
    n_lanes = len(p) - len(p) % _LANES
    lanes = [0.0] * _LANES
    for i in range(n_lanes):  # fused multiply-add, computed exactly and rounded once
        lanes[i % _LANES] = float(Fraction(lanes[i % _LANES]) + Fraction(p[i]) * d[i])
    quads = [[lanes[g + k] + lanes[g + k + 2] for k in (0, 1)] for g in range(0, _LANES, 4)]
    left = [quads[0][k] + quads[1][k] for k in (0, 1)]
    right = [quads[2][k] + quads[3][k] for k in (0, 1)]
    pair = [left[k] + right[k] for k in (0, 1)]
    total = pair[0] + pair[1]
    for i in range(n_lanes, len(p)):
        total += p[i] * float(d[i])
    return total


def generate(regime: SHDSRegime, rng: np.random.Generator) -> SHDSInstance:
    """Draw one SHDS instance of a regime."""
    n = regime.n_devices
    home = rng.integers(0, N_HOMES, size=n).astype(np.int64)
    duration = rng.integers(1, MAX_DURATION + 1, size=n).astype(np.int64)
    power = rng.uniform(0.5, 3.0, size=n)
    pref_start = rng.integers(0, N_STARTS, size=n).astype(np.int64)
    x0 = rng.integers(0, N_STARTS, size=n).astype(np.int64)
    price = price_curve(rng)
    capacity = np.full(N_SLOTS, regime.tightness * energy_total(power, duration) / N_SLOTS)
    seed = int(rng.integers(0, 2**32))
    inst = SHDSInstance(duration, power, pref_start, home, price, capacity, x0, np.zeros(n, dtype=np.int8), seed)
    return dataclasses.replace(inst, owner=ownership(inst))


def ownership(inst: SHDSInstance) -> np.ndarray:
    """Balanced thirds: A capacity risk (energy ``p d``), B energy-saving opportunity
    (price + preference cost at the initial start minus the best start), C same-home
    coupling (devices sharing the home). Ties are broken by index."""
    n = inst.x0.size
    own = inst.power[:, None] * run_price(inst.price)[inst.duration]
    own = own + PREFERENCE_COST * np.abs(np.arange(N_STARTS)[None, :] - inst.pref_start[:, None])
    risk = inst.power * inst.duration
    saving = own[np.arange(n), inst.x0] - own.min(axis=1)
    coupling = np.bincount(inst.home, minlength=N_HOMES)[inst.home].astype(np.float64) - 1.0
    return balanced_ownership(np.stack([risk, saving, coupling], axis=1))
