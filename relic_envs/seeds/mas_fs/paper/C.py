import numpy as np


def select_next_C(my_buffer: dict, pipeline_state: np.ndarray, job_table: np.ndarray, t_now: float) -> int:
    """WSPT at the last stage: each job's completion here is its completion time."""
    best_job, best_ratio = -1, -1.0
    for job, (p, w) in my_buffer.items():
        ratio = w / max(p, 1e-9)
        if ratio > best_ratio:
            best_job, best_ratio = job, ratio
    return best_job
