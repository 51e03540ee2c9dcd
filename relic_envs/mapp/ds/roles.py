"""MAPP-DS roles: the paper's signatures (Appendix B.1) and the alternative interface.

Each role sees, per node, only the most valuable request active now. Paper: A gets a
sparse ``{node: (value, time_to_live)}`` dict and the full distance matrix; B its own
state, teammate positions and the graph ``{"dist_mat", "nodes": [(node_id, x, y, value,
time_to_live), ...]}`` (value 0 and time-to-live 0 where no request is active); C its
distance row and the dense value and deadline (remaining time-to-live) vectors.
A request shown with time-to-live ``d`` can still be served by an agent whose hop
lands within ``d`` steps; one hop takes one step, so ``d = 0`` is already too late.
"""

from __future__ import annotations

from relic_envs.core import codecs as F
from relic_envs.mapp import _routing as R
from relic_envs.mapp._alt import alt_roles
from relic_envs.mapp._routing import BUDGET, CURRENT, DIST_MAT, DIST_ROW, MY_STATE, REMAINING_BUDGET, TEAMMATES
from relic_envs.mapp.ds import generator, simulator


def _coverage(v: R.View) -> float:
    # Served value relative to everything released so far (a running service ratio).
    released = v.nodes["released"]
    return float(v.nodes["served_value"][0] / released) if released > 0 else 0.0


PAPER = {
    "A": F.RoleSpec(
        "select_next_A", "global planner: sparse request map over the full distance matrix",
        (
            CURRENT,
            F.ParamSpec("request_dict", "dict", "{node: (value, time_to_live)} of the most valuable active request per node",
                        F.SparseDict(2, ints=(1,)), R.sparse("active", "value", "ttl")),
            DIST_MAT, BUDGET,
        ),
    ),
    "B": F.RoleSpec(
        "select_next_B", "team-aware dispatcher: structured graph and teammate positions",
        (
            MY_STATE, TEAMMATES,
            F.ParamSpec("graph", "dict", "{'dist_mat': (N, N) array, 'nodes': [(node_id, x, y, value, time_to_live), ...]} "
                        "with the best active request per node (0, 0 where none)", F.Graph(2, ints=(4,)), R.graph("value", "ttl")),
            BUDGET,
        ),
    ),
    "C": F.RoleSpec(
        "select_next_C", "compact local dispatcher: distance row, dense value and deadline vectors",
        (
            CURRENT, DIST_ROW,
            F.ParamSpec("value_vector", "np.ndarray", "(N,) value of the best active request per node (0 where none)",
                        F.NodeVector(0.0), R.attr("value")),
            F.ParamSpec("deadline_vector", "np.ndarray", "(N,) remaining time-to-live of that request in steps (0 where none)",
                        F.NodeVector(0.0), R.attr("ttl")),
            REMAINING_BUDGET,
        ),
    ),
}

ALT = alt_roles("value", "value of the best active request", "served value / value released so far", _coverage, ttl_attr="ttl")


class DSProblem(R.RoutingProblem, instance=generator.DSInstance, simulator=simulator):
    roles = {"paper": PAPER, "alt": ALT}
    allow_revisit = True
