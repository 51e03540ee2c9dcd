import numpy as np


def select_next_A(current: int, candidates: dict, budget_left: float) -> int:
    """Deadline sentinel: value weighted towards candidates whose budget slack is small.

    A node with little slack is about to become unreachable for this agent; the weight
    exp(-slack / budget_left) favours it without ignoring value.
    """
    best_node, best_score = 0, 0.0
    scale = max(budget_left, 1e-9)
    for node, (value, slack) in candidates.items():
        if value <= 0.0:
            continue
        score = value * (0.5 + np.exp(-slack / scale))
        if score > best_score:
            best_node, best_score = node, score
    return best_node
