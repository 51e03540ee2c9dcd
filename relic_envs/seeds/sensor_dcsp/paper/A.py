import numpy as np


def select_values_A(
    cur: np.ndarray,
    delta: np.ndarray,
    u: np.ndarray,
    t: int,
    candidate_target: np.ndarray,
    valid_mask: np.ndarray,
    target_value: np.ndarray,
    target_coverage: np.ndarray,
    incompatibility_cost: np.ndarray,
) -> np.ndarray:
    """Coverage repair: move to the cheapest value, but never onto a target where an
    incompatible sensor already sits, and prefer under-covered targets on ties."""
    m, domain = delta.shape
    rows = np.arange(m)
    blocked = (incompatibility_cost > 0) | (valid_mask == 0)
    needy = (candidate_target >= 0) & (target_coverage < 3)
    cost = np.where(blocked, np.inf, delta - 1e-3 * needy)
    cost[:, 0] = delta[:, 0]  # sleeping is always allowed
    target = np.where(cost <= cost.min(axis=1, keepdims=True) + 1e-12, u[:, :domain], np.inf).argmin(axis=1)
    gain = delta[rows, cur] - delta[rows, target]
    move = (gain > 0) & (u[:, domain] < 0.6)
    return np.where(move, target, cur).astype(np.int64)
