import numpy as np


def select_next_A(project_ids: np.ndarray, due_dates: np.ndarray, remaining_task_counts: np.ndarray, t_now: float) -> int:
    """Earliest due date first (ties: the project with more tasks left)."""
    if project_ids.size == 0:
        return -1
    order = np.lexsort((-remaining_task_counts, due_dates))
    return int(project_ids[int(order[0])])
