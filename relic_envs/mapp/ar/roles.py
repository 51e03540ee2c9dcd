"""MAPP-AR roles: the paper's signatures (Appendix B.1) and the alternative interface.

Paper: A gets a sparse ``{node: uncertainty}`` dict of the customers no agent has
scanned yet (the case-study program's docstring: "Scanned nodes are excluded") and the
full distance matrix; B its own state, teammate positions and the graph
``{"dist_mat", "nodes": [(node_id, x, y, uncertainty), ...]}``; C its distance row and
the dense residual-uncertainty vector (0 at scanned nodes and the depot).
"""

from __future__ import annotations

from relic_envs.core import codecs as F
from relic_envs.mapp import _routing as R
from relic_envs.mapp._alt import alt_roles
from relic_envs.mapp._routing import BUDGET, CURRENT, DIST_MAT, DIST_ROW, MY_STATE, REMAINING_BUDGET, TEAMMATES
from relic_envs.mapp.ar import generator, simulator


def _coverage(v: R.View) -> float:
    return float(1.0 - v.nodes["uncertainty"].sum() / (v.dist.shape[0] - 1))


PAPER = {
    "A": F.RoleSpec(
        "select_next_A", "global planner: sparse uncertainty map over the full distance matrix",
        (
            CURRENT,
            F.ParamSpec("uncertainty_dict", "dict", "{node: residual uncertainty} of the customers no agent has scanned yet",
                        F.SparseDict(), R.sparse("unscanned", "uncertainty")),
            DIST_MAT, BUDGET,
        ),
    ),
    "B": F.RoleSpec(
        "select_next_B", "team-aware coverage: structured graph and teammate positions",
        (
            MY_STATE, TEAMMATES,
            F.ParamSpec("graph", "dict", "{'dist_mat': (N, N) array, 'nodes': [(node_id, x, y, uncertainty), ...]} with "
                        "the current residual uncertainty (0 at scanned nodes and the depot)", F.Graph(1), R.graph("uncertainty")),
            BUDGET,
        ),
    ),
    "C": F.RoleSpec(
        "select_next_C", "compact local scanner: distance row and dense uncertainty vector",
        (
            CURRENT, DIST_ROW,
            F.ParamSpec("uncertainty_vector", "np.ndarray", "(N,) residual uncertainty per node (0 if scanned, 0 at the depot)",
                        F.NodeVector(0.0), R.attr("uncertainty")),
            REMAINING_BUDGET,
        ),
    ),
}

ALT = alt_roles("uncertainty", "residual uncertainty", "share of the initial uncertainty removed", _coverage)


class ARProblem(R.RoutingProblem, instance=generator.ARInstance, simulator=simulator):
    roles = {"paper": PAPER, "alt": ALT}
