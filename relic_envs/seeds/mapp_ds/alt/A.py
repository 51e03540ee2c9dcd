

def select_next_A(current: int, candidates: dict, budget_left: float) -> int:
    """Deadline sentinel: the valuable request closest to expiring, among those still servable.

    A request needs time-to-live >= 1 (the hop takes one step). Score = value / ttl, so
    a request about to expire outranks an equally valuable one that can wait. With
    nothing to serve, the candidate with the most budget slack is the cheapest place to wait.
    """
    best_node, best_score = 0, 0.0
    wait_node, wait_slack = 0, -1.0
    for node, (value, slack, ttl) in candidates.items():
        if slack > wait_slack:
            wait_node, wait_slack = node, slack
        if value <= 0.0 or ttl < 1:
            continue
        score = value / ttl
        if score > best_score:
            best_node, best_score = node, score
    return best_node if best_node else wait_node
