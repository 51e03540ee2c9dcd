import numpy as np


def select_next_B(candidate_ids: np.ndarray, candidate_costs: np.ndarray, task_types: np.ndarray, route_cost: float) -> int:
    """Cheapest candidate, preferring this vehicle's specialty (task type 1) when one is nearly as cheap."""
    if candidate_ids.size == 0:
        return -1
    best = int(np.argmin(candidate_costs))
    own = np.flatnonzero(task_types == 1)
    if own.size:
        best_own = int(own[np.argmin(candidate_costs[own])])
        if candidate_costs[best_own] <= 1.2 * candidate_costs[best]:
            best = best_own
    return int(candidate_ids[best])
