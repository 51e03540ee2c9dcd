"""SensorDCSP instances and the paper's generator (Appendix B.4, "Instance generation").

120 sensors, 16 targets, values 0..3, required coverage 3, 50 sweeps. For coverage
coefficient ``c`` every sensor-target visibility edge exists independently with
probability ``c / 16``; a sensor that sees more than three targets keeps three of
them, drawn uniformly, as its actionable values 1..3 (in ascending target order);
unused values are padded (target ``-1``). Target values are U[1, 100]; each sensor pair
is compatible with probability 0.8 (symmetric); initial values are uniform on 0..3.
Training coefficients 1.2, 1.8, 2.4, 3.0, 3.6; test 2.1.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from relic_envs.core.instance import Instance, check_array, check_range
from relic_envs.dcop._sweep import balanced_ownership
from relic_envs.dcop.sensor_dcsp.simulator import N_VALUES, supply
from relic_envs.errors import InvalidInstance

N_SENSORS = 120
N_TARGETS = 16
COMPATIBLE_P = 0.8
TRAIN_COVERAGE = (1.2, 1.8, 2.4, 3.0, 3.6)
TEST_COVERAGE = 2.1


@dataclasses.dataclass(frozen=True)
class SensorRegime:
    coverage: float
    n_sensors: int = N_SENSORS
    n_targets: int = N_TARGETS


REGIMES = {f"train{b}": SensorRegime(c) for b, c in enumerate(TRAIN_COVERAGE, start=1)}
REGIMES["test"] = SensorRegime(TEST_COVERAGE)


@dataclasses.dataclass(frozen=True)
class SensorInstance(Instance):
    """Sensors, their candidate targets per value, target values and incompatibilities."""

    kind = "sensor_dcsp"
    candidate: np.ndarray  # (N, 4) int64, target of each value; column 0 (sleep) and padding are -1
    target_value: np.ndarray  # (T,) float64, v_t in [1, 100]
    incompatible: np.ndarray  # (N, N) bool, symmetric, False on the diagonal
    x0: np.ndarray  # (N,) int64, initial values 0..3
    owner: np.ndarray  # (N,) int8, role of each variable: 0=A, 1=B, 2=C
    seed: int  # uint32 seed of the exploration tensor u

    def validate(self) -> None:
        check_array("x0", self.x0, (None,), "iu")
        n = self.x0.shape[0]
        check_array("candidate", self.candidate, (n, N_VALUES), "iu")
        check_array("target_value", self.target_value, (None,), "f")
        check_array("incompatible", self.incompatible, (n, n), "b")
        check_array("owner", self.owner, (n,), "iu")
        check_range("candidate", self.candidate, -1, self.target_value.size - 1)
        check_range("x0", self.x0, 0, N_VALUES - 1)
        check_range("owner", self.owner, 0, 2)
        if np.any(self.candidate[:, 0] != -1):
            raise InvalidInstance("field 'candidate' column 0 is sleep and must be -1")
        if not np.array_equal(self.incompatible, self.incompatible.T) or self.incompatible.diagonal().any():
            raise InvalidInstance("field 'incompatible' must be symmetric with a False diagonal")


def generate(regime: SensorRegime, rng: np.random.Generator) -> SensorInstance:
    """Draw one SensorDCSP instance of a regime."""
    n, t = regime.n_sensors, regime.n_targets
    visible = rng.random((n, t)) < regime.coverage / t
    candidate = np.full((n, N_VALUES), -1, dtype=np.int64)
    for s in range(n):
        seen = np.flatnonzero(visible[s])
        if seen.size > N_VALUES - 1:
            seen = np.sort(rng.choice(seen, size=N_VALUES - 1, replace=False))
        candidate[s, 1 : 1 + seen.size] = seen
    target_value = rng.uniform(1.0, 100.0, size=t)
    clash = np.triu(rng.random((n, n)) >= COMPATIBLE_P, k=1)
    incompatible = clash | clash.T
    x0 = rng.integers(0, N_VALUES, size=n).astype(np.int64)
    seed = int(rng.integers(0, 2**32))
    inst = SensorInstance(candidate, target_value, incompatible, x0, np.zeros(n, dtype=np.int8), seed)
    return dataclasses.replace(inst, owner=ownership(inst))


def ownership(inst: SensorInstance) -> np.ndarray:
    """Balanced thirds: A value risk, B available value, C coupling.

    A: sum over the sensor's targets of ``v_t / supply_t`` (value that depends on few
    sensors). B: the largest value among its targets. C: incompatible sensors that
    share one of its targets. Ties are broken by index.
    """
    cand = inst.candidate
    valid = cand >= 0
    safe = np.where(valid, cand, 0)
    value = np.where(valid, inst.target_value[safe], 0.0)
    risk = (value / np.maximum(supply(inst)[safe], 1)).sum(axis=1)
    available = value.max(axis=1)
    sees = np.zeros((cand.shape[0], inst.target_value.size), dtype=bool)
    rows = np.repeat(np.arange(cand.shape[0]), N_VALUES)
    sees[rows[valid.ravel()], cand[valid]] = True
    shares = (sees.astype(np.int64) @ sees.T.astype(np.int64)) > 0  # exact: int64, numpy's own integer loop (no BLAS)
    coupling = (shares & inst.incompatible).sum(axis=1).astype(np.float64)
    return balanced_ownership(np.stack([risk, available, coupling], axis=1))
