import numpy as np


def select_next_C(team_state: dict, job_table: np.ndarray, t_now: float) -> int:
    """System regulator: value density on time for worker C, preferring tasks where C is
    the fastest worker; when C has worked more than the team average, it takes the
    shortest such task to even out the load."""
    available = job_table[:, 8] > 0.5
    value, deadline = job_table[:, 1], job_table[:, 2]
    times = job_table[:, 3:6]
    mine = times[:, 2]
    ok = available & (t_now + mine <= deadline) & (value > 0)
    if not ok.any():
        return -1
    fit = np.where(mine <= times.min(axis=1) + 1e-9, 1.0, 0.6)
    score = fit * value / mine
    util = team_state["utilisation"]
    if util[2] > float(np.mean(util)) + 0.1:
        score = score / mine
    return int(np.argmax(np.where(ok, score, -np.inf)))
