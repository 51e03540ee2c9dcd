import numpy as np


def select_next_A(current: int, uncertainty_dict: dict, dist_mat: np.ndarray, budget_left: float) -> int:
    """Greedy residual uncertainty per unit travel over the nodes that still allow a return home.

    Scanning also lowers the uncertainty of nearby nodes; this seed ignores that and
    scores each node by its own uncertainty only.
    """
    best_node, best_score = 0, 0.0
    for node, unc in uncertainty_dict.items():
        go = dist_mat[current, node]
        if node == current or go + dist_mat[node, 0] > budget_left:
            continue
        score = unc / (go + 1e-9)
        if score > best_score:
            best_node, best_score = node, score
    return best_node
