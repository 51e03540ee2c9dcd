# RELIC's learned program for DGC role A, as printed in the paper (relic.tex, Listing lst:case-dgc-a;
# Appendix "Case Study: Distributed Graph Coloring"). Everything below this header is copied verbatim.
import numpy as np

def select_values_A(
    cur: np.ndarray,
    delta: np.ndarray,
    u: np.ndarray,
    t: int,
    violation_now: np.ndarray,
    repair_gain: np.ndarray,
) -> np.ndarray:
    m, domain = delta.shape
    rows = np.arange(m)

    # Determine potential candidates based on the minimum deltas and tie-breaking
    min_delta = delta.min(axis=1, keepdims=True)
    tied = delta <= min_delta + 1e-9
    candidate_colors = np.where(tied, u[:, :domain], np.inf).argmin(axis=1)

    # Identify conflicted nodes
    is_conflicted = violation_now > 1e-12
    current_gain = repair_gain[rows, candidate_colors]

    # Prioritize high repair_gain for conflicted nodes
    prioritized_gain = current_gain * is_conflicted
    relative_gain = prioritized_gain / (np.abs(violation_now) + np.abs(delta[rows, candidate_colors]) + 1.0)

    # Compute commit probabilities with tie-breaking jitter included
    commit_p = np.clip(0.30 + 0.55 * np.maximum(relative_gain, 0.0), 0.30, 0.85)

    # Adjust decision-making based on collective trends
    mean_gain = np.mean(repair_gain, axis=1)
    collective_influence = (mean_gain[rows] > 0).astype(np.float32)

    # Conditions to switch to a new color
    lateral = (np.abs(current_gain) <= 1e-12) & is_conflicted & (candidate_colors != cur)
    move_conditions = ((prioritized_gain > 0) | lateral) & (u[:, domain] < commit_p * (1 + collective_influence))

    # Select new colors based on move conditions or retain current color
    return np.where(move_conditions, candidate_colors, cur).astype(np.int64)
