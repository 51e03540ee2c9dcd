import math


def select_next_A(candidates: dict, t_now: float) -> int:
    """Deadline sentinel: weighted SPT discounted by slack (apparent tardiness cost, k = 2).

    A job with little slack left is about to become late; exp(-slack / (2 p_bar)) lifts
    it, and jobs already late (slack <= 0) count at full weight per unit of work.
    """
    if not candidates:
        return -1
    p_bar = sum(p for _s, p, _w in candidates.values()) / len(candidates)
    best_job, best_score = -1, -1.0
    for job, (slack, p, w) in candidates.items():
        score = (w / p) * math.exp(-max(slack, 0.0) / (2.0 * p_bar))
        if score > best_score:
            best_job, best_score = job, score
    return best_job
