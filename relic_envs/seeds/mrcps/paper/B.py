import numpy as np


def select_next_B(project_id: int, task_ids: np.ndarray, durations: np.ndarray, successor_counts: np.ndarray) -> int:
    """Most successors first (ties: shortest duration)."""
    if task_ids.size == 0:
        return -1
    order = np.lexsort((durations, -successor_counts))
    return int(task_ids[int(order[0])])
