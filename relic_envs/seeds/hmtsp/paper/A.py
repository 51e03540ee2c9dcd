import numpy as np


def select_next_A(current: int, candidate_ids: np.ndarray, candidate_costs: np.ndarray, budget_left: float) -> int:
    """Cheapest insertion at the route's end, while the soft budget lasts; skip once it would be exceeded."""
    if candidate_ids.size == 0:
        return -1
    best = int(np.argmin(candidate_costs))
    if candidate_costs[best] > budget_left:
        return -1
    return int(candidate_ids[best])
