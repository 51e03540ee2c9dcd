import numpy as np


def select_next_B(current: int, values: np.ndarray, dist_row: np.ndarray, teammate_dist: np.ndarray, budget_left: float) -> int:
    """Value harvester: value per unit travel, discounted where a teammate is closer.

    Only surely affordable hops (2 * dist_row[j] + dist_row[0] <= budget); with no
    active request in reach, the shortest such hop keeps the agent out.
    """
    safe = 2.0 * dist_row + dist_row[0] <= budget_left
    safe[0] = False
    safe[current] = False
    if not safe.any():
        return 0
    contention = np.where(teammate_dist < dist_row, 0.4, 1.0)
    score = np.where(safe & (values > 0), contention * values / (dist_row + 0.05), -1.0)
    j = int(np.argmax(score))
    if score[j] > 0:
        return j
    return int(np.argmin(np.where(safe, dist_row, np.inf)))
