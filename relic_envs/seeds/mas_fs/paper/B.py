def select_next_B(my_buffer: dict, upstream_busy: float, downstream_buf_size: int, my_busy_until: float) -> int:
    """WSPT at stage 2; when stage 3 has nothing waiting, feed it the shortest job first."""
    best_job, best_key = -1, float("inf")
    for job, (p, w) in my_buffer.items():
        key = p if downstream_buf_size == 0 else p / max(w, 1e-9)
        if key < best_key:
            best_job, best_key = job, key
    return best_job
