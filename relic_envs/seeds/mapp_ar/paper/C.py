import numpy as np


def select_next_C(current: int, dist_row: np.ndarray, uncertainty_vector: np.ndarray, remaining_budget: float) -> int:
    """Residual uncertainty per unit travel with a conservative return check.

    C sees no node-to-depot distances; by the triangle inequality l_j0 <= l_jc + l_c0,
    so going to j is surely affordable when 2 * dist_row[j] + dist_row[0] <= budget.
    """
    safe = 2.0 * dist_row + dist_row[0] <= remaining_budget
    safe[0] = False
    safe[current] = False
    score = np.where(safe & (uncertainty_vector > 0), uncertainty_vector / (dist_row + 1e-9), -1.0)
    j = int(np.argmax(score))
    return j if score[j] > 0 else 0
