import numpy as np


def select_next_B(values: np.ndarray, my_finish: np.ndarray, rival_finish: np.ndarray, t_now: float) -> int:
    """Value harvester: weight per unit of machine time (WSPT); a job a teammate could
    finish clearly sooner is left to it."""
    pool = np.isfinite(my_finish)
    if not pool.any():
        return -1
    work = np.maximum(my_finish - t_now, 1e-9)
    score = np.where(pool, values / work, -np.inf)
    score = np.where(pool & (rival_finish + 0.5 < my_finish), 0.5 * score, score)
    return int(np.argmax(score))
