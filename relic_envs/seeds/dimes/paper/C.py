import numpy as np


def select_values_C(
    cur: np.ndarray,
    delta: np.ndarray,
    u: np.ndarray,
    t: int,
    peer_value_hist: np.ndarray,
    peer_churn_rate: np.ndarray,
    local_trend: np.ndarray,
) -> np.ndarray:
    """Agreement: prefer the slot most peers already hold among the cheapest slots, and
    move less while peers are still changing."""
    m, domain = delta.shape
    rows = np.arange(m)
    adjusted = delta - 1e-3 * peer_value_hist
    target = np.where(adjusted <= adjusted.min(axis=1, keepdims=True) + 1e-12, u[:, :domain], np.inf).argmin(axis=1)
    gain = delta[rows, cur] - delta[rows, target]
    commit = np.clip(0.75 * (1.0 - peer_churn_rate), 0.2, 0.75)
    move = (gain > 0) & (u[:, domain] < commit)
    return np.where(move, target, cur).astype(np.int64)
