"""MAS-FS roles: the paper's signatures (Appendix B.2) and the alternative interface.

Roles are fixed to stages: A dispatches stage 1, B stage 2, C stage 3. Each buffer is
``{job: (p_here, w)}``: the jobs waiting at that stage (released, or done upstream) with
their processing time there and their weight. A also gets ``dummy``, the paper's fixed
placeholder (always 0.0); B the stage-1 machine's busy-until time and the number of
jobs waiting at stage 3; C the three busy-until times and a table of the released jobs.
The alternative interface (``relic_envs.mas._alt``): A (stage 1) sees its buffer with
the delay each job has accumulated there, B (stage 2) dense weights, its finish times
and the wait each job would meet at stage 3, C (stage 3) the team state and the job
table with each waiting job's delay.
"""

from __future__ import annotations

import numpy as np

from relic_envs.core import codecs as F
from relic_envs.mas import _codecs as M
from relic_envs.mas import _dispatch as D
from relic_envs.mas._alt import alt_roles, downstream_wait
from relic_envs.mas.fs import generator, simulator

DUMMY = 0.0


def _buffer_columns(v: D.View) -> np.ndarray:
    return np.stack([v.instance.proc[:, v.k], v.instance.weight], axis=1)


def _job_table(v: D.View):
    """Rows ``(stage_current, remaining_1, remaining_2, remaining_3, w)`` of the released jobs."""
    completed = (v.machine >= 0) & (np.nan_to_num(v.end, nan=np.inf) <= v.t)  # (N, 3)
    stage = completed.sum(axis=1).astype(np.float64)  # 0..2 = stage it waits at or runs in, 3 = finished
    started = v.machine >= 0
    left = np.where(started, np.maximum(0.0, np.nan_to_num(v.end, nan=0.0) - v.t), v.instance.proc)
    rows = np.concatenate([stage[:, None], left, v.instance.weight[:, None]], axis=1)
    return {"mask": v.released.astype(np.int8), "value": rows}


MY_BUFFER = F.ParamSpec(
    "my_buffer", "dict", "{job_id: (p_here, w)}: the jobs waiting at this role's stage (released, or finished at the "
    "previous stage, and not yet dispatched here), with their processing time at this stage and their weight",
    F.SparseDict(2), D.pool_dict(_buffer_columns),
)
MY_BUSY = F.ParamSpec("my_busy_until", "float", "time at which this stage's machine is free (== t_now when it is asked "
                      "to choose)", M.Scalar(0.0), D.my_busy_until)
T_NOW = F.ParamSpec("t_now", "float", "the current time (the decision epoch)", M.Scalar(0.0), D.t_now)

PAPER = {
    "A": F.RoleSpec(
        "select_next_A", "first stage: dispatches arriving jobs from local timing information",
        (
            MY_BUFFER, MY_BUSY, T_NOW,
            F.ParamSpec("dummy", "float", "fixed compatibility placeholder, always 0.0", M.Scalar(DUMMY, DUMMY),
                        lambda v: np.array(DUMMY)),
        ),
    ),
    "B": F.RoleSpec(
        "select_next_B", "middle stage: also sees upstream occupancy and downstream congestion",
        (
            MY_BUFFER,
            F.ParamSpec("upstream_busy", "float", "busy-until time of the stage-1 machine (A); > my_busy_until means it "
                        "is still working", M.Scalar(0.0), lambda v: np.array(v.busy[0], dtype=np.float64)),
            F.ParamSpec("downstream_buf_size", "int", "number of jobs waiting in the stage-3 buffer (C)", M.Count(),
                        lambda v: np.int64(v.pools[2].sum())),
            MY_BUSY,
        ),
    ),
    "C": F.RoleSpec(
        "select_next_C", "final stage: the full pipeline state and a global job table",
        (
            MY_BUFFER,
            F.ParamSpec("pipeline_state", "np.ndarray", "(3,) busy-until time of the stage-1, 2, 3 machines (a free machine's is its last "
                        "completion time, <= t_now)",
                        M.Vector(3, 0.0), D.busy_vector),
            F.ParamSpec(
                "job_table", "np.ndarray", "(m, 5) float64, one row per released job in id order: (stage_current, "
                "remaining_1, remaining_2, remaining_3, w); stage_current = 0, 1, 2 for the stage the job waits at or "
                "runs in, 3 once finished; remaining_s = processing time still to do at stage s (p_js before it starts, "
                "the rest while it runs, 0 after)", M.PoolRows(5), _job_table,
            ),
            T_NOW,
        ),
    ),
}




def _waited(v: D.View) -> np.ndarray:
    """``(N,)`` for each job waiting in some buffer: how long it has waited there (else 0)."""
    out = np.zeros(v.instance.n_jobs)
    for s in range(3):
        ready = v.ready_time(s)
        waiting = (v.machine[:, s] < 0) & (ready <= v.t)
        out[waiting] = v.t - ready[waiting]
    return out


def _candidate_rows(v: D.View) -> np.ndarray:
    proc, s = v.instance.proc, v.k
    return np.stack([_waited(v), proc[:, s], proc[:, s + 1:].sum(axis=1), v.instance.weight], axis=1)


def _alt_table(v: D.View) -> np.ndarray:
    rows = _job_table(v)["value"]  # (stage_current, remaining_1, remaining_2, remaining_3, w)
    return np.column_stack([rows, _waited(v), v.pool.astype(np.float64)])


ALT = alt_roles(
    unit="stage",
    candidates=(
        "{job_id: (waited, p_here, p_rest, w_j)} over the jobs waiting in this stage's buffer; MAS-FS has no due dates, "
        "so the urgency is waited = t_now - the time the job became ready here (its release at stage 1), the delay it "
        "has already accumulated (each unit of delay costs w_j); p_here its processing time at this stage; p_rest its "
        "processing time at the later stages; w_j its weight", 4, _candidate_rows,
    ),
    values=("w_j, the job's weight (its cost per unit of completion time)", lambda v: v.instance.weight),
    contention=F.ParamSpec(
        "downstream_wait", "np.ndarray", "(N,) per job id: how long the job would wait at the next stage if this stage "
        "started it now, queued behind the next stage's current job and everything in its buffer (0 outside this "
        "role's pool)", F.NodeVector(0.0), downstream_wait,
    ),
    table=(
        "(m, 7) float64, one row per released job in id order: (stage_current, remaining_1, remaining_2, remaining_3, "
        "w, waited, available); stage_current = 0, 1, 2 for the stage the job waits at or runs in, 3 once finished; "
        "remaining_s = processing time still to do at stage s (p_js before it starts, the rest while it runs, 0 "
        "after); waited = how long it has been waiting in its current buffer (0 while running or finished); "
        "available = 1.0 if it waits in this stage's (stage 3) buffer", 7, _alt_table,
    ),
)


class FSProblem(D.DispatchProblem, instance=generator.FSInstance, simulator=simulator):
    roles = {"paper": PAPER, "alt": ALT}
    stages = 3
    must_finish = True
    minimize = True
