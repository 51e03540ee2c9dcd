import numpy as np


def select_next_C(busy_vector: np.ndarray, job_ids: np.ndarray, job_features: np.ndarray, t_now: float) -> int:
    """Weighted least slack: the job whose slack d - p - t per unit weight is smallest."""
    if len(job_ids) == 0:
        return -1
    p, d, w = job_features[:, 0], job_features[:, 1], job_features[:, 2]
    slack = d - p - t_now
    key = np.where(slack > 0, slack / np.maximum(w, 1e-9), slack * w)  # late jobs: heaviest first
    return int(job_ids[int(np.argmin(key))])
