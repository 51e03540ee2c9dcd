import numpy as np


def select_next_C(team_state: dict, job_table: np.ndarray, t_now: float) -> int:
    """System regulator at the last stage: WSPT over its buffer (each completion here is a
    job's completion time); ties go to the job that has waited longest."""
    available = job_table[:, 6] > 0.5
    if not available.any():
        return -1
    p3, w, waited = job_table[:, 3], job_table[:, 4], job_table[:, 5]
    score = np.where(available, w / np.maximum(p3, 1e-9) + 1e-6 * waited, -np.inf)
    return int(np.argmax(score))
