"""MAS-JD instances and the paper's generator (Appendix B.2, "Instance generation").

``P|r_j|sum w_j T_j`` on three identical machines. Training: five batches of ten
30-job instances with exponential release-time scales 1.0, 0.6, 1.2, 0.8, 1.5; test: 20
instances at each of 50 and 80 jobs with the unseen scale 0.9 (disjoint seeds: the
split seeds of ``relic_envs.core.splits``). Release times are ``N`` independent
exponential draws with that scale, sorted (job ids follow release order); processing
times ``Gamma(shape 2, scale 0.5)`` clipped to ``[0.2, 5.0]``; due dates
``d_j = r_j + eta_j p_j`` with ``eta_j ~ U[1.5, 4.0]``; weights drawn uniformly from the
multiset ``{1, 1, 2, 3, 5}``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from relic_envs.mas._dispatch import DispatchInstance

TRAIN_SCALES = (1.0, 0.6, 1.2, 0.8, 1.5)
TEST_SCALE = 0.9
TRAIN_N, TEST_NS = 30, (50, 80)
P_SHAPE, P_SCALE, P_MIN, P_MAX = 2.0, 0.5, 0.2, 5.0
ETA_MIN, ETA_MAX = 1.5, 4.0
WEIGHTS = (1.0, 1.0, 2.0, 3.0, 5.0)


@dataclasses.dataclass(frozen=True)
class JDRegime:
    n_jobs: int
    release_scale: float


REGIMES = {f"train{b}": JDRegime(TRAIN_N, s) for b, s in enumerate(TRAIN_SCALES, start=1)}
REGIMES.update({f"test{n}": JDRegime(n, TEST_SCALE) for n in TEST_NS})


@dataclasses.dataclass(frozen=True)
class JDInstance(DispatchInstance):
    """Jobs with processing times, due dates and weights."""

    kind = "mas_jd"
    proc: np.ndarray  # (N,) float64 > 0, processing time p_j
    due: np.ndarray  # (N,) float64 >= 0, due date d_j
    weight: np.ndarray  # (N,) float64 >= 0, tardiness weight w_j

    def validate(self) -> None:
        super().validate()
        self.job_array("proc", self.proc, 1e-9, np.inf)
        self.job_array("due", self.due, 0.0, np.inf)
        self.job_array("weight", self.weight, 0.0, np.inf)


def generate(regime: JDRegime, rng: np.random.Generator) -> JDInstance:
    n = regime.n_jobs
    release = np.sort(rng.exponential(regime.release_scale, n))
    proc = np.clip(rng.gamma(P_SHAPE, P_SCALE, n), P_MIN, P_MAX)
    due = release + rng.uniform(ETA_MIN, ETA_MAX, n) * proc
    weight = rng.choice(np.array(WEIGHTS), n)
    return JDInstance(release=release, proc=proc, due=due, weight=weight)
