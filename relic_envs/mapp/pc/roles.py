"""MAPP-PC roles: the paper's signatures (Appendix B.1) and the alternative interface.

Paper: A gets a sparse ``{node: prize}`` dict of the nodes no agent has reached yet and
the full distance matrix; B its own state, the teammates' positions and the graph
``{"dist_mat", "nodes": [(node_id, x, y, remaining_prize), ...]}``; C its distance row
and the dense remaining-prize vector.
"""

from __future__ import annotations

from relic_envs.core import codecs as F
from relic_envs.mapp import _routing as R
from relic_envs.mapp._alt import alt_roles
from relic_envs.mapp._routing import BUDGET, CURRENT, DIST_MAT, DIST_ROW, MY_STATE, REMAINING_BUDGET, TEAMMATES
from relic_envs.mapp.pc import generator, simulator


def _coverage(v: R.View) -> float:
    prizes = v.instance.prizes
    return float(1.0 - v.nodes["prize"].sum() / prizes.sum()) if prizes.sum() > 0 else 1.0


PAPER = {
    "A": F.RoleSpec(
        "select_next_A", "global planner: sparse prize map over the full distance matrix",
        (
            CURRENT,
            F.ParamSpec("unvisited_prizes", "dict", "{node: prize} of the customers no agent has reached yet",
                        F.SparseDict(), R.sparse("open", "prize")),
            DIST_MAT, BUDGET,
        ),
    ),
    "B": F.RoleSpec(
        "select_next_B", "team-aware router: structured graph and teammate positions",
        (
            MY_STATE, TEAMMATES,
            F.ParamSpec("graph", "dict", "{'dist_mat': (N, N) array, 'nodes': [(node_id, x, y, prize), ...]} with the "
                        "remaining prize (0 once reached, 0 at the depot)", F.Graph(1), R.graph("prize")),
            BUDGET,
        ),
    ),
    "C": F.RoleSpec(
        "select_next_C", "compact local router: distance row and dense prize vector",
        (
            CURRENT, DIST_ROW,
            F.ParamSpec("remaining_prizes", "np.ndarray", "(N,) remaining prize per node (0 once reached, 0 at the depot)",
                        F.NodeVector(0.0), R.attr("prize")),
            REMAINING_BUDGET,
        ),
    ),
}

ALT = alt_roles("prize", "remaining prize", "share of the total prize collected", _coverage)


class PCProblem(R.RoutingProblem, instance=generator.PCInstance, simulator=simulator):
    roles = {"paper": PAPER, "alt": ALT}
