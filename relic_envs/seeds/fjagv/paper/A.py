import numpy as np


def select_next_A(operation_id: int, machine_ids: np.ndarray, processing_times: np.ndarray, machine_ready_times: np.ndarray) -> int:
    """Earliest finish: the eligible machine that would complete the operation first (ties: shorter processing)."""
    if machine_ids.size == 0:
        return -1
    finish = machine_ready_times + processing_times
    order = np.lexsort((processing_times, finish))
    return int(machine_ids[int(order[0])])
