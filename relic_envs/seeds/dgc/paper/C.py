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
    """Stability: improve, but hold still while the neighbourhood is churning.

    Ties between equally good colours go to the colour fewer peers hold.
    """
    m, domain = delta.shape
    rows = np.arange(m)
    crowd = peer_value_hist / np.maximum(1.0, peer_value_hist.sum(axis=1, keepdims=True))
    adjusted = delta + 1e-3 * crowd
    target = np.where(adjusted <= adjusted.min(axis=1, keepdims=True) + 1e-12, u[:, :domain], np.inf).argmin(axis=1)
    gain = delta[rows, cur] - delta[rows, target]
    commit = np.clip(0.7 * (1.0 - peer_churn_rate), 0.15, 0.7)
    move = (gain > 0) & (u[:, domain] < commit)
    return np.where(move, target, cur).astype(np.int64)
