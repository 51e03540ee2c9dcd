"""MRCPS roles: the paper's signatures (Appendix B.3).

The roles are the three nested decisions that start one task (see
``relic_envs.co.mrcps.simulator``): A picks the project, B the task, C the worker.
Id spaces: projects ``0..P-1`` (A), tasks ``0..N-1`` (B), workers ``0..W-1`` (C).
Candidate arrays are ascending, the other arrays aligned with them; all are empty
when the role is not deciding (its answer is then ignored), and ``project_id`` /
``task_id`` are then ``-1``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from relic_envs.co import _construct as K
from relic_envs.co.mrcps import generator, simulator
from relic_envs.core import codecs as F


def _task(v: K.View) -> int:
    return max(int(v.state.task), 0)


PAPER = {
    "A": F.RoleSpec(
        "select_next_A", "project priority: which project gets the next task start at this event time",
        (
            F.ParamSpec("project_ids", "np.ndarray", "(m,) int64 projects (0..P-1) with a schedulable task now (not "
                        "started, every predecessor complete, a free qualified worker), ascending", K.Ids(), K.ids),
            F.ParamSpec("due_dates", "np.ndarray", "(m,) float64 aligned: the project's due date d_p",
                        K.Aligned(low=0.0), K.aligned(lambda v: v.instance.due)),
            F.ParamSpec("remaining_task_counts", "np.ndarray", "(m,) int64 aligned: the project's tasks not started "
                        "yet (>= 1 for every candidate)", K.Aligned(ints=True, low=0.0),
                        K.aligned(lambda v: v.state.remaining())),
            F.ParamSpec("t_now", "float", "the current event time", F.Real(0.0), lambda v: np.array(float(v.state.t))),
        ),
    ),
    "B": F.RoleSpec(
        "select_next_B", "task selection: which schedulable task of the chosen project starts",
        (
            F.ParamSpec("project_id", "int", "the project A chose (-1 when B is not deciding)", K.Index(),
                        K.index(lambda v: int(v.state.project))),
            F.ParamSpec("task_ids", "np.ndarray", "(m,) int64 schedulable tasks (0..N-1) of that project, ascending",
                        K.Ids(), K.ids),
            F.ParamSpec("durations", "np.ndarray", "(m,) float64 aligned: nominal duration a_i (the effective "
                        "duration is a_i / (0.7 + 0.15 s) for a worker of level s)", K.Aligned(low=0.0),
                        K.aligned(lambda v: v.instance.duration)),
            F.ParamSpec("successor_counts", "np.ndarray", "(m,) int64 aligned: number of direct successors of the "
                        "task (its chain successor and the extra precedence arcs)", K.Aligned(ints=True, low=0.0),
                        K.aligned(lambda v: v.state.successors)),
        ),
    ),
    "C": F.RoleSpec(
        "select_next_C", "worker assignment: which free qualified worker performs the chosen task",
        (
            F.ParamSpec("task_id", "int", "the task B chose (-1 when C is not deciding)", K.Index(),
                        K.index(lambda v: int(v.state.task))),
            F.ParamSpec("worker_ids", "np.ndarray", "(m,) int64 free workers (0..W-1) qualified for the task's "
                        "skill, ascending", K.Ids(), K.ids),
            F.ParamSpec("skill_levels", "np.ndarray", "(m,) int64 aligned: the worker's level s in the task's "
                        "skill (1..3); effective duration a_i / (0.7 + 0.15 s)", K.Aligned(ints=True, low=0.0),
                        K.aligned(lambda v: v.instance.level[:, v.instance.skill[_task(v)]])),
            F.ParamSpec("worker_costs", "np.ndarray", "(m,) float64 aligned: the worker's cost rate kappa_w (labor "
                        "cost kappa_w * effective duration)", K.Aligned(low=0.0), K.aligned(lambda v: v.instance.cost)),
        ),
    ),
}

RETURNS = {
    "A": "a project id from project_ids (-1 is not allowed). Any other answer is repaired to the candidate with the "
         "earliest due date (and counted)",
    "B": "a task id from task_ids (-1 is not allowed). Any other answer is repaired to the candidate with the shortest "
         "nominal duration (and counted)",
    "C": "a worker id from worker_ids (-1 is not allowed). Any other answer is repaired to the candidate with the "
         "shortest effective duration, i.e. the highest skill level (and counted)",
}


class MRCPSProblem(K.ConstructiveProblem, instance=generator.MRCPSInstance, simulator=simulator):
    roles = {"paper": PAPER}
    minimize = True
    returns_doc = RETURNS
    reference_text = {
        "A": "the project with the earliest due date",
        "B": "the shortest schedulable task",
        "C": "the most skilled free qualified worker",
    }

    def id_space(self, role: str, instance: Any) -> int:
        return {"A": instance.n_projects, "B": instance.n_tasks, "C": instance.n_workers}[role]

    def reference(self, role: str, obs: Mapping[str, Any]) -> int:
        ids = np.flatnonzero(np.asarray(obs["action_mask"])[1:])
        if not ids.size:
            return K.SKIP
        key = {"A": ("due_dates", 1.0), "B": ("durations", 1.0), "C": ("skill_levels", -1.0)}[role]
        values = key[1] * np.asarray(obs[key[0]]["value"])[ids]
        return int(ids[np.argmin(values)])
