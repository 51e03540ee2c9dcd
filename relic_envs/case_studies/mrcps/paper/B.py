# RELIC's learned program for MRCPS role B, as printed in the paper (relic.tex, Listing lst:case-mrcps-b;
# Appendix "Case Study: Multi-Project Multi-Skilled Resource-Constrained Project Scheduling"). Everything below this header is copied verbatim.
import numpy as np


def select_next_B(project_id: int, task_ids: np.ndarray,
                  durations: np.ndarray, successor_counts: np.ndarray) -> int:
    score = durations - 0.5 * successor_counts
    return int(task_ids[int(np.argmin(score))])
