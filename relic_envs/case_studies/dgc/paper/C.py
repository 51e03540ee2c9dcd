# RELIC's learned program for DGC role C, as printed in the paper (relic.tex, Listing lst:case-dgc-c;
# Appendix "Case Study: Distributed Graph Coloring"). Everything below this header is copied verbatim.
import numpy as np

def select_values_C(cur: np.ndarray, delta: np.ndarray, u: np.ndarray, t: int, peer_value_hist: np.ndarray, peer_churn_rate: np.ndarray, local_trend: np.ndarray) -> np.ndarray:
    m, domain = delta.shape
    rows = np.arange(m)

    crowd = peer_value_hist / np.maximum(1.0, peer_value_hist.sum(axis=1, keepdims=True))
    scale = np.maximum(1.0, np.ptp(delta, axis=1))[:, None]
    adjusted = delta + 0.05 * scale * crowd

    tied = adjusted <= adjusted.min(axis=1, keepdims=True) + 1e-9
    choice = np.where(tied, u[:, :domain], np.inf).argmin(axis=1)

    gain = delta[rows, cur] - delta[rows, choice]
    commit_p = np.clip(0.72 * (1.0 - 0.65 * peer_churn_rate) / (1.0 + 0.02 * t), 0.12, 0.72)
    
    peer_count = peer_value_hist.sum(axis=1)
    is_dominant = np.any(gain > 1e-12)

    if is_dominant:
        lateral = (np.abs(gain) <= 1e-12) & (delta[rows, cur] > 1e-12) & (choice != cur)
        move = ((gain > 1e-12) | lateral) & (u[:, domain] < commit_p)

        redundant_move = (u[:, domain] >= commit_p) & (peer_count < np.median(peer_count))

        if np.any(redundant_move):
            alternative_choice = (choice + np.argmax(peer_value_hist, axis=1)) % domain
            adjusted_choice = np.where(redundant_move, alternative_choice, choice)
        else:
            adjusted_choice = choice

        return np.where(move, adjusted_choice, cur).astype(np.int64)

    # For redundant cases, change the behavior to explore
    slow_update = (peer_count >= np.median(peer_count)) & (u[:, domain] < commit_p)
    horizon_adjustment = (cur + 1) % domain
    modified_horizon = np.where(slow_update, horizon_adjustment, cur)

    return modified_horizon.astype(np.int64)
