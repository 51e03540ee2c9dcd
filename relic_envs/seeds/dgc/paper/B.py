import numpy as np


def select_values_B(
    cur: np.ndarray,
    delta: np.ndarray,
    u: np.ndarray,
    t: int,
    opportunity_gain: np.ndarray,
    flexibility: np.ndarray,
) -> np.ndarray:
    """Opportunity: take the best improving colour; commit more when few colours are free.

    A vertex with several equally good colours can wait for its neighbours, so its
    commitment probability is lower.
    """
    m, domain = delta.shape
    rows = np.arange(m)
    target = np.where(opportunity_gain >= opportunity_gain.max(axis=1, keepdims=True) - 1e-9, u[:, :domain], np.inf).argmin(axis=1)
    gain = opportunity_gain[rows, target]
    commit = 0.75 - 0.15 * (np.clip(flexibility, 1, domain) - 1)
    move = (gain > 0) & (u[:, domain] < commit)
    return np.where(move, target, cur).astype(np.int64)
