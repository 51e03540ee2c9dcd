def select_next_B(my_busy_until: float, teammate_busy_until: list, job_pool: dict, t_now: float) -> int:
    """Weighted modified due date: lowest max(p, d - t) / w; long jobs go to idle teammates first."""
    if not job_pool:
        return -1
    free_mates = sum(1 for b in teammate_busy_until if b <= t_now)
    best_job, best_key = -1, float("inf")
    for job, (p, d, w) in job_pool.items():
        key = max(p, d - t_now) / max(w, 1e-9)
        if free_mates and len(job_pool) > 1:
            key *= 1.0 + 0.1 * p  # with a teammate free too, keep the short ones for myself
        if key < best_key:
            best_job, best_key = job, key
    return best_job
