"""FJAGV roles: the paper's signatures (Appendix B.3).

Three identifier spaces (see ``relic_envs.co.fjagv.simulator``): A returns a machine
``0..M-1`` for one precedence-ready operation, B an operation id ``0..3J-1`` waiting at
one free machine, C a transport request for one free AGV (a request's id is the id of
the operation whose material it carries). Candidate arrays are ascending, the other
arrays aligned with them; all are empty when the role is not deciding (its answer is
then ignored), and ``operation_id`` / ``machine_id`` / ``agv_id`` are then ``-1``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from relic_envs.co import _construct as K
from relic_envs.co.fjagv import generator, simulator
from relic_envs.core import codecs as F


def _deciding(v: K.View) -> bool:
    """Whether the viewing role is the one deciding (only then is ``state.about`` its own)."""
    return v.decision.ids.size > 0 and v.state.role == v.decision.role


def _proc_a(v: K.View) -> np.ndarray:
    return v.state.pt[v.state.about] if _deciding(v) else np.zeros(v.n)


def _ready(v: K.View) -> np.ndarray:
    return v.state.machine_ready_times() if _deciding(v) else np.zeros(v.n)


def _proc_b(v: K.View) -> np.ndarray:
    return v.state.pt[:, v.state.about] if _deciding(v) else np.zeros(v.n)


def _trips(v: K.View) -> np.ndarray:
    return v.state.trip_times(v.state.about) if _deciding(v) else np.zeros(v.n)


PAPER = {
    "A": F.RoleSpec(
        "select_next_A", "operation-to-machine assignment: where a newly precedence-ready operation is processed",
        (
            F.ParamSpec("operation_id", "int", "the operation to place: id 3*j + k for operation k (0..2) of job j "
                        "(-1 when A is not deciding)", K.Index(), K.index(lambda v: int(v.state.about))),
            F.ParamSpec("machine_ids", "np.ndarray", "(m,) int64 machines (0..4) eligible for the operation, "
                        "ascending", K.Ids(), K.ids),
            F.ParamSpec("processing_times", "np.ndarray", "(m,) float64 aligned: the operation's processing time on "
                        "each machine", K.Aligned(low=0.0), K.aligned(_proc_a)),
            F.ParamSpec("machine_ready_times", "np.ndarray", "(m,) float64 aligned: when the machine would be free "
                        "for it: the end of its current operation (or now), plus the processing times of the "
                        "operations already assigned to it and not started", K.Aligned(low=0.0), K.aligned(_ready)),
        ),
    ),
    "B": F.RoleSpec(
        "select_next_B", "machine sequencing: which delivered operation a free machine processes next",
        (
            F.ParamSpec("machine_id", "int", "the free machine (0..4; -1 when B is not deciding)", K.Index(),
                        K.index(lambda v: int(v.state.about))),
            F.ParamSpec("operation_ids", "np.ndarray", "(m,) int64 operations delivered to this machine and waiting, "
                        "ascending (id 3*j + k: job j = id // 3)", K.Ids(), K.ids),
            F.ParamSpec("processing_times", "np.ndarray", "(m,) float64 aligned: processing time on this machine",
                        K.Aligned(low=0.0), K.aligned(_proc_b)),
            F.ParamSpec("due_dates", "np.ndarray", "(m,) float64 aligned: the due date d_j of the operation's job",
                        K.Aligned(low=0.0), K.aligned(lambda v: np.repeat(v.instance.due, v.state.k))),
        ),
    ),
    "C": F.RoleSpec(
        "select_next_C", "AGV dispatching: which pending transport request a free AGV serves",
        (
            F.ParamSpec("agv_id", "int", "the free AGV (0 or 1; -1 when C is not deciding)", K.Index(),
                        K.index(lambda v: int(v.state.about))),
            F.ParamSpec("request_ids", "np.ndarray", "(m,) int64 pending transport requests, ascending; a request's "
                        "id is the id of the operation whose material it carries to that operation's machine",
                        K.Ids(), K.ids),
            F.ParamSpec("travel_times", "np.ndarray", "(m,) float64 aligned: the AGV's time to serve the request, "
                        "empty travel to the pickup plus loaded travel to the machine (delivery at now + this)",
                        K.Aligned(low=0.0), K.aligned(_trips)),
            F.ParamSpec("ready_times", "np.ndarray", "(m,) float64 aligned: when the material became ready to move "
                        "(0 for a first operation, else its predecessor's completion; all <= now)",
                        K.Aligned(low=0.0), K.aligned(lambda v: np.maximum(v.state.ready_at, 0.0))),
        ),
    ),
}

RETURNS = {
    "A": "a machine id from machine_ids (-1 is not allowed). Any other answer is repaired to the candidate with the "
         "earliest estimated finish machine_ready_time + processing_time (and counted)",
    "B": "an operation id from operation_ids (-1 is not allowed). Any other answer is repaired to the candidate with "
         "the shortest processing time (and counted)",
    "C": "a request id from request_ids (-1 is not allowed). Any other answer is repaired to the candidate with the "
         "shortest travel time (and counted)",
}


class FJAGVProblem(K.ConstructiveProblem, instance=generator.FJAGVInstance, simulator=simulator):
    roles = {"paper": PAPER}
    minimize = True
    returns_doc = RETURNS
    reference_text = {
        "A": "the eligible machine with the earliest estimated finish",
        "B": "shortest processing time first",
        "C": "the nearest request (shortest travel time)",
    }

    def id_space(self, role: str, instance: Any) -> int:
        return instance.n_machines if role == "A" else instance.n_operations

    def reference(self, role: str, obs: Mapping[str, Any]) -> int:
        ids = np.flatnonzero(np.asarray(obs["action_mask"])[1:])
        if not ids.size:
            return K.SKIP
        if role == "A":
            values = np.asarray(obs["machine_ready_times"]["value"]) + np.asarray(obs["processing_times"]["value"])
        else:
            values = np.asarray(obs["processing_times" if role == "B" else "travel_times"]["value"])
        return int(ids[np.argmin(values[ids])])
