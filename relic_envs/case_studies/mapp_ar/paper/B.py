# RELIC's learned program for MAPP-AR role B, as printed in the paper (relic.tex, Listing lst:case-mapp-ar-b;
# Appendix "Case Study: Adaptive-Reconnaissance Multi-Agent Path Planning"). Everything below this header is copied verbatim.
import numpy as np

def select_next_B(my_state: dict, teammate_positions: list, graph: dict, budget_left: float) -> int:
    current = my_state["current"]
    dist_mat = graph["dist_mat"]
    nodes = graph["nodes"]

    best_node = 0
    best_score = -float("inf")
    
    teammate_set = set(teammate_positions)

    for (node_id, _x, _y, unc) in nodes:
        if node_id == current or node_id == 0 or unc <= 0.0:
            continue
        
        cost = dist_mat[current, node_id] + dist_mat[node_id, 0]
        if cost > budget_left:
            continue
        
        my_dist = dist_mat[current, node_id]

        # Skip if a teammate is heading to a nearby node
        teammate_dist = min(dist_mat[tp, node_id] for tp in teammate_positions) if teammate_set else float("inf")
        if teammate_dist < my_dist:
            continue

        score = unc / (cost + 1e-6)  # Score based on uncertainty relative to cost

        # Deprioritize if a teammate is very close to the node
        if teammate_dist < 2.0 * my_dist:
            score -= 0.5 * unc

        # Update best node if current score is higher
        if score > best_score:
            best_score = score
            best_node = node_id

    return best_node
