import numpy as np


def select_next_A(current: int, unvisited_prizes: dict, dist_mat: np.ndarray, budget_left: float) -> int:
    """Greedy prize per unit travel over the nodes that still allow a return home."""
    best_node, best_score = 0, 0.0
    for node, prize in unvisited_prizes.items():
        go = dist_mat[current, node]
        if node == current or go + dist_mat[node, 0] > budget_left:
            continue
        score = prize / (go + 1e-9)
        if score > best_score:
            best_node, best_score = node, score
    return best_node
