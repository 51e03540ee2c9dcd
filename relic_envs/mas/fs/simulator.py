"""MAS-FS cost (Eq. mas-fs): total weighted completion time of a three-stage flow shop.

Stage ``s`` has one machine, owned by role ``s`` (A: stage 1, B: stage 2, C: stage 3
of the paper). Operation ``(j, s)`` is ready once the job is released (``s = 1``) or its
stage-``s - 1`` operation has completed (Eq. mas-fs-precedence); each stage keeps its
own dispatch order (non-permutation schedules). ``C_FS = sum_j w_j C_j3`` (minimised;
``score = -C_FS``).
"""

from __future__ import annotations

import numpy as np

from relic_envs.mas.fs.generator import FSInstance


def durations(instance: FSInstance) -> np.ndarray:
    """``(3, N, 3)``: machine ``k`` only ever runs stage ``k``, taking ``p_jk``."""
    return np.broadcast_to(instance.proc[None], (3, *instance.proc.shape))


def qualified(instance: FSInstance) -> np.ndarray:
    return np.ones((3, instance.n_jobs), dtype=bool)


def objective(instance: FSInstance, completion: np.ndarray) -> float:
    """Weighted completion time of the jobs whose last stage has a completion time."""
    done = ~np.isnan(completion)
    return float(np.sum(instance.weight[done] * completion[done]))


def horizon(instance: FSInstance) -> float:
    """No valid schedule completes an operation later than the last release plus all the work."""
    return float(instance.release[-1] + instance.proc.sum())


def score_bounds(instance: FSInstance) -> tuple[float, float]:
    best = np.sum(instance.weight * (instance.release + instance.proc.sum(axis=1)))  # every job without waiting
    worst = np.sum(instance.weight) * horizon(instance)
    return -float(worst), -float(best)
