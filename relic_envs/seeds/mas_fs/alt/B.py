import numpy as np


def select_next_B(values: np.ndarray, my_finish: np.ndarray, downstream_wait: np.ndarray, t_now: float) -> int:
    """Value harvester at stage 2: weight per unit of its time (WSPT), counting half the
    wait the job would meet at stage 3 as time spent."""
    pool = np.isfinite(my_finish)
    if not pool.any():
        return -1
    work = np.maximum(my_finish - t_now, 1e-9)
    score = np.where(pool, values / (work + 0.5 * downstream_wait), -np.inf)
    return int(np.argmax(score))
