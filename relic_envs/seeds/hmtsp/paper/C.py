import numpy as np


def select_next_C(current: int, candidate_ids: np.ndarray, candidate_costs: np.ndarray, team_route_costs: np.ndarray) -> int:
    """Cheapest candidate; skip while this route is the longest by a clear margin (balance the 0.5*max term)."""
    if candidate_ids.size == 0:
        return -1
    others = team_route_costs[:2]
    if team_route_costs[2] > 1.5 * max(float(np.max(others)), 1e-9) and team_route_costs[2] > 1.0:
        return -1
    return int(candidate_ids[int(np.argmin(candidate_costs))])
