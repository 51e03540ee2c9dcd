import numpy as np


def select_values_A(
    cur: np.ndarray,
    delta: np.ndarray,
    u: np.ndarray,
    t: int,
    duration: np.ndarray,
    power: np.ndarray,
    load_now: np.ndarray,
    capacity: np.ndarray,
) -> np.ndarray:
    """Overload repair: only devices that currently run in an overloaded slot move, to
    their cheapest start; big devices move first (lower commitment for small ones)."""
    m, domain = delta.shape
    rows = np.arange(m)
    slots = np.arange(load_now.size)
    running = (slots[None, :] >= cur[:, None]) & (slots[None, :] < (cur + duration)[:, None])
    overloaded = (running & (load_now > capacity)[None, :]).any(axis=1)
    target = np.where(delta <= delta.min(axis=1, keepdims=True) + 1e-9, u[:, :domain], np.inf).argmin(axis=1)
    gain = delta[rows, cur] - delta[rows, target]
    commit = np.clip(0.15 + 0.1 * power * duration / 6.0, 0.15, 0.45)
    move = overloaded & (gain > 0) & (u[:, domain] < commit)
    return np.where(move, target, cur).astype(np.int64)
