# RELIC's learned program for MRCPS role A, as printed in the paper (relic.tex, Listing lst:case-mrcps-a;
# Appendix "Case Study: Multi-Project Multi-Skilled Resource-Constrained Project Scheduling"). Everything below this header is copied verbatim.
import numpy as np

def select_next_A(project_ids: np.ndarray, due_dates: np.ndarray, remaining_task_counts: np.ndarray, t_now: float) -> int:
    # Calculate the tightness of deadlines prioritizing projects with close due dates and less remaining work
    priorities = (due_dates - t_now) + (remaining_task_counts * 4)
    # Find the optimal project id by selecting the one with the minimal adjusted priority that still has remaining tasks
    feasible_indices = np.where(remaining_task_counts > 0)[0]
    selected_index = feasible_indices[np.argmin(priorities[feasible_indices])]
    return int(project_ids[selected_index])
