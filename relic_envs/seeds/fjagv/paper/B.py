import numpy as np


def select_next_B(machine_id: int, operation_ids: np.ndarray, processing_times: np.ndarray, due_dates: np.ndarray) -> int:
    """Earliest due date first (ties: shortest processing time)."""
    if operation_ids.size == 0:
        return -1
    order = np.lexsort((processing_times, due_dates))
    return int(operation_ids[int(order[0])])
