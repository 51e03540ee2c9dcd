import numpy as np


def select_values_C(
    cur: np.ndarray,
    delta: np.ndarray,
    u: np.ndarray,
    t: int,
    candidate_target: np.ndarray,
    valid_mask: np.ndarray,
    target_coverage: np.ndarray,
    coverage_change: np.ndarray,
    incompatibility_cost: np.ndarray,
) -> np.ndarray:
    """Coordination: improve, but hold back on values whose target coverage just
    changed (others are already reacting to it)."""
    m, domain = delta.shape
    rows = np.arange(m)
    cost = np.where(valid_mask > 0, delta, np.inf)
    target = np.where(cost <= cost.min(axis=1, keepdims=True) + 1e-9, u[:, :domain], np.inf).argmin(axis=1)
    gain = delta[rows, cur] - delta[rows, target]
    settling = np.abs(coverage_change[rows, target]) > 0
    commit = np.where(settling, 0.25, 0.6)
    move = (gain > 0) & (u[:, domain] < commit)
    return np.where(move, target, cur).astype(np.int64)
