# RELIC's learned program for MAPP-AR role A, as printed in the paper (relic.tex, Listing lst:case-mapp-ar-a;
# Appendix "Case Study: Adaptive-Reconnaissance Multi-Agent Path Planning"). Everything below this header is copied verbatim.
import numpy as np

def select_next_A(current: int, uncertainty_dict: dict, dist_mat: np.ndarray, budget_left: float) -> int:
    """
    Select the next node for the robot to scan based on uncertainty and neighboring influences.
    
    Args:
        current: current node id of my robot.
        uncertainty_dict: {node_id: uncertainty} for nodes not yet scanned.
            Scanned nodes are excluded. Higher = more uncertain.
        dist_mat: (N, N) distance matrix.
        budget_left: remaining travel budget for this robot.
    """
    best_node = 0
    best_score = -1.0
    
    for node, unc in uncertainty_dict.items():
        if node == current or node == 0:
            continue
        
        cost_to_node = dist_mat[current, node]
        total_cost = cost_to_node + dist_mat[node, 0]
        if total_cost > budget_left:
            continue

        neighbor_uncertainty = 0.0
        neighbor_count = 0
        
        for neighbor, neighbor_unc in uncertainty_dict.items():
            if neighbor == node or dist_mat[node, neighbor] < 1e-9:
                continue
            if dist_mat[node, neighbor] < budget_left:
                neighbor_uncertainty += neighbor_unc * (1.0 / (dist_mat[node, neighbor] + 1e-9))
                neighbor_count += 1

        # Combine uncertainty and neighbor influence using spillover effect
        total_score = unc + neighbor_uncertainty
        
        # Normalize score with cost to node
        score_with_cost = total_score / (cost_to_node + 1e-9)

        # Adjust final score based on surrounding uncertainties
        if neighbor_count > 0:
            score_with_cost += 0.1 * neighbor_count
        
        if score_with_cost > best_score:
            best_score = score_with_cost
            best_node = node
            
    return best_node
