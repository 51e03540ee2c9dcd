import numpy as np


def select_next_C(skill_matrix: np.ndarray, busy_vector: np.ndarray, task_features: np.ndarray, t_now: float) -> int:
    """Earliest deadline among the tasks worker C (row 2) can finish on time, ties by value."""
    if len(task_features) == 0:
        return -1
    ids = task_features[:, 0].astype(int)
    cats = task_features[:, 1].astype(int)
    p, v, d = task_features[:, 2], task_features[:, 3], task_features[:, 4]
    eff = p / np.maximum(skill_matrix[2, cats], 0.05)
    ok = t_now + eff <= d
    if not ok.any():
        return -1
    key = np.where(ok, d - 0.01 * v, np.inf)
    return int(ids[int(np.argmin(key))])
