import numpy as np


def select_values_B(
    cur: np.ndarray,
    delta: np.ndarray,
    u: np.ndarray,
    t: int,
    candidate_target: np.ndarray,
    valid_mask: np.ndarray,
    target_value: np.ndarray,
    target_coverage: np.ndarray,
    target_supply: np.ndarray,
) -> np.ndarray:
    """Value and scarcity: among improving values, favour valuable targets that few
    sensors can reach; commit faster when the gain is large."""
    m, domain = delta.shape
    rows = np.arange(m)
    scarcity = np.where(target_supply > 0, target_value / np.maximum(target_supply, 1.0), 0.0)
    cost = np.where(valid_mask > 0, delta - 1e-3 * scarcity, np.inf)
    target = np.where(cost <= cost.min(axis=1, keepdims=True) + 1e-12, u[:, :domain], np.inf).argmin(axis=1)
    gain = delta[rows, cur] - delta[rows, target]
    commit = np.clip(0.4 + gain / 100.0, 0.4, 0.8)
    move = (gain > 0) & (u[:, domain] < commit)
    return np.where(move, target, cur).astype(np.int64)
