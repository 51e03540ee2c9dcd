# RELIC's learned program for MAS-FS role C, as printed in the paper (relic.tex, Listing lst:case-mas-fs-c;
# Appendix "Case Study: Multi-Agent Flow-Shop Scheduling"). Everything below this header is copied verbatim.
import numpy as np

def select_next_C(my_buffer: dict, pipeline_state: np.ndarray, job_table: np.ndarray, t_now: float) -> int:
    """
    Selects the next job to process based on a weighted shortest-processing-time-first (WSPT) strategy.

    Args:
        my_buffer: {job_id: (p_here, w)} for jobs waiting at stage 2.
        pipeline_state: (3,) busy-until for stages 0, 1, 2.
        job_table: (N, 5) with columns
            (stage_current, remaining_A, remaining_B, remaining_C, weight).
        t_now: current time.
    """
    if not my_buffer:
        return -1

    # Count jobs in stages 0 and 1 (upstream pressure)
    upstream_jobs = np.sum(job_table[:, 0] < 2)

    # Determine scoring function based on upstream pressure
    if upstream_jobs >= 5:
        # High pressure: prioritize completing jobs quickly
        score_fn = lambda weight, p_here: weight / (p_here + 1e-9)
    else:
        # Low pressure: maximize the weighted completion time
        score_fn = lambda weight, p_here: weight / (p_here ** 1.3)

    best_job = -1
    best_score = -float("inf")

    # Evaluate each job in the buffer
    for job_id, (p_here, weight) in my_buffer.items():
        score = score_fn(weight, p_here)

        if score > best_score:
            best_score = score
            best_job = job_id

    return best_job
