def select_next_A(candidates: dict, t_now: float) -> int:
    """Deadline sentinel: among the tasks it can still finish on time (slack >= 0), the
    one with the least slack per unit of value; late tasks are skipped (they earn nothing)."""
    best_task, best_key = -1, float("inf")
    for task, (slack, p_eff, v) in candidates.items():
        if slack < 0.0 or v <= 0.0:
            continue
        key = (slack + p_eff) / v
        if key < best_key:
            best_task, best_key = task, key
    return best_task
