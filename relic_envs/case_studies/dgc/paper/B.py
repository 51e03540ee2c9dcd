# RELIC's learned program for DGC role B, as printed in the paper (relic.tex, Listing lst:case-dgc-b;
# Appendix "Case Study: Distributed Graph Coloring"). Everything below this header is copied verbatim.
import numpy as np

def select_values_B(cur: np.ndarray, delta: np.ndarray, u: np.ndarray, t: int, opportunity_gain: np.ndarray, flexibility: np.ndarray) -> np.ndarray:
    m, domain = delta.shape
    rows = np.arange(m)

    # Current costs and preferred colors based on the available deltas
    current_cost = delta[rows, cur]
    preferred_choice = np.argmin(delta + np.where(delta.min(axis=1, keepdims=True) + 1e-9 > delta, 0, np.inf), axis=1)

    # Calculate potential gains from switching colors
    gain = opportunity_gain[rows, preferred_choice]
    scale = np.ptp(delta, axis=1) + 1.0

    # Commitment probability adjusted with flexibility
    robust = np.clip(flexibility / max(1, domain), 0.0, 1.0)
    commit_p = np.clip(0.35 + 0.35 * np.maximum(gain / scale, 0.0) + 0.15 * robust, 0.30, 0.82)

    # Peer influence to adjust commitment probabilities
    peer_contributions = np.mean(u, axis=1)
    adjusted_commit_p = np.clip(commit_p + 0.1 * (peer_contributions - 0.5), 0.30, 0.82)

    # Identify effective movements and potential cheap recolors
    movement_mask = (gain > 0.1) & (u[:, domain] < adjusted_commit_p)
    cheap_recolor_mask = (gain > 0.1) & (u[:, domain] > 0.5)

    # Select preferred choices for movement based on computed masks
    final_selection = np.where(movement_mask, preferred_choice, cur)

    # Directly apply cheap recoloring while avoiding multiple nodes jumping to the same color in one sweep
    unique_choices = np.unique(preferred_choice[cheap_recolor_mask])
    for choice in unique_choices:
        # Check how many nodes are currently choosing this color
        nodes_for_choice = np.where(preferred_choice == choice)[0]
        if len(nodes_for_choice) > 1:
            # For simplicity, only allow one node to opt for this choice
            selected_node = nodes_for_choice[0]
            final_selection[selected_node] = choice
        else:
            # If only one node prefers this choice, apply the recoloring
            final_selection[nodes_for_choice] = choice

    # Ensure nodes stay with their current color if no valid move was made
    final_selection = np.where((movement_mask | cheap_recolor_mask), final_selection, cur)

    return final_selection.astype(np.int64)
