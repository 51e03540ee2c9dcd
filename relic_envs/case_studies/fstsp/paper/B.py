# RELIC's learned program for FSTSP role B, as printed in the paper (relic.tex, Listing lst:case-fstsp-b;
# Appendix "Case Study: Flying Sidekick Traveling Salesman Problem"). Everything below this header is copied verbatim.
import numpy as np

def select_next_B(current: int, candidate_ids: np.ndarray, truck_distances: np.ndarray, drone_customer: int) -> int:
    # Exclude the drone customer from candidates
    valid_candidates = candidate_ids[candidate_ids != drone_customer]
    
    if len(valid_candidates) == 0:
        return -1  # No valid candidates

    # Calculate distances for valid candidates
    valid_distances = truck_distances[valid_candidates]
    current_distance = truck_distances[current]

    # Score calculation based on the principle
    scores = np.maximum(valid_distances, current_distance) + np.abs(valid_distances - current_distance)

    # Find the candidate with the lowest score within the endurance threshold
    endurance_threshold = 10  # Define an endurance threshold for valid scores
    valid_scores = scores[scores <= endurance_threshold]
    
    if len(valid_scores) == 0:
        return -1  # No valid candidates within endurance threshold

    best_candidate_index = np.argmin(valid_scores)
    best_candidate = valid_candidates[scores <= endurance_threshold][best_candidate_index]
    
    return int(best_candidate)
