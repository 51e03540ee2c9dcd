def select_next_B(my_state: dict, teammate_positions: list, graph: dict, budget_left: float) -> int:
    """Residual uncertainty per unit travel; yield (halve the score) where a teammate en
    route stands closer to the node than this agent does."""
    current = my_state["current"]
    dist_mat = graph["dist_mat"]
    away = [p for p in teammate_positions if p != 0]  # teammates at the depot are home or not started
    best_node, best_score = 0, 0.0
    for node_id, _x, _y, unc in graph["nodes"]:
        if node_id == 0 or node_id == current or unc <= 0.0:
            continue
        go = dist_mat[current, node_id]
        if go + dist_mat[node_id, 0] > budget_left:
            continue
        score = unc / (go + 1e-9)
        if away and min(dist_mat[p, node_id] for p in away) < go:
            score *= 0.5
        if score > best_score:
            best_node, best_score = node_id, score
    return best_node
