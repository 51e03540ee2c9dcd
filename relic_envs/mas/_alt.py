"""The alternative A/B/C interface of the scheduling family (``interface="alt"``).

The paper evaluates MAS-JD, MAS-ST and MAS-FS under a second set of role interfaces
(Table tab:alternative-interface) and names the roles, A a deadline sentinel ("prioritize
low slack"), B a value harvester ("high value, low contention"), C a system regulator
("coverage/load/utilization"), without printing their signatures. As in the routing
family (``relic_envs.mapp._alt``), each role still controls its own resource (A machine
/ worker / stage 1, B the second, C the third) and chooses from its own pool; what
changes is the information scope, each role seeing the data of its concern:

- **A, deadline sentinel**: ``select_next_A(candidates: dict, t_now: float)``. Only its
  pool, each job with its *slack*: the time to spare if this resource started it now
  (``d_j - (t_now + own duration)``, negative = late whatever happens). MAS-FS has no
  due dates: there the urgency is the delay the job has already accumulated in this
  buffer (``waited``, each unit of it costs ``w_j``). No teammates, no load.
- **B, value harvester**: ``select_next_B(values, my_finish, <contention>, t_now)``,
  dense ``(N,)`` vectors over every job id (zero / ``inf`` outside its pool): what a job
  is worth, when this resource would finish it, and how contested it is (MAS-JD/ST:
  the earliest finish a teammate could offer, ``rival_finish``; MAS-FS: the wait the
  job would meet at the next stage, ``downstream_wait``). No due dates in MAS-JD/FS
  (MAS-ST values count only tasks still attainable on time).
- **C, system regulator**: ``select_next_C(team_state: dict, job_table: np.ndarray,
  t_now: float)``. The team's busy-until, load, utilisation and backlog per resource
  and the coverage of the released jobs, plus a table of every released job with its
  state and an ``available`` flag for this role's pool.

A benchmark plugs in its candidate columns, job values, contention and table columns;
the team state and the dense vectors are defined here once.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from relic_envs.core import codecs as F
from relic_envs.core.benchmark import ROLES
from relic_envs.mas import _codecs as M
from relic_envs.mas import _dispatch as D

NONE = np.inf  # my_finish / rival_finish of a job outside the pool


def own_time(v: D.View) -> np.ndarray:
    """``(N,)`` this resource's duration of each job's operation at its stage."""
    return v.durations[v.k, :, v.stage(v.k)]


def my_finish(v: D.View) -> np.ndarray:
    """``(N,)`` when this resource would finish each job of its pool, starting as soon as it is free."""
    return np.where(v.pool, max(float(v.busy[v.k]), v.t) + own_time(v), NONE)


def rival_finish(v: D.View) -> np.ndarray:
    """``(N,)`` the earliest finish a teammate could offer each job of this role's pool
    (starting when it is free, at its own speed; ``inf`` outside the pool or when no
    teammate is qualified)."""
    best = np.full(v.instance.n_jobs, NONE)
    for j in v.teammates:
        finish = np.maximum(v.busy[j], v.t) + v.durations[j, :, v.stage(j)]
        best = np.minimum(best, np.where(v.pools[j], finish, NONE))  # the pool is shared: pools[j] = qualified
    return np.where(v.pool, best, NONE)


def downstream_wait(v: D.View) -> np.ndarray:
    """``(N,)`` MAS-FS: how long each job of this stage's buffer would wait at the next
    stage if started now, behind the next stage's current job and its whole buffer
    (0 at the last stage and outside the pool)."""
    s = v.stage(v.k)
    if s + 1 >= v.machine.shape[1]:
        return np.zeros(v.instance.n_jobs)
    nxt = s + 1
    ahead = max(0.0, float(v.busy[nxt] - v.t)) + float(v.durations[nxt, v.pools[nxt], nxt].sum())
    return np.where(v.pool, np.maximum(0.0, ahead - own_time(v)), 0.0)


def team_state(v: D.View) -> dict:
    """The system regulator's view of the three resources (see ``TEAM_DOC``)."""
    elapsed = v.t - float(v.instance.release[0])
    running = np.maximum(0.0, v.busy - v.t)  # the part of the current operation still to come
    util = np.clip((v.load - running) / elapsed, 0.0, 1.0) if elapsed > 0 else np.zeros(len(ROLES))
    backlog = np.array([v.durations[k, v.pools[k], v.stage(k)].sum() for k in range(len(ROLES))])
    released = int(v.released.sum())
    covered = int(((v.machine[:, -1] >= 0) & v.released).sum())
    return {
        "busy_until": v.busy.astype(np.float64).copy(),
        "load": v.load.astype(np.float64).copy(),
        "utilisation": util.astype(np.float64),
        "backlog": backlog.astype(np.float64),
        "coverage": np.array(covered / released if released else 0.0),
    }


TEAM_DOC = (
    "{'busy_until': list[float] (resources A, B, C; this role's is entry 2), 'load': list[float] (total duration "
    "dispatched to each resource so far), 'utilisation': list[float] (share of the time since the first release each "
    "resource has been working, in [0, 1]), 'backlog': list[float] (total duration, at that resource's own speed, of "
    "the jobs waiting in each resource's pool), 'coverage': float (share of the released jobs whose last operation has "
    "been dispatched)}"
)
TEAM_STATE = F.ParamSpec(
    "team_state", "dict", TEAM_DOC,
    F.Record({
        "busy_until": F.FloatList(3), "load": F.FloatList(3), "utilisation": F.FloatList(3),
        "backlog": F.FloatList(3), "coverage": M.Scalar(0.0, 1.0),
    }),
    team_state,
)
T_NOW = F.ParamSpec("t_now", "float", "the current time (the decision epoch)", M.Scalar(0.0), D.t_now)


def released_rows(columns: Callable[[D.View], np.ndarray]):
    """Getter of a table of the released jobs (ids ``0..m-1``: ids follow release order)."""

    def get(v: D.View):
        return {"mask": v.released.astype(np.int8), "value": np.asarray(columns(v), dtype=np.float64)}

    return get


def alt_roles(
    *,
    unit: str,
    candidates: tuple[str, int, Callable[[D.View], np.ndarray]],
    values: tuple[str, Callable[[D.View], np.ndarray]],
    contention: F.ParamSpec,
    table: tuple[str, int, Callable[[D.View], np.ndarray]],
) -> dict[str, F.RoleSpec]:
    """The alt-interface role table of one scheduling benchmark.

    ``unit`` names the resource ("machine", "worker", "stage"); ``candidates`` is
    ``(doc, width, columns)`` of A's ``{job: (...)}`` dict, ``columns(view)`` an
    ``(N, width)`` array; ``values`` is ``(doc, per-job value (N,))`` for B (zeroed outside
    the pool here); ``contention`` B's third parameter; ``table`` is ``(doc, width,
    columns)`` of C's job table over the released jobs.
    """
    cand_doc, cand_width, cand_cols = candidates
    value_doc, value_of = values
    table_doc, table_width, table_cols = table

    def dense_values(v: D.View):
        return np.where(v.pool, np.asarray(value_of(v), dtype=np.float64), 0.0)

    return {
        "A": F.RoleSpec(
            "select_next_A",
            f"deadline sentinel: its {unit}'s pool with each job's slack; serve what is about to be late first",
            (
                F.ParamSpec("candidates", "dict", cand_doc, F.SparseDict(cand_width), D.pool_dict(cand_cols)),
                T_NOW,
            ),
        ),
        "B": F.RoleSpec(
            "select_next_B",
            f"value harvester: high value per unit of its {unit}'s time, low contention",
            (
                F.ParamSpec("values", "np.ndarray", f"(N,) per job id: {value_doc}; 0 for jobs outside this role's pool",
                            F.NodeVector(0.0), dense_values),
                F.ParamSpec("my_finish", "np.ndarray", f"(N,) per job id: the time this {unit} would finish the job, "
                            "starting it as soon as it is free (now, when it is asked); inf outside this role's pool", F.NodeVector(0.0), my_finish),
                contention,
                T_NOW,
            ),
        ),
        "C": F.RoleSpec(
            "select_next_C",
            "system regulator: balance coverage, load and utilisation across the team",
            (
                TEAM_STATE,
                F.ParamSpec("job_table", "np.ndarray", table_doc, M.PoolRows(table_width), released_rows(table_cols)),
                T_NOW,
            ),
        ),
    }


def machine_and_completion(v: D.View) -> tuple[np.ndarray, np.ndarray]:
    """``(N,)`` resource that runs / ran each job's last operation and its completion (-1 if not dispatched)."""
    machine = v.machine[:, -1].astype(np.float64)
    completion = np.where(v.machine[:, -1] >= 0, np.nan_to_num(v.end[:, -1], nan=-1.0), -1.0)
    return machine, completion
