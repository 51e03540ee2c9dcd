# RELIC's learned program for FSTSP role A, as printed in the paper (relic.tex, Listing lst:case-fstsp-a;
# Appendix "Case Study: Flying Sidekick Traveling Salesman Problem"). Everything below this header is copied verbatim.
import numpy as np

def select_next_A(candidate_ids: np.ndarray, drone_roundtrip_times: np.ndarray,
                  truck_detours: np.ndarray, endurance: float) -> int:
    scores = np.maximum(drone_roundtrip_times, truck_detours)
    cost_effectiveness = drone_roundtrip_times < 0.5 * truck_detours
    filtered_scores = scores[cost_effectiveness]
    filtered_ids = candidate_ids[cost_effectiveness]

    if filtered_scores.size > 0:
        min_score_index = np.argmin(filtered_scores)
        if filtered_scores[min_score_index] < endurance:
            return int(filtered_ids[min_score_index])

    min_score_index = np.argmin(scores)
    if scores[min_score_index] < endurance:
        return int(candidate_ids[min_score_index])

    return -1
