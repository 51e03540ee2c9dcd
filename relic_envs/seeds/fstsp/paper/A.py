import numpy as np


def select_next_A(candidate_ids: np.ndarray, drone_roundtrip_times: np.ndarray, truck_detours: np.ndarray, endurance: float) -> int:
    """Launch the drone to the nearest candidate whose flight is cheaper than the truck serving it."""
    if candidate_ids.size == 0:
        return -1
    useful = drone_roundtrip_times < truck_detours
    if not np.any(useful):
        return -1
    ids, times = candidate_ids[useful], drone_roundtrip_times[useful]
    return int(ids[int(np.argmin(times))])
