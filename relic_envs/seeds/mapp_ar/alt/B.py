import numpy as np


def select_next_B(current: int, values: np.ndarray, dist_row: np.ndarray, teammate_dist: np.ndarray, budget_left: float) -> int:
    """Value harvester: value per unit travel, discounted where a teammate is closer.

    B sees no depot distances from other nodes, so it only takes nodes it can surely
    leave again: 2 * dist_row[j] + dist_row[0] <= budget (triangle inequality).
    """
    safe = 2.0 * dist_row + dist_row[0] <= budget_left
    safe[0] = False
    safe[current] = False
    contention = np.where(teammate_dist < dist_row, 0.4, 1.0)
    score = np.where(safe & (values > 0), contention * values / (dist_row + 1e-9), -1.0)
    j = int(np.argmax(score))
    return j if score[j] > 0 else 0
