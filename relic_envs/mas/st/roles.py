"""MAS-ST roles: the paper's signatures (Appendix B.2) and the alternative interface.

Each role owns one worker (A: worker 0, B: 1, C: 2). A sees its own skill vector and
availability; B its own state and the teammates' states as dicts; C the whole skill
matrix, busy vector and a dense task-feature matrix with rows ``(j, c_j, p_j, v_j,
d_j)``. A and B get the pool as ``{j: (c_j, p_j, v_j, d_j)}`` (``c_j`` an int, ``p_j``
the nominal duration: the worker's time is ``p_j / s_{k c_j}``). The pool is the
released tasks no worker has taken yet and this worker is qualified for (every
generated worker is qualified for every task). The alternative interface
(``relic_envs.mas._alt``): A sees its pool with each task's slack at its own speed, B
dense attainable values, its finish times and the earliest finish a teammate could
offer, C the team state and a table of the released tasks with every worker's time.
"""

from __future__ import annotations

import numpy as np

from relic_envs.core import codecs as F
from relic_envs.mas import _codecs as M
from relic_envs.mas import _dispatch as D
from relic_envs.mas._alt import alt_roles, machine_and_completion, own_time, rival_finish
from relic_envs.mas.st import generator, simulator


def _features(v: D.View) -> np.ndarray:
    inst = v.instance
    return np.stack([inst.category.astype(np.float64), inst.duration, inst.value, inst.deadline], axis=1)


def _rows(v: D.View):
    ids = np.arange(v.instance.n_jobs, dtype=np.float64)[:, None]
    return {"mask": v.pool.astype(np.int8), "value": np.concatenate([ids, _features(v)], axis=1)}


def _state(k: int, v: D.View) -> dict:
    return {"skills": v.instance.skills[k].astype(np.float64).copy(), "busy_until": np.array(v.busy[k], dtype=np.float64)}


def _my_state(v: D.View):
    state = _state(v.k, v)
    state["busy_until"] = D.my_busy_until(v)  # own value: max(busy_until, t_now), as my_busy_until
    return state


def _teammate_states(v: D.View):
    states = [_state(j, v) for j in v.teammates]
    return {"skills": np.stack([s["skills"] for s in states]), "busy_until": np.array([s["busy_until"] for s in states])}


STATE_FIELDS = {"skills": M.Vector(3, 0.0, 1.0), "busy_until": M.Scalar(0.0)}
T_NOW = F.ParamSpec("t_now", "float", "the current time (the decision epoch)", M.Scalar(0.0), D.t_now)
TASK_POOL = F.ParamSpec(
    "task_pool", "dict", "{task_id: (c_j, p_j, v_j, d_j)}: skill category (int 0..2), nominal duration, value and "
    "deadline of every released task no worker has taken yet (ids ascending = release order); this worker needs "
    "p_j / skill[c_j]; a task finishing after d_j earns nothing but still occupies the worker",
    F.SparseDict(4, ints=(0,)), D.pool_dict(_features),
)

PAPER = {
    "A": F.RoleSpec(
        "select_next_A", "local worker: its own skills and availability",
        (
            F.ParamSpec("my_skills", "np.ndarray", "(3,) this worker's skill in categories 0, 1, 2 (in [0.1, 1.0])",
                        M.Vector(3, 0.0, 1.0), lambda v: v.instance.skills[v.k].astype(np.float64).copy()),
            F.ParamSpec("my_busy_until", "float", "time at which this worker is free (== t_now when it is asked to choose)",
                        M.Scalar(0.0), D.my_busy_until),
            TASK_POOL, T_NOW,
        ),
    ),
    "B": F.RoleSpec(
        "select_next_B", "team-aware worker: its own state plus its teammates' skills and availability",
        (
            F.ParamSpec("my_state", "dict", "{'skills': np.ndarray (3,) skill per category, 'busy_until': float (time this worker "
                        "is free, == t_now when it is asked to choose)}",
                        F.Record(STATE_FIELDS), _my_state),
            F.ParamSpec("teammate_states", "list", "[dict, dict]: the same dict for the two other workers, in role order "
                        "(A, B, C without this one); a free teammate's busy_until is its last completion time (<= t_now)", M.RecordList(2, STATE_FIELDS), _teammate_states),
            TASK_POOL, T_NOW,
        ),
    ),
    "C": F.RoleSpec(
        "select_next_C", "global worker: the skill and availability matrices of the whole team",
        (
            F.ParamSpec("skill_matrix", "np.ndarray", "(3, 3) skills[worker, category]; this role's worker is row 2",
                        M.SquareMatrix(3, 0.0, 1.0), lambda v: v.instance.skills.astype(np.float64).copy()),
            F.ParamSpec("busy_vector", "np.ndarray", "(3,) busy-until time of workers A, B, C (a free worker's is its last completion "
                        "time, <= t_now); this role's worker is entry 2",
                        M.Vector(3, 0.0), D.busy_vector),
            F.ParamSpec("task_features", "np.ndarray", "(m, 5) float64 rows (j, c_j, p_j, v_j, d_j) of the m tasks in the "
                        "pool, ascending j (j and c_j are integral floats)", M.PoolRows(5), _rows),
            T_NOW,
        ),
    ),
}




def _slack_rows(v: D.View) -> np.ndarray:
    inst, mine = v.instance, own_time(v)
    return np.stack([inst.deadline - (v.t + mine), mine, inst.value], axis=1)


def _attainable(v: D.View) -> np.ndarray:
    inst = v.instance
    return np.where(v.t + own_time(v) <= inst.deadline, inst.value, 0.0)


def _table(v: D.View) -> np.ndarray:
    inst = v.instance
    worker, completion = machine_and_completion(v)
    times = v.durations[:, :, 0].T  # (N, 3) each worker's time
    cols = [inst.category.astype(np.float64), inst.value, inst.deadline]
    return np.column_stack([*cols, times, worker, completion, v.pool.astype(np.float64)])


ALT = alt_roles(
    unit="worker",
    candidates=(
        "{task_id: (slack, p_eff, v_j)} over the tasks of the pool (released, not taken by any worker); p_eff = "
        "p_j / skill of this worker in the task's category, the time it would take; slack = d_j - (t_now + p_eff), "
        "the time to spare if this worker started it now (negative: it would finish late and earn nothing, while "
        "still occupying the worker); v_j its value", 3, _slack_rows,
    ),
    values=(
        "v_j if this worker could still finish the task by its deadline starting now (t_now + p_eff <= d_j), else 0 "
        "(a late task earns nothing)", _attainable,
    ),
    contention=F.ParamSpec(
        "rival_finish", "np.ndarray", "(N,) per task id: the earliest time one of the two teammates could finish the "
        "task (once it is free, at its own skill); inf outside this role's pool", F.NodeVector(0.0), rival_finish,
    ),
    table=(
        "(m, 9) float64, one row per released task in id order (ids follow release order): (c_j, v_j, d_j, time_A, "
        "time_B, time_C, worker, completion, available); c_j the category (integral float); time_k = p_j / skill of "
        "worker k (A, B, C; this role's worker is C) in c_j; worker = 0, 1, 2 for the worker that runs or ran it, -1 "
        "while it waits; completion = its completion time, -1 while it waits; available = 1.0 if this role may take "
        "it now", 9, _table,
    ),
)


class STProblem(D.DispatchProblem, instance=generator.STInstance, simulator=simulator):
    roles = {"paper": PAPER, "alt": ALT}
    stages = 1
    must_finish = False
    minimize = False
