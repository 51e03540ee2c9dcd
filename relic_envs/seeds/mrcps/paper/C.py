import numpy as np


def select_next_C(task_id: int, worker_ids: np.ndarray, skill_levels: np.ndarray, worker_costs: np.ndarray) -> int:
    """Fastest worker (highest skill level; ties: the cheaper one)."""
    if worker_ids.size == 0:
        return -1
    order = np.lexsort((worker_costs, -skill_levels))
    return int(worker_ids[int(order[0])])
