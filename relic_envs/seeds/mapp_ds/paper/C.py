import numpy as np


def select_next_C(
    current: int,
    dist_row: np.ndarray,
    value_vector: np.ndarray,
    deadline_vector: np.ndarray,
    remaining_budget: float,
) -> int:
    """Value per unit travel with a conservative return check; else the shortest safe hop.

    By the triangle inequality, 2 * dist_row[j] + dist_row[0] <= budget guarantees
    the way home from j.
    """
    safe = 2.0 * dist_row + dist_row[0] <= remaining_budget
    safe[0] = False
    safe[current] = False
    if not safe.any():
        return 0
    live = safe & (value_vector > 0) & (deadline_vector >= 1)
    if live.any():
        score = np.where(live, value_vector / (dist_row + 0.05), -1.0)
        return int(np.argmax(score))
    return int(np.argmin(np.where(safe, dist_row, np.inf)))
