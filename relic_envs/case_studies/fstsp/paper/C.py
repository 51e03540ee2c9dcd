# RELIC's learned program for FSTSP role C, as printed in the paper (relic.tex, Listing lst:case-fstsp-c;
# Appendix "Case Study: Flying Sidekick Traveling Salesman Problem"). Everything below this header is copied verbatim.
import numpy as np

def select_next_C(candidate_ids: np.ndarray, truck_etas: np.ndarray,
                  drone_etas: np.ndarray, endurance: float) -> int:
    differences = np.abs(truck_etas - drone_etas)
    max_times = np.maximum(truck_etas, drone_etas)
    
    # Preserve behavior for dominant cases: minimize the maximum time with a small difference
    scores_preserving = max_times + differences
    best_candidate_preserving = np.argmin(scores_preserving)

    # Reshape behavior for redundant cases: focus on minimizing the maximum ETA
    scores_reshaping = max_times
    
    best_candidate_reshaping = np.argmin(scores_reshaping)
    
    # If the waiting is higher in the reshaping case, use the preserving score
    if scores_reshaping[best_candidate_reshaping] < scores_preserving[best_candidate_preserving]:
        return int(candidate_ids[best_candidate_reshaping])
    else:
        return int(candidate_ids[best_candidate_preserving])
