import numpy as np


def select_next_B(values: np.ndarray, my_finish: np.ndarray, rival_finish: np.ndarray, t_now: float) -> int:
    """Value harvester: attainable value per unit of its own time, halved where a teammate
    could finish the task sooner (leave it to the better-suited worker)."""
    work = np.maximum(my_finish - t_now, 1e-9)
    score = np.where(values > 0, values / work, 0.0)
    score = np.where(rival_finish < my_finish, 0.5 * score, score)
    j = int(np.argmax(score))
    return j if score[j] > 0 else -1
