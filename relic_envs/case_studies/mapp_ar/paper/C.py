# RELIC's learned program for MAPP-AR role C, as printed in the paper (relic.tex, Listing lst:case-mapp-ar-c;
# Appendix "Case Study: Adaptive-Reconnaissance Multi-Agent Path Planning"). Everything below this header is copied verbatim.
import numpy as np

def select_next_C(current: int, dist_row: np.ndarray, uncertainty_vector: np.ndarray, remaining_budget: float) -> int:
    """
    Evaluate potential nodes for scanning based on uncertainty and travel costs,
    prioritizing exploration of regions with high uncertainty while respecting the budget.

    Args:
        current: current node id.
        dist_row: (N,) distances from current to every node.
        uncertainty_vector: (N,) remaining uncertainty at each node
            (0 if scanned). Depot = 0.
        remaining_budget: remaining travel budget.
    
    Returns:
        int: the selected node to scan, or 0 for depot.
    """
    n = len(uncertainty_vector)
    best_node = 0
    best_score = -float("inf")

    for j in range(n):
        if j != current and j != 0:  # Skip current and depot
            travel_cost = dist_row[j]  # Cost to reach j
            if travel_cost <= remaining_budget:
                # Calculate effective score considering uncertainty
                score = uncertainty_vector[j] / (travel_cost + 1e-6)  # Avoid division by zero
                if score > best_score:
                    best_score = score
                    best_node = j

    # If no suitable node was found, opt for the node with the highest uncertainty
    if best_score < 1e-3:
        high_uncertainty_nodes = np.where(uncertainty_vector > 0)[0]
        for j in high_uncertainty_nodes:
            travel_cost = dist_row[j]
            if travel_cost <= remaining_budget:
                best_node = j
                break

    return best_node
