import numpy as np


def select_next_B(current: int, candidate_ids: np.ndarray, truck_distances: np.ndarray, drone_customer: int) -> int:
    """Nearest neighbour: the closest customer the truck may take (truck_distances is indexed by node id)."""
    if candidate_ids.size == 0:
        return -1
    return int(candidate_ids[int(np.argmin(truck_distances[candidate_ids]))])
