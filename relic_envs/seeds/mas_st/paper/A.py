import numpy as np


def select_next_A(my_skills: np.ndarray, my_busy_until: float, task_pool: dict, t_now: float) -> int:
    """Value density among the tasks this worker can still finish by their deadlines."""
    best_task, best_score = -1, 0.0
    for task, (c, p, v, d) in task_pool.items():
        eff = p / max(my_skills[c], 0.05)
        if t_now + eff > d:
            continue  # would be late: no value, and it would block the worker
        score = v / eff
        if score > best_score:
            best_task, best_score = task, score
    return best_task
