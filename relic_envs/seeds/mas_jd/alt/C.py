import numpy as np


def select_next_C(team_state: dict, job_table: np.ndarray, t_now: float) -> int:
    """System regulator: weighted least slack among the jobs it may take; when the
    backlog is heavy (more waiting work than the three machines clear soon), favour
    short jobs to keep throughput up."""
    available = job_table[:, 5] > 0.5
    if not available.any():
        return -1
    p, d, w = job_table[:, 0], job_table[:, 1], job_table[:, 2]
    slack = d - p - t_now
    key = np.where(slack > 0, slack / np.maximum(w, 1e-9), slack * w)  # late jobs: heaviest first
    if team_state["backlog"][2] > 10.0 * float(np.mean(p[available])):
        key = key + 0.5 * p  # congested: shorter jobs first among similar slack
    key = np.where(available, key, np.inf)
    return int(np.argmin(key))
