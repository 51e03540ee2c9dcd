def select_next_B(my_state: dict, teammate_states: list, task_pool: dict, t_now: float) -> int:
    """Value density on time, discounted where a teammate free as soon is more skilled."""
    skills = my_state["skills"]
    best_task, best_score = -1, 0.0
    for task, (c, p, v, d) in task_pool.items():
        eff = p / max(skills[c], 0.05)
        if t_now + eff > d:
            continue
        score = v / eff
        for mate in teammate_states:
            if mate["busy_until"] <= t_now + 0.5 * eff and mate["skills"][c] > skills[c] + 0.1:
                score *= 0.5  # a better-suited teammate is about to be free
        if score > best_score:
            best_task, best_score = task, score
    return best_task
