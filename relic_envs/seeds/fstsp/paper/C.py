import numpy as np


def select_next_C(candidate_ids: np.ndarray, truck_etas: np.ndarray, drone_etas: np.ndarray, endurance: float) -> int:
    """Earliest rendezvous: the node where the later of the two vehicles arrives first."""
    if candidate_ids.size == 0:
        return -1
    return int(candidate_ids[int(np.argmin(np.maximum(truck_etas, drone_etas)))])
