import math


def select_next_A(my_busy_until: float, t_now: float, job_pool: dict, p_mine: float) -> int:
    """Apparent tardiness cost (ATC, look-ahead k = 2): weighted SPT, discounted by slack."""
    if not job_pool:
        return -1
    p_bar = sum(p for p, _d, _w in job_pool.values()) / len(job_pool)
    best_job, best_score = -1, -1.0
    for job, (p, d, w) in job_pool.items():
        slack = max(d - p - t_now, 0.0)
        score = (w / p) * math.exp(-slack / (2.0 * p_bar))
        if score > best_score:
            best_job, best_score = job, score
    return best_job
