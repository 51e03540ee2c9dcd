import numpy as np


def select_next_C(my_state: dict, team_state: dict, node_table: np.ndarray) -> int:
    """System regulator: servable value per unit travel, spread away from teammates en route.

    Columns of node_table: x, y, value, ttl, feasible. With nothing servable in reach,
    the nearest feasible node is a cheap place to wait for the next request.
    """
    xy = node_table[:, :2]
    value, ttl, feasible = node_table[:, 2], node_table[:, 3], node_table[:, 4] > 0.5
    me = my_state["current"]
    if not feasible.any():
        return 0
    d = np.sqrt(((xy - xy[me]) ** 2).sum(axis=1))
    others = [p for k, p in enumerate(team_state["positions"]) if team_state["home"][k] < 0.5 and p != me]
    spread = np.ones(len(value))
    for p in others:
        spread *= 1.0 - np.exp(-(((xy - xy[p]) ** 2).sum(axis=1)) / 0.02)
    live = feasible & (value > 0) & (ttl >= 1)
    if live.any():
        score = np.where(live, value * (0.3 + spread) / (d + 0.05), -1.0)
        return int(np.argmax(score))
    return int(np.argmin(np.where(feasible, d, np.inf)))
