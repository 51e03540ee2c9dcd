import numpy as np


def select_values_A(
    cur: np.ndarray,
    delta: np.ndarray,
    u: np.ndarray,
    t: int,
    violation_now: np.ndarray,
    repair_gain: np.ndarray,
) -> np.ndarray:
    """Conflict repair: a conflicted vertex moves to its least-conflicted colour.

    The move is taken with a probability that grows with the share of the conflict
    it removes, so neighbours in the same conflict rarely all move at once.
    """
    m, domain = delta.shape
    rows = np.arange(m)
    best = delta.min(axis=1, keepdims=True)
    target = np.where(delta <= best + 1e-9, u[:, :domain], np.inf).argmin(axis=1)
    gain = repair_gain[rows, target]
    share = gain / np.maximum(violation_now, 1e-9)
    commit = 0.4 + 0.4 * np.clip(share, 0.0, 1.0)
    move = (violation_now > 0) & (gain > 0) & (u[:, domain] < commit)
    return np.where(move, target, cur).astype(np.int64)
