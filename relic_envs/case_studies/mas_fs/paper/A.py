# RELIC's learned program for MAS-FS role A, as printed in the paper (relic.tex, Listing lst:case-mas-fs-a;
# Appendix "Case Study: Multi-Agent Flow-Shop Scheduling"). Everything below this header is copied verbatim.
"""
Seed skill for Company A — Myopic-Greedy (Flow-Shop, stage 0).

Lens: local exploitation. Company A owns stage 0 (the first stage).
No upstream; no teammate info. Picks the job in its buffer with the
shortest processing time — classic SPT (shortest-processing-time-first),
adjusted by weight: pick max(w / p).

Conventions:
  - Return -1 to idle.
  - Return a job_id from `my_buffer`.
"""
import numpy as np


def select_next_A(
    my_buffer: dict,
    my_busy_until: float,
    t_now: float,
    dummy: float,
) -> int:
    """
    Weighted shortest-processing-time-first (WSPT).

    Args:
        my_buffer: {job_id: (p_here, w)} for jobs waiting at my stage.
        my_busy_until: equals t_now when called.
        t_now: current simulation time.
        dummy: placeholder (currently unused, reserved).
    """
    if not my_buffer:
        return -1
    best_job = -1
    best_ratio = -1.0
    for jid, (p, w) in my_buffer.items():
        ratio = w / (p + 1e-9)
        if ratio > best_ratio:
            best_ratio = ratio
            best_job = jid
    return best_job
