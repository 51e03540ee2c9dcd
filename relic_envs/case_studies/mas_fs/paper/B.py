# RELIC's learned program for MAS-FS role B, as printed in the paper (relic.tex, Listing lst:case-mas-fs-b;
# Appendix "Case Study: Multi-Agent Flow-Shop Scheduling"). Everything below this header is copied verbatim.
import numpy as np

def select_next_B(my_buffer: dict, upstream_busy: float, downstream_buf_size: int, my_busy_until: float) -> int:
    if not my_buffer:
        return -1

    # Identify if we are in a congested downstream or have slack time
    congested_downstream = downstream_buf_size >= 3
    slack_time = upstream_busy > my_busy_until

    best_job = -1
    best_score = -float("inf")

    for jid, (p, w) in my_buffer.items():
        if congested_downstream:
            # If congested downstream, prioritize shorter jobs
            score = w / (p + 1e-9)  # Higher weight per unit time for short jobs
        elif not congested_downstream and not slack_time:
            # Prioritize shorter jobs if both conditions are false (not congested & not slow upstream)
            score = w / (p + 1e-9)
        else:
            # If we have slack and low congestion, prioritize heavier jobs
            score = w / ((p + 1e-9) ** 1.2)

        if score > best_score:
            best_score = score
            best_job = jid

    return best_job
