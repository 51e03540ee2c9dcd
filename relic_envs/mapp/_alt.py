"""The alternative A/B/C interface of the routing family (``interface="alt"``).

The paper evaluates the routing benchmarks under a second set of role interfaces
(Table tab:alternative-interface) and names the roles, A a deadline sentinel, B a value
harvester, C a system regulator, without printing their signatures. Ours keep the
paper's contrast in information scope:

- **A, deadline sentinel** sees only the currently feasible candidates with their
  value and budget *slack* (budget left after going there and back home), plus the
  request time-to-live in MAPP-DS; no geometry. It is meant to rescue what is about
  to become unreachable or expire.
- **B, value harvester** sees dense per-node values, its own distance row and the
  distance of the nearest live teammate to each node (contention); no depot return
  distances, no teammate budgets.
- **C, system regulator** sees the whole team (positions, budgets left, who is home,
  budget utilisation, the share of the instance's value already gained) and a node
  table with coordinates, value and its own feasibility mask, so it can balance
  coverage and load.

A benchmark plugs in its node value (``value_attr``) and, for MAPP-DS, the
time-to-live attribute; every other argument is defined here once.
"""

from __future__ import annotations

import numpy as np

from relic_envs.core import codecs as F
from relic_envs.core.benchmark import ROLES
from relic_envs.mapp import _routing as R


def _candidates(value_attr: str, ttl_attr: str | None):
    def get(v: R.View):
        cur, b = v.current, float(v.budget[v.k])
        slack = b - (v.dist[cur] + v.dist[:, 0])
        cols = [np.asarray(v.nodes[value_attr], dtype=np.float64), slack]
        if ttl_attr is not None:
            cols.append(np.asarray(v.nodes[ttl_attr], dtype=np.float64))
        return {"mask": v.feasible.astype(np.int8), "value": np.stack(cols, axis=1)}

    return get


def _teammate_dist(v: R.View):
    live = [j for j in v.teammates if not v.done[j]]
    if not live:
        return np.full(v.dist.shape[0], np.inf)
    return v.dist[v.pos[live]].min(axis=0)


def _team_state(value_attr: str, total):
    def get(v: R.View):
        budget0 = float(v.instance.budget)
        used = budget0 - v.budget
        return {
            "positions": v.pos.astype(np.int64),
            "budgets_left": v.budget.astype(np.float64),
            "home": v.done.astype(np.float64),
            "utilisation": used / budget0 if budget0 > 0 else np.zeros(len(ROLES)),
            "coverage": np.array(total(v), dtype=np.float64),
            "t": np.int64(min(v.t, v.dist.shape[0])),
        }

    return get


def _node_table(value_attr: str, ttl_attr: str | None):
    def get(v: R.View):
        cols = [v.instance.coords[:, 0], v.instance.coords[:, 1], np.asarray(v.nodes[value_attr], dtype=np.float64)]
        if ttl_attr is not None:
            cols.append(np.asarray(v.nodes[ttl_attr], dtype=np.float64))
        cols.append(v.feasible.astype(np.float64))
        return np.stack(cols, axis=1)

    return get


class TeamStep(F.Codec):
    """``int`` decision epoch 0..N."""

    def space(self, n):
        from gymnasium import spaces

        return spaces.Discrete(n + 1)

    def decode(self, value):
        return int(value)


def alt_roles(value_attr: str, value_doc: str, coverage_doc: str, coverage, ttl_attr: str | None = None) -> dict[str, F.RoleSpec]:
    """The alt-interface role table of one routing benchmark.

    ``coverage(view)`` is the share of the instance's attainable value already gained
    (benchmark-specific); ``ttl_attr`` names the time-to-live attribute (MAPP-DS).
    """
    ttl = ttl_attr is not None
    cand_cols = "(value, slack, ttl)" if ttl else "(value, slack)"
    table_cols = "x, y, value, ttl, feasible" if ttl else "x, y, value, feasible"
    return {
        "A": F.RoleSpec(
            "select_next_A",
            "deadline sentinel: serve what is about to become unreachable or expire (low slack first)",
            (
                F.ParamSpec("current", "int", "node id where this agent stands", F.NodeId(), R.current),
                F.ParamSpec(
                    "candidates", "dict",
                    f"{{node: {cand_cols}}} over the nodes this agent may move to now; value = {value_doc}; "
                    "slack = budget_left - (dist to node + node-to-depot dist) >= 0"
                    + ("; ttl = steps the node's best request stays active (arrival takes one step)" if ttl else ""),
                    F.SparseDict(3 if ttl else 2, ints=(2,) if ttl else ()), _candidates(value_attr, ttl_attr),
                ),
                F.ParamSpec("budget_left", "float", "this agent's remaining travel budget", F.Real(0.0), R.budget_left),
            ),
        ),
        "B": F.RoleSpec(
            "select_next_B",
            "value harvester: high value, low contention with teammates",
            (
                F.ParamSpec("current", "int", "node id where this agent stands", F.NodeId(), R.current),
                F.ParamSpec("values", "np.ndarray", f"(N,) {value_doc} per node (0 at the depot)", F.NodeVector(), R.attr(value_attr)),
                F.ParamSpec("dist_row", "np.ndarray", "(N,) distance from the current node to every node", F.NodeVector(0.0), R.dist_row),
                F.ParamSpec(
                    "teammate_dist", "np.ndarray",
                    "(N,) distance from the nearest teammate still en route to each node (inf when both are home)",
                    F.NodeVector(0.0), _teammate_dist,
                ),
                F.ParamSpec("budget_left", "float", "this agent's remaining travel budget", F.Real(0.0), R.budget_left),
            ),
        ),
        "C": F.RoleSpec(
            "select_next_C",
            "system regulator: balance coverage, load and budget utilisation across the team",
            (
                F.ParamSpec("my_state", "dict", "{'current': int, 'visited': list[int], 'budget_left': float}", F.AgentState(), R.my_state),
                F.ParamSpec(
                    "team_state", "dict",
                    "{'positions': list[int] (A, B, C), 'budgets_left': list[float], 'home': list[float] (1.0 = route closed), "
                    f"'utilisation': list[float] (share of budget spent), 'coverage': float ({coverage_doc}), 't': int (decision epoch)}}",
                    F.Record({
                        "positions": F.NodeList(3), "budgets_left": F.FloatList(3), "home": F.FloatList(3),
                        "utilisation": F.FloatList(3), "coverage": F.Real(), "t": TeamStep(),
                    }),
                    _team_state(value_attr, coverage),
                ),
                F.ParamSpec(
                    "node_table", "np.ndarray",
                    f"(N, {5 if ttl else 4}) rows ({table_cols}) per node; value = {value_doc}; feasible = 1.0 if this agent may move there now",
                    F.Table(5 if ttl else 4), _node_table(value_attr, ttl_attr),
                ),
            ),
        ),
    }
