"""FSTSP roles: the paper's signatures (Appendix B.3).

The roles are the three stages of one synchronised sortie (see
``relic_envs.co.fstsp.simulator``): A nominates the drone customer, B the truck
customer, C the recovery node. Node ids: depot 0, customers 1..N. Candidate arrays
are ascending and empty when the role is not deciding (its answer is then ignored).
``truck_distances`` is indexed by node id (length N + 1), as the paper's case-study
program for B reads it (``truck_distances[valid_candidates]``,
``truck_distances[current]``); the other per-candidate arrays are aligned with
``candidate_ids``; times are measured from the sortie's launch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from relic_envs.co import _construct as K
from relic_envs.co.fstsp import generator, simulator
from relic_envs.core import codecs as F


def _etas(v: K.View, k: int) -> np.ndarray:
    s = v.state
    if s.stage != simulator.STAGE_C or v.decision.role != 2:
        return np.zeros(s.n + 1)
    return s.etas()[k]


IDS = F.ParamSpec("candidate_ids", "np.ndarray", "", K.Ids(), K.ids)  # doc set per role below
ENDURANCE = F.ParamSpec(
    "endurance", "float", "drone endurance E: the longest a sortie may last from launch to recovery, waiting "
    "included", F.Real(0.0), lambda v: np.array(float(v.instance.endurance)),
)


def _ids(doc: str) -> F.ParamSpec:
    return F.ParamSpec(IDS.name, IDS.annotation, doc, IDS.codec, IDS.get)


PAPER = {
    "A": F.RoleSpec(
        "select_next_A", "drone-customer nomination: which customer the drone serves in this sortie (or none)",
        (
            _ids("(m,) int64 unserved drone-eligible customers whose out-and-back flight from the launch node fits "
                 "the endurance (2*l(u,j)/drone_speed <= endurance), ascending"),
            F.ParamSpec("drone_roundtrip_times", "np.ndarray", "(m,) float64 aligned: 2*l(u,j)/drone_speed, the "
                        "drone's out-and-back time from the launch node u", K.Aligned(low=0.0),
                        K.aligned(lambda v: 2 * v.state.dist[v.state.cur] / v.state.vd)),
            F.ParamSpec("truck_detours", "np.ndarray", "(m,) float64 aligned: 2*l(u,j)/truck_speed, the time the "
                        "truck would need to serve the customer itself out and back from u", K.Aligned(low=0.0),
                        K.aligned(lambda v: 2 * v.state.dist[v.state.cur] / v.state.vt)),
            ENDURANCE,
        ),
    ),
    "B": F.RoleSpec(
        "select_next_B", "truck-customer nomination: the truck's next customer, after the drone's reservation",
        (
            F.ParamSpec("current", "int", "the truck's node u (0 = depot, 1..N customers), where the drone launches",
                        K.Node(), lambda v: int(v.state.cur)),
            _ids("(m,) int64 unserved customers the truck may take: all of them when drone_customer == -1; "
                 "otherwise those other than drone_customer where truck and drone could meet within the endurance"),
            F.ParamSpec("truck_distances", "np.ndarray", "(N+1,) float64 indexed by node id: distance from the "
                        "truck's node u to every node (depot 0 included; 0 at u itself)", F.NodeVector(0.0),
                        lambda v: v.state.dist[v.state.cur].astype(np.float64).copy()),
            F.ParamSpec("drone_customer", "int", "the customer A reserved for the drone in this sortie, or -1 "
                        "(no sortie: then -1 is not allowed and the truck drives to the chosen customer)",
                        K.OptionalId(), lambda v: int(v.state.a) if v.decision.role == 1 else -1),
        ),
    ),
    "C": F.RoleSpec(
        "select_next_C", "synchronised rendezvous: where truck and drone meet again",
        (
            _ids("(m,) int64 endurance-feasible recovery nodes, ascending: the truck's first stop (its customer, "
                 "or its launch node when it waits), other unserved customers, or the depot 0 when none is left"),
            F.ParamSpec("truck_etas", "np.ndarray", "(m,) float64 aligned: time since launch at which the truck "
                        "reaches the node (via its chosen customer)", K.Aligned(low=0.0),
                        K.aligned(lambda v: _etas(v, 0))),
            F.ParamSpec("drone_etas", "np.ndarray", "(m,) float64 aligned: time since launch at which the drone "
                        "reaches the node via its customer", K.Aligned(low=0.0), K.aligned(lambda v: _etas(v, 1))),
            ENDURANCE,
        ),
    ),
}

RETURNS = {
    "A": "a drone customer from candidate_ids, or -1 for no sortie. Any other answer is repaired to the candidate "
         "with the least drone round trip (and counted)",
    "B": "a truck customer from candidate_ids, or -1 (truck waits at its node) when drone_customer != -1. Any other "
         "answer is repaired to the nearest candidate (and counted)",
    "C": "a recovery node from candidate_ids (-1 is not allowed). Any other answer is repaired to the candidate with "
         "the earliest rendezvous max(truck_eta, drone_eta) (and counted)",
}


class FSTSPProblem(K.ConstructiveProblem, instance=generator.FSTSPInstance, simulator=simulator):
    roles = {"paper": PAPER}
    minimize = True
    returns_doc = RETURNS
    reference_text = {
        "A": "no drone (never launching a sortie: a truck-only tour)",
        "B": "the truck driving to the nearest candidate",
        "C": "recovery at the earliest rendezvous",
    }

    def id_space(self, role: str, instance: Any) -> int:
        return instance.n_customers + 1

    def reference(self, role: str, obs: Mapping[str, Any]) -> int:
        mask = np.asarray(obs["action_mask"])
        ids = np.flatnonzero(mask[1:])
        if role == "A" or not ids.size:
            return K.SKIP
        if role == "B":
            return int(ids[np.argmin(np.asarray(obs["truck_distances"])[ids])])
        rendezvous = np.maximum(obs["truck_etas"]["value"], obs["drone_etas"]["value"])[ids]
        return int(ids[np.argmin(rendezvous)])
