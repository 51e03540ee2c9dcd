"""MAS-JD cost (Eq. mas-jd): total weighted tardiness on three identical machines.

``T_j = max(0, C_j - d_j)``, ``C_JD = sum_j w_j T_j`` (minimised; ``score = -C_JD``).
A machine takes ``p_j`` for job ``j`` whichever it is.
"""

from __future__ import annotations

import numpy as np

from relic_envs.mas.jd.generator import JDInstance


def durations(instance: JDInstance) -> np.ndarray:
    """``(3, N, 1)``: identical machines."""
    return np.broadcast_to(instance.proc[None, :, None], (3, instance.n_jobs, 1))


def qualified(instance: JDInstance) -> np.ndarray:
    return np.ones((3, instance.n_jobs), dtype=bool)


def objective(instance: JDInstance, completion: np.ndarray) -> float:
    """Weighted tardiness of the jobs with a completion time (nan = not dispatched)."""
    done = ~np.isnan(completion)
    tardy = np.maximum(0.0, completion[done] - instance.due[done])
    return float(np.sum(instance.weight[done] * tardy))


def horizon(instance: JDInstance) -> float:
    """No valid schedule completes a job later than the last release plus all the work."""
    return float(instance.release[-1] + instance.proc.sum())


def score_bounds(instance: JDInstance) -> tuple[float, float]:
    worst = np.sum(instance.weight * np.maximum(0.0, horizon(instance) - instance.due))
    return -float(worst), 0.0
