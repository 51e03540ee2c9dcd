

def select_next_B(my_state: dict, teammate_positions: list, graph: dict, budget_left: float) -> int:
    """Value per unit travel, leaving requests a teammate en route is closer to; else a short hop."""
    current = my_state["current"]
    dist_mat = graph["dist_mat"]
    away = [p for p in teammate_positions if p != 0]
    best_node, best_score, idle_node, idle_cost = 0, 0.0, 0, float("inf")
    for node_id, _x, _y, value, ttl in graph["nodes"]:
        if node_id == 0 or node_id == current:
            continue
        go = dist_mat[current, node_id]
        if go + dist_mat[node_id, 0] > budget_left:
            continue
        if go < idle_cost:
            idle_node, idle_cost = node_id, go
        if value <= 0.0 or ttl < 1:
            continue
        score = value / (go + 0.05)
        if away and min(dist_mat[p, node_id] for p in away) < go:
            score *= 0.3
        if score > best_score:
            best_node, best_score = node_id, score
    return best_node if best_node else idle_node
