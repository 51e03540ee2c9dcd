"""HMTSP roles: the paper's signatures (Appendix B.3).

Each role is one vehicle (A, B, C: vehicle 0, 1, 2). At its turn it sees the
unassigned customers (``candidate_ids``, ascending) and the incremental cost of
appending each to its route (``candidate_costs``, aligned: the change of ``L_k``,
return leg included); A also its current node and remaining budget, B the candidates'
task types and its current route cost, C its current node and all three route costs.
It returns one of ``candidate_ids`` or ``-1`` to skip. When it is another vehicle's
turn its candidate arrays are empty and only ``-1`` is allowed (its answer is ignored).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from relic_envs.co import _construct as K
from relic_envs.co.hmtsp import generator, simulator
from relic_envs.core import codecs as F
from relic_envs.core.codecs import INF


def _k(v: K.View) -> int:
    return v.decision.role


CURRENT = F.ParamSpec(
    "current", "int", "node id where this vehicle's route currently ends: a customer id 0..N-1, or its depot "
    "N + k (A: N, B: N+1, C: N+2) before its first customer", K.Node(extra=3), lambda v: int(v.state.cur[_k(v)]),
)
IDS = F.ParamSpec(
    "candidate_ids", "np.ndarray", "(m,) int64 ids of the unassigned customers (0..N-1), ascending; empty when it "
    "is not this vehicle's turn", K.Ids(), K.ids,
)
COSTS = F.ParamSpec(
    "candidate_costs", "np.ndarray", "(m,) float64 aligned with candidate_ids: how much this vehicle's route cost "
    "L_k grows if the customer is appended, gamma_k*(l(cur,j) + l(j,depot) - l(cur,depot)) + s_{k,type(j)}",
    K.Aligned(), K.aligned(lambda v: v.state.increments(_k(v))),
)

PAPER = {
    "A": F.RoleSpec(
        "select_next_A", "vehicle A: residual-budget view (its current node, incremental costs, budget left)",
        (
            CURRENT, IDS, COSTS,
            F.ParamSpec("budget_left", "float", "B_A - L_A: soft budget minus the current route cost (closed at the "
                        "depot); negative once the budget is exceeded (each unit over costs 5)", F.Real(-INF),
                        lambda v: np.array(v.state.budget_left(_k(v)))),
        ),
    ),
    "B": F.RoleSpec(
        "select_next_B", "vehicle B: task-type view (incremental costs, task types, its accumulated route cost)",
        (
            IDS, COSTS,
            F.ParamSpec("task_types", "np.ndarray", "(m,) int64 task type (0, 1, 2) of each candidate; vehicle B "
                        "is specialised in type 1 (its service cost there is scaled by 0.25-0.55)",
                        K.Aligned(ints=True, low=0.0, high=2.0), K.aligned(lambda v: v.instance.task_type)),
            F.ParamSpec("route_cost", "float", "L_B: vehicle B's current route cost, closed at its depot", F.Real(0.0),
                        lambda v: np.array(v.state.lengths[_k(v)])),
        ),
    ),
    "C": F.RoleSpec(
        "select_next_C", "vehicle C: route-balance view (its current node, incremental costs, all route costs)",
        (
            CURRENT, IDS, COSTS,
            F.ParamSpec("team_route_costs", "np.ndarray", "(3,) float64 current route costs L_A, L_B, L_C (closed at "
                        "their depots); this vehicle is entry 2", K.Vector(3, 0.0),
                        lambda v: v.state.lengths.astype(np.float64).copy()),
        ),
    ),
}

RETURNS = (
    "an unassigned customer id from candidate_ids (appended to this vehicle's route), or -1 to skip this turn. "
    "Any other answer (an exception, a non-integer, an assigned or unknown id) is repaired to this vehicle's "
    "cheapest candidate and counted; if all three vehicles skip in a row the evaluator forces the globally "
    "cheapest assignment"
)


class HMTSPProblem(K.ConstructiveProblem, instance=generator.HMTSPInstance, simulator=simulator):
    roles = {"paper": PAPER}
    minimize = True
    returns_doc = {r: RETURNS for r in "ABC"}
    reference_text = {r: "your vehicle absent (always skipping; the others and the forced assignment serve its customers)"
                      for r in "ABC"}

    def id_space(self, role: str, instance: Any) -> int:
        return instance.n_customers

    def reference(self, role: str, obs: Mapping[str, Any]) -> int:
        """The vehicle absent: it always skips (the team and the forced assignment cover)."""
        return K.SKIP
