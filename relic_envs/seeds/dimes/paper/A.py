import numpy as np


def select_values_A(
    cur: np.ndarray,
    delta: np.ndarray,
    u: np.ndarray,
    t: int,
    violation_now: np.ndarray,
    repair_gain: np.ndarray,
) -> np.ndarray:
    """Constraint risk: an attendance that is off its meeting's majority slot or too
    close to its other meeting moves to the slot that repairs the most violation,
    breaking ties by total local cost."""
    m, domain = delta.shape
    rows = np.arange(m)
    score = repair_gain - 1e-3 * delta
    target = np.where(score >= score.max(axis=1, keepdims=True) - 1e-9, u[:, :domain], np.inf).argmin(axis=1)
    improves = (repair_gain[rows, target] > 0) & (delta[rows, target] < delta[rows, cur])
    move = (violation_now > 0) & improves & (u[:, domain] < 0.6)
    return np.where(move, target, cur).astype(np.int64)
