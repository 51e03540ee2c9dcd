def select_next_A(candidates: dict, t_now: float) -> int:
    """Delay sentinel at stage 1: weighted SPT over the whole remaining route, with the
    delay a job has already accumulated breaking ties towards the longest-waiting."""
    best_job, best_score = -1, -1.0
    for job, (waited, p_here, p_rest, w) in candidates.items():
        score = w / max(p_here + 0.5 * p_rest, 1e-9) * (1.0 + 0.05 * waited)
        if score > best_score:
            best_job, best_score = job, score
    return best_job
