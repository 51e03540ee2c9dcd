import numpy as np


def select_values_B(
    cur: np.ndarray,
    delta: np.ndarray,
    u: np.ndarray,
    t: int,
    duration: np.ndarray,
    power: np.ndarray,
    pref_start: np.ndarray,
    price: np.ndarray,
    capacity_slack: np.ndarray,
) -> np.ndarray:
    """Price and preference: move to the cheapest start only if it fits in the current
    slack; few devices move per sweep so the shared load does not herd."""
    m, domain = delta.shape
    rows = np.arange(m)
    slots = np.arange(price.size)
    starts = np.arange(domain)
    window = (slots[None, None, :] >= starts[None, :, None]) & (slots[None, None, :] < (starts[None, :, None] + duration[:, None, None]))
    fits = ((window * power[:, None, None]) <= np.maximum(capacity_slack, 0.0)[None, None, :] + 1e-9).all(axis=2)
    fits[rows, cur] = True
    cost = np.where(fits, delta, np.inf)
    target = np.where(cost <= cost.min(axis=1, keepdims=True) + 1e-9, u[:, :domain], np.inf).argmin(axis=1)
    gain = delta[rows, cur] - delta[rows, target]
    move = (gain > 0) & (u[:, domain] < 0.2)
    return np.where(move, target, cur).astype(np.int64)
