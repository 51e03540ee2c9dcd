"""MAS-JD roles: the paper's signatures (Appendix B.2) and the alternative interface.

Each role owns one of the three identical machines (A: machine 0, B: 1, C: 2). A sees
its own availability, the pool ``{job: (p_j, d_j, w_j)}`` and ``p_mine``; B also the two
teammates' busy-until times; C the whole busy vector and the pool as dense arrays
(``job_ids`` and ``job_features`` with columns ``(p_j, d_j, w_j)``, rows in id order).
The pool is the released jobs no machine has taken yet. The alternative interface
(``relic_envs.mas._alt``): A sees its pool with each job's slack, B dense weights,
finish times and the earliest finish a teammate could offer, C the team state and a
table of the released jobs.
"""

from __future__ import annotations

import numpy as np

from relic_envs.core import codecs as F
from relic_envs.mas import _codecs as M
from relic_envs.mas import _dispatch as D
from relic_envs.mas._alt import alt_roles, machine_and_completion, rival_finish
from relic_envs.mas.jd import generator, simulator


def _features(v: D.View) -> np.ndarray:
    inst = v.instance
    return np.stack([inst.proc, inst.due, inst.weight], axis=1)


def _load(v: D.View):
    return np.array(v.load[v.k], dtype=np.float64)


def _pool_rows(v: D.View):
    return {"mask": v.pool.astype(np.int8), "value": _features(v)}


MY_BUSY = F.ParamSpec("my_busy_until", "float", "time at which this machine is free (== t_now when it is asked to choose)",
                      M.Scalar(0.0), D.my_busy_until)
T_NOW = F.ParamSpec("t_now", "float", "the current time (the decision epoch)", M.Scalar(0.0), D.t_now)
JOB_POOL = F.ParamSpec(
    "job_pool", "dict", "{job_id: (p_j, d_j, w_j)}: processing time, due date and weight of every released job "
    "no machine has taken yet (ids ascending = release order)", F.SparseDict(3), D.pool_dict(_features),
)

PAPER = {
    "A": F.RoleSpec(
        "select_next_A", "local dispatcher: own availability and the job pool",
        (
            MY_BUSY, T_NOW, JOB_POOL,
            F.ParamSpec("p_mine", "float", "total processing time dispatched to this machine so far (its load; 0.0 at first)",
                        M.Scalar(0.0), _load),
        ),
    ),
    "B": F.RoleSpec(
        "select_next_B", "team-aware dispatcher: also sees when the two teammate machines become free",
        (
            MY_BUSY,
            F.ParamSpec("teammate_busy_until", "list", "[float, float]: busy-until times of the two other machines, in role "
                        "order (A, B, C without this one); <= t_now means free (then it is that machine's last completion time)", F.FloatList(2), D.teammate_busy),
            JOB_POOL, T_NOW,
        ),
    ),
    "C": F.RoleSpec(
        "select_next_C", "global dispatcher: the full machine-busy vector and a dense job-feature matrix",
        (
            F.ParamSpec("busy_vector", "np.ndarray", "(3,) busy-until time of machines A, B, C (a free machine's is its last "
                        "completion time, <= t_now); this role's machine is entry 2",
                        M.Vector(3, 0.0), D.busy_vector),
            F.ParamSpec("job_ids", "np.ndarray", "(m,) int64 ids of the m jobs in the pool, ascending", M.PoolIds(),
                        lambda v: v.pool.astype(np.int8)),
            F.ParamSpec("job_features", "np.ndarray", "(m, 3) float64 rows (p_j, d_j, w_j) aligned with job_ids",
                        M.PoolRows(3), _pool_rows),
            T_NOW,
        ),
    ),
}




def _slack_rows(v: D.View) -> np.ndarray:
    inst = v.instance
    return np.stack([inst.due - (v.t + inst.proc), inst.proc, inst.weight], axis=1)


def _table(v: D.View) -> np.ndarray:
    inst = v.instance
    machine, completion = machine_and_completion(v)
    return np.stack([inst.proc, inst.due, inst.weight, machine, completion, v.pool.astype(np.float64)], axis=1)


ALT = alt_roles(
    unit="machine",
    candidates=(
        "{job_id: (slack, p_j, w_j)} over the jobs of the pool (released, not taken by any machine); slack = d_j - "
        "(t_now + p_j), the time to spare if this machine started the job now (negative: it will be late whatever "
        "happens); p_j processing time, w_j tardiness weight", 3, _slack_rows,
    ),
    values=("w_j, the job's tardiness weight (its cost per unit of lateness)", lambda v: v.instance.weight),
    contention=F.ParamSpec(
        "rival_finish", "np.ndarray", "(N,) per job id: the earliest time one of the two teammate machines could "
        "finish the job (once it is free, plus p_j; the machines are identical); inf outside this role's pool",
        F.NodeVector(0.0), rival_finish,
    ),
    table=(
        "(m, 6) float64, one row per released job in id order (ids follow release order): (p_j, d_j, w_j, machine, "
        "completion, available); machine = 0, 1, 2 (A, B, C) for the machine that runs or ran the job, -1 while it "
        "waits; completion = its completion time, -1 while it waits; available = 1.0 if this role may take it now",
        6, _table,
    ),
)


class JDProblem(D.DispatchProblem, instance=generator.JDInstance, simulator=simulator):
    roles = {"paper": PAPER, "alt": ALT}
    stages = 1
    must_finish = True
    minimize = True
