"""MAS-ST reward (Eq. mas-st): value of the tasks finished by their deadlines.

Worker ``k`` needs ``p_eff = p_j / max(s_{k c_j}, eps)`` (Eq. mas-st-duration) for task
``j``; it is qualified for the task when ``s_{k c_j} >= eps``. ``eps = 0.05``: below the
generator's skill floor 0.1, so every worker of a generated instance is qualified for
every task. A late task still runs to completion and occupies its worker, but earns
nothing: ``R_ST = sum_j v_j 1{C_j <= d_j}`` (maximised; ``score = R_ST``). Tasks never
dispatched earn nothing.
"""

from __future__ import annotations

import numpy as np

from relic_envs.mas.st.generator import STInstance

EPS = 0.05


def skill_of(instance: STInstance) -> np.ndarray:
    """``(3, N)``: each worker's skill in each task's category."""
    return instance.skills[:, instance.category]


def durations(instance: STInstance) -> np.ndarray:
    """``(3, N, 1)`` skill-adjusted durations."""
    return (instance.duration[None, :] / np.maximum(skill_of(instance), EPS))[:, :, None]


def qualified(instance: STInstance) -> np.ndarray:
    return skill_of(instance) >= EPS


def objective(instance: STInstance, completion: np.ndarray) -> float:
    """Value of the tasks completed by their deadlines (nan = not dispatched)."""
    on_time = ~np.isnan(completion) & (np.nan_to_num(completion, nan=np.inf) <= instance.deadline)
    return float(np.sum(instance.value[on_time]))


def horizon(instance: STInstance) -> float:
    """No completion comes later than the last release plus every task at its slowest worker."""
    return float(instance.release[-1] + durations(instance).max(axis=0).sum())


def score_bounds(instance: STInstance) -> tuple[float, float]:
    return 0.0, float(instance.value.sum())
