def select_next_A(my_buffer: dict, my_busy_until: float, t_now: float, dummy: float) -> int:
    """Weighted shortest processing time first (WSPT): largest w / p at stage 1."""
    best_job, best_ratio = -1, -1.0
    for job, (p, w) in my_buffer.items():
        ratio = w / max(p, 1e-9)
        if ratio > best_ratio:
            best_job, best_ratio = job, ratio
    return best_job
