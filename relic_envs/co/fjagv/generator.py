"""FJAGV instances and the paper's generator (Appendix B.3, "Instance generation").

Every job has three ordered operations; there are five machines. For each operation
between two and five eligible machines (count uniform on 2..5) are drawn without
replacement, each with an integer processing time uniform on 4..24. A job's due date
is the sum over its operations of the fastest eligible processing time, times a factor
``U[1.8, 3.2]``; its weight is uniform on 1..5. The depot and the five machine
locations are uniform in ``[0, 1]^2``; travel times (both AGVs) are 5 times the
Euclidean distances. Two unit-capacity AGVs start at the depot.

Training: five batches of ten 50-job instances (one regime, five seeds: the paper
names no per-batch change); test: 20 instances at each of 100 and 200 jobs.

Ids: operation ``k`` of job ``j`` is ``3 j + k``; machines ``0..4``; locations: the
depot ``0``, machine ``m`` at location ``m + 1``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from relic_envs.core.instance import Instance, check_array, check_range
from relic_envs.errors import InvalidInstance

TRAIN_N, TEST_NS = 50, (100, 200)
OPS_PER_JOB, MACHINES, AGVS = 3, 5, 2
ELIGIBLE = (2, 5)  # inclusive
PTIME = (4, 24)  # inclusive
DUE_FACTOR = (1.8, 3.2)
WEIGHT = (1, 5)  # inclusive
TRAVEL_SCALE = 5.0


@dataclasses.dataclass(frozen=True)
class FJAGVRegime:
    n_jobs: int


REGIMES = {f"train{b}": FJAGVRegime(TRAIN_N) for b in range(1, 6)}
REGIMES.update({f"test{n}": FJAGVRegime(n) for n in TEST_NS})


@dataclasses.dataclass(frozen=True)
class FJAGVInstance(Instance):
    """Jobs of ordered operations with machine alternatives; machine locations; two AGVs."""

    kind = "fjagv"
    proc: np.ndarray  # (J, K, M) int64 >= 0: processing time of job j's operation k on machine m; 0 = not eligible
    due: np.ndarray  # (J,) float64 >= 0: due date d_j
    weight: np.ndarray  # (J,) int64 >= 1: weight w_j
    locations: np.ndarray  # (M + 1, 2) float64 in [0, 1]: the depot (row 0), then machine m at row m + 1
    n_agvs: int  # number of unit-capacity AGVs (2 in the paper), all starting at the depot

    def validate(self) -> None:
        check_array("proc", self.proc, (None, None, None), "iu")
        j, k, m = self.proc.shape
        if j < 1 or k < 1 or m < 1:
            raise InvalidInstance(f"field 'proc' needs at least one job, operation and machine, got shape {self.proc.shape}")
        check_range("proc", self.proc, 0, np.inf)
        if not (self.proc > 0).any(axis=2).all():
            raise InvalidInstance("field 'proc': every operation needs an eligible machine (a positive time)")
        check_array("due", self.due, (j,), "f")
        check_range("due", self.due, 0.0, np.inf)
        check_array("weight", self.weight, (j,), "iu")
        check_range("weight", self.weight, 1, np.inf)
        check_array("locations", self.locations, (m + 1, 2), "f")
        check_range("locations", self.locations, 0.0, 1.0)
        if isinstance(self.n_agvs, bool) or not isinstance(self.n_agvs, int | np.integer) or self.n_agvs < 1:
            raise InvalidInstance(f"field 'n_agvs' must be a positive int, got {self.n_agvs!r}")

    @property
    def n_jobs(self) -> int:
        return int(self.proc.shape[0])

    @property
    def n_ops_per_job(self) -> int:
        return int(self.proc.shape[1])

    @property
    def n_operations(self) -> int:
        return self.n_jobs * self.n_ops_per_job

    @property
    def n_machines(self) -> int:
        return int(self.proc.shape[2])

    def op_times(self) -> np.ndarray:
        """``(J*K, M)`` int64 processing times by operation id ``K j + k`` (0 = not eligible)."""
        return self.proc.reshape(self.n_operations, self.n_machines)

    def travel(self) -> np.ndarray:
        """``(M + 1, M + 1)`` float64 AGV travel times between locations: 5 x Euclidean distance."""
        xy = self.locations
        return TRAVEL_SCALE * np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(-1))


def generate(regime: FJAGVRegime, rng: np.random.Generator) -> FJAGVInstance:
    n = regime.n_jobs
    proc = np.zeros((n, OPS_PER_JOB, MACHINES), dtype=np.int64)
    for j in range(n):
        for k in range(OPS_PER_JOB):
            count = int(rng.integers(ELIGIBLE[0], ELIGIBLE[1] + 1))
            machines = rng.choice(MACHINES, size=count, replace=False)
            proc[j, k, machines] = rng.integers(PTIME[0], PTIME[1] + 1, count)
    fastest = np.where(proc > 0, proc, np.iinfo(np.int64).max).min(axis=2).sum(axis=1)
    due = fastest.astype(np.float64) * rng.uniform(*DUE_FACTOR, n)
    weight = rng.integers(WEIGHT[0], WEIGHT[1] + 1, n).astype(np.int64)
    locations = rng.uniform(0.0, 1.0, (MACHINES + 1, 2))
    return FJAGVInstance(proc=proc, due=due, weight=weight, locations=locations, n_agvs=AGVS)
