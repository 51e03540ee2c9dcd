# RELIC's learned program for MRCPS role C, as printed in the paper (relic.tex, Listing lst:case-mrcps-c;
# Appendix "Case Study: Multi-Project Multi-Skilled Resource-Constrained Project Scheduling"). Everything below this header is copied verbatim.
import numpy as np

def select_next_C(task_id: int, worker_ids: np.ndarray, skill_levels: np.ndarray, worker_costs: np.ndarray) -> int:
    # Calculate scores based on skill levels and costs
    score = skill_levels / np.maximum(worker_costs, 1e-9)

    # Define thresholds for selecting workers
    high_skill_threshold = np.percentile(skill_levels, 75)
    median_cost = np.median(worker_costs)

    # Mask for currently free and qualified workers
    qualified_workers = (skill_levels >= high_skill_threshold)

    # Adjust scoring for reserved tasks focusing on speed advantage
    reserved_tasks = (task_id % 2 == 0)
    speed_advantage_workers = qualified_workers & (worker_costs > median_cost)

    # Modify scores for reserved workers to boost selection
    adjusted_score = np.where(reserved_tasks & speed_advantage_workers, score * 1.5, score)
    
    # Introduce cooperative aspect by highlighting diverse skills
    diversity_factor = (skill_levels - np.mean(skill_levels)) ** 2  # Penalize for low diversity
    adjusted_score += np.where(qualified_workers, diversity_factor, 0)

    final_score = np.where(qualified_workers, adjusted_score, -np.inf)

    # Select the highest score among qualified workers
    return int(worker_ids[np.argmax(final_score)])
