import numpy as np


def select_next_C(my_state: dict, team_state: dict, node_table: np.ndarray) -> int:
    """System regulator: value per unit travel, avoiding nodes near teammates en route.

    Columns of node_table: x, y, value, feasible. A node's value is discounted by how
    close the nearest other active agent is, which spreads the team over the map; an
    agent that has used more of its budget than the team average prefers nearer nodes.
    """
    xy = node_table[:, :2]
    value = node_table[:, 2]
    feasible = node_table[:, -1] > 0.5
    me = my_state["current"]
    d = np.sqrt(((xy - xy[me]) ** 2).sum(axis=1))
    others = [p for k, p in enumerate(team_state["positions"]) if team_state["home"][k] < 0.5 and p != me]
    spread = np.ones(len(value))
    for p in others:
        spread *= 1.0 - np.exp(-(((xy - xy[p]) ** 2).sum(axis=1)) / 0.02)
    util = team_state["utilisation"]
    lean = 1.0 + max(0.0, util[2] - float(np.mean(util)))
    score = np.where(feasible & (value > 0), value * (0.3 + spread) / (d ** lean + 1e-9), -1.0)
    j = int(np.argmax(score))
    return j if score[j] > 0 else 0
