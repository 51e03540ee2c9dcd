"""MAS-ST instances and the paper's generator (Appendix B.2, "Instance generation").

Three workers with category skills and value-bearing tasks with deadlines. Training:
five batches of ten 30-task instances with exponential release-time scales 1.0, 0.7,
1.3, 0.9, 1.1; test: 20 instances at each of 50 and 80 tasks with scale 1.0 and freshly
sampled skill matrices (disjoint seeds). Release times are ``N`` independent
exponential draws, sorted (task ids follow release order); categories uniform over the
three skills; nominal durations ``Gamma(2, 0.5)`` clipped to ``[0.3, 4.0]``; values
uniform over ``{1, 2, 3, 5}``; deadlines ``d_j = r_j + eta_j p_j`` with
``eta_j ~ U[2, 5]``. Each instance has its own ``3 x 3`` skill matrix (row = worker,
column = category): 0.8 on the diagonal, 0.4 off it, plus independent ``N(0, 0.08^2)``
noise, clipped to ``[0.1, 1.0]``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from relic_envs.core.instance import check_array, check_range
from relic_envs.mas._dispatch import DispatchInstance

TRAIN_SCALES = (1.0, 0.7, 1.3, 0.9, 1.1)
TEST_SCALE = 1.0
TRAIN_N, TEST_NS = 30, (50, 80)
N_SKILLS = 3
P_SHAPE, P_SCALE, P_MIN, P_MAX = 2.0, 0.5, 0.3, 4.0
ETA_MIN, ETA_MAX = 2.0, 5.0
VALUES = (1.0, 2.0, 3.0, 5.0)
SKILL_DIAG, SKILL_OFF, SKILL_NOISE, SKILL_MIN, SKILL_MAX = 0.8, 0.4, 0.08, 0.1, 1.0


@dataclasses.dataclass(frozen=True)
class STRegime:
    n_jobs: int
    release_scale: float


REGIMES = {f"train{b}": STRegime(TRAIN_N, s) for b, s in enumerate(TRAIN_SCALES, start=1)}
REGIMES.update({f"test{n}": STRegime(n, TEST_SCALE) for n in TEST_NS})


@dataclasses.dataclass(frozen=True)
class STInstance(DispatchInstance):
    """Tasks with categories, durations, values and deadlines; workers with skills."""

    kind = "mas_st"
    category: np.ndarray  # (N,) int64 in 0..2, skill category c_j
    duration: np.ndarray  # (N,) float64 > 0, nominal duration p_j
    value: np.ndarray  # (N,) float64 >= 0, value v_j earned if C_j <= d_j
    deadline: np.ndarray  # (N,) float64 >= 0, deadline d_j
    skills: np.ndarray  # (3, 3) float64 in [0, 1], skills[k, c] of worker k in category c

    def validate(self) -> None:
        super().validate()
        self.job_array("category", self.category, 0, N_SKILLS - 1, kinds="iu")
        self.job_array("duration", self.duration, 1e-9, np.inf)
        self.job_array("value", self.value, 0.0, np.inf)
        self.job_array("deadline", self.deadline, 0.0, np.inf)
        check_array("skills", self.skills, (3, N_SKILLS), "f")
        check_range("skills", self.skills, 0.0, 1.0)


def generate(regime: STRegime, rng: np.random.Generator) -> STInstance:
    n = regime.n_jobs
    release = np.sort(rng.exponential(regime.release_scale, n))
    category = rng.integers(0, N_SKILLS, n).astype(np.int64)
    duration = np.clip(rng.gamma(P_SHAPE, P_SCALE, n), P_MIN, P_MAX)
    value = rng.choice(np.array(VALUES), n)
    deadline = release + rng.uniform(ETA_MIN, ETA_MAX, n) * duration
    base = np.full((3, N_SKILLS), SKILL_OFF) + (SKILL_DIAG - SKILL_OFF) * np.eye(3, N_SKILLS)
    skills = np.clip(base + rng.normal(0.0, SKILL_NOISE, (3, N_SKILLS)), SKILL_MIN, SKILL_MAX)
    return STInstance(release=release, category=category, duration=duration, value=value, deadline=deadline, skills=skills)
