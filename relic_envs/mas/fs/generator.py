"""MAS-FS instances and the paper's generator (Appendix B.2, "Instance generation").

A three-stage flow shop with release dates. Training: five batches of ten 25-job
instances with mean processing profiles (0.3, 1.2, 0.8), (0.3, 0.6, 1.5),
(0.5, 1.5, 0.3), (1.0, 0.3, 1.2), (0.4, 0.4, 0.4), which move the bottleneck among
stages; test: 20 instances at each of 50 and 80 jobs with the unseen mild-B-bottleneck
profile (1.0, 1.2, 1.0) (disjoint seeds). Arrivals: ``N // 2`` jobs in a burst uniform
over ``[0, 0.5]``, the rest after 0.5 with exponential increments of scale 0.4
(``0.5 + cumsum``); all sorted, so job ids follow release order. A stage with mean
``m < 0.5`` draws ``U[0.8 m, 1.2 m]`` (the paper's "tight uniform"); the others draw
``Gamma(shape 2, scale m / 2)`` (mean ``m``) clipped to ``[0.2 m, 5 m]``. Weights are
uniform over the multiset ``{1, 1, 2, 3, 5}``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from relic_envs.mas._dispatch import DispatchInstance

TRAIN_PROFILES = ((0.3, 1.2, 0.8), (0.3, 0.6, 1.5), (0.5, 1.5, 0.3), (1.0, 0.3, 1.2), (0.4, 0.4, 0.4))
TEST_PROFILE = (1.0, 1.2, 1.0)
TRAIN_N, TEST_NS = 25, (50, 80)
BURST_END, ARRIVAL_SCALE = 0.5, 0.4
TIGHT_BELOW, TIGHT_WIDTH = 0.5, 0.2  # mean < 0.5: U[(1 - 0.2) m, (1 + 0.2) m]
GAMMA_SHAPE, CLIP_LO, CLIP_HI = 2.0, 0.2, 5.0  # Gamma(2, m / 2) clipped to [0.2 m, 5 m]
WEIGHTS = (1.0, 1.0, 2.0, 3.0, 5.0)


@dataclasses.dataclass(frozen=True)
class FSRegime:
    n_jobs: int
    profile: tuple[float, float, float]  # mean processing time per stage


REGIMES = {f"train{b}": FSRegime(TRAIN_N, p) for b, p in enumerate(TRAIN_PROFILES, start=1)}
REGIMES.update({f"test{n}": FSRegime(n, TEST_PROFILE) for n in TEST_NS})


@dataclasses.dataclass(frozen=True)
class FSInstance(DispatchInstance):
    """Jobs with three stage processing times and a weight."""

    kind = "mas_fs"
    proc: np.ndarray  # (N, 3) float64 > 0, processing time p_js at stage s
    weight: np.ndarray  # (N,) float64 >= 0, completion-time weight w_j

    def validate(self) -> None:
        super().validate()
        self.job_array("proc", self.proc, 1e-9, np.inf, width=3)
        self.job_array("weight", self.weight, 0.0, np.inf)


def stage_times(mean: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` processing times of a stage with mean ``mean`` (tight uniform below 0.5)."""
    if mean < TIGHT_BELOW:
        return rng.uniform((1 - TIGHT_WIDTH) * mean, (1 + TIGHT_WIDTH) * mean, n)
    return np.clip(rng.gamma(GAMMA_SHAPE, mean / GAMMA_SHAPE, n), CLIP_LO * mean, CLIP_HI * mean)


def generate(regime: FSRegime, rng: np.random.Generator) -> FSInstance:
    n = regime.n_jobs
    burst = rng.uniform(0.0, BURST_END, n // 2)
    later = BURST_END + np.cumsum(rng.exponential(ARRIVAL_SCALE, n - n // 2))
    release = np.sort(np.concatenate([burst, later]))
    proc = np.stack([stage_times(m, n, rng) for m in regime.profile], axis=1)
    weight = rng.choice(np.array(WEIGHTS), n)
    return FSInstance(release=release, proc=proc, weight=weight)
