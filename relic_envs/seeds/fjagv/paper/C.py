import numpy as np


def select_next_C(agv_id: int, request_ids: np.ndarray, travel_times: np.ndarray, ready_times: np.ndarray) -> int:
    """Nearest request first (ties: the one waiting longest)."""
    if request_ids.size == 0:
        return -1
    order = np.lexsort((ready_times, travel_times))
    return int(request_ids[int(order[0])])
