import numpy as np


def select_next_A(current: int, request_dict: dict, dist_mat: np.ndarray, budget_left: float) -> int:
    """Value per unit travel over requests that survive the one-step hop; else a short idle hop.

    A request shown with time-to-live 0 expires before any agent can land on it.
    When nothing is worth serving, the cheapest affordable hop keeps the agent out
    (returning home would end its route).
    """
    best_node, best_score = 0, 0.0
    for node, (value, ttl) in request_dict.items():
        go = dist_mat[current, node]
        if node == current or ttl < 1 or go + dist_mat[node, 0] > budget_left:
            continue
        score = value / (go + 0.05)
        if score > best_score:
            best_node, best_score = node, score
    if best_node:
        return best_node
    n = dist_mat.shape[0]
    hops = [(dist_mat[current, j], j) for j in range(1, n)
            if j != current and dist_mat[current, j] + dist_mat[j, 0] <= budget_left]
    return min(hops)[1] if hops else 0
