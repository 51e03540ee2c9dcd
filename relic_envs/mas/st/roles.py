"""MAS-ST roles: the paper's signatures (Appendix B.2).

Each role owns one worker (A: worker 0, B: 1, C: 2). A sees its own skill vector and
availability; B its own state and the teammates' states as dicts; C the whole skill
matrix, busy vector and a dense task-feature matrix with rows ``(j, c_j, p_j, v_j,
d_j)``. A and B get the pool as ``{j: (c_j, p_j, v_j, d_j)}`` (``c_j`` an int, ``p_j``
the nominal duration: the worker's time is ``p_j / s_{k c_j}``). The pool is the
released tasks no worker has taken yet and this worker is qualified for (every
generated worker is qualified for every task).
"""

from __future__ import annotations

import numpy as np

from relic_envs.mapp import _fields as F
from relic_envs.mas import _codecs as M
from relic_envs.mas import _dispatch as D
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
    return _state(v.k, v)


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
            F.ParamSpec("my_state", "dict", "{'skills': np.ndarray (3,) skill per category, 'busy_until': float}",
                        F.Record(STATE_FIELDS), _my_state),
            F.ParamSpec("teammate_states", "list", "[dict, dict]: the same dict for the two other workers, in role order "
                        "(A, B, C without this one)", M.RecordList(2, STATE_FIELDS), _teammate_states),
            TASK_POOL, T_NOW,
        ),
    ),
    "C": F.RoleSpec(
        "select_next_C", "global worker: the skill and availability matrices of the whole team",
        (
            F.ParamSpec("skill_matrix", "np.ndarray", "(3, 3) skills[worker, category]; this role's worker is row 2",
                        M.SquareMatrix(3, 0.0, 1.0), lambda v: v.instance.skills.astype(np.float64).copy()),
            F.ParamSpec("busy_vector", "np.ndarray", "(3,) busy-until time of workers A, B, C; this role's worker is entry 2",
                        M.Vector(3, 0.0), D.busy_vector),
            F.ParamSpec("task_features", "np.ndarray", "(m, 5) float64 rows (j, c_j, p_j, v_j, d_j) of the m tasks in the "
                        "pool, ascending j (j and c_j are integral floats)", M.PoolRows(5), _rows),
            T_NOW,
        ),
    ),
}


class STProblem(D.DispatchProblem):
    name = "mas_st"
    instance_type = generator.STInstance
    roles = {"paper": PAPER}
    generator = generator
    simulator = simulator
    stages = 1
    must_finish = False
    minimize = False
