"""MAS-FS in JAX: the functional twin of ``simulator.py`` + ``roles.py`` (both interfaces).

Use through :func:`relic_envs.mas.jax_eval.evaluate` or
``relic_envs.mas.jax_eval.evaluator("mas_fs", policies)``. Durations, qualification and
the horizon come from ``simulator.py`` itself (``_jax_dispatch.stack``).
"""

from __future__ import annotations

import numpy as np

from relic_envs.mas import _jax_alt as alt
from relic_envs.mas import _jax_dispatch as jd
from relic_envs.mas._jax_dispatch import jnp
from relic_envs.mas.fs.roles import DUMMY, FSProblem


def _buffer(v: jd.View):
    return jnp.stack([v.data["proc"][:, v.k], v.data["weight"]], axis=1)


def _job_table(v: jd.View):
    """Rows ``(stage_current, remaining_1, remaining_2, remaining_3, w)`` (twin of ``roles._job_table``)."""
    completed = (v.machine >= 0) & (jnp.nan_to_num(v.end, nan=jnp.inf) <= v.t)
    stage = completed.sum(axis=1).astype(v.t.dtype)
    left = jnp.where(v.machine >= 0, jnp.maximum(0.0, jnp.nan_to_num(v.end, nan=0.0) - v.t), v.data["proc"])
    rows = jnp.concatenate([stage[:, None], left, v.data["weight"][:, None]], axis=1)
    return {"mask": v.released.astype(jnp.int8), "value": rows}


BUFFER = jd.pool_dict(_buffer)

PAPER = {
    "A": {"my_buffer": BUFFER, "my_busy_until": jd.my_busy_until, "t_now": jd.t_now,
          "dummy": lambda v: jnp.asarray(DUMMY, v.t.dtype)},
    "B": {"my_buffer": BUFFER, "upstream_busy": lambda v: v.busy[0],
          "downstream_buf_size": lambda v: v.pools[2].sum(), "my_busy_until": jd.my_busy_until},
    "C": {"my_buffer": BUFFER, "pipeline_state": jd.busy_vector, "job_table": _job_table, "t_now": jd.t_now},
}


def _waited(v: jd.View):
    """``(N,)`` for each job waiting in some buffer: how long it has waited there (else 0).

    A job waits at stage ``s`` once ready for it (``ready_times``, the pools' own rule:
    every stage machine is qualified for every job in MAS-FS) and until dispatched there."""
    ready = jd.ready_times(PROBLEM, v.data, v.machine, v.end)  # (3, N), inf while not ready or once dispatched
    out = jnp.zeros(v.machine.shape[0], v.t.dtype)
    for s in range(3):
        out = jnp.where(ready[s] <= v.t, v.t - ready[s], out)
    return out


def _candidate_rows(v: jd.View):
    proc, s = v.data["proc"], v.k
    rest = proc[:, s + 1:].sum(axis=1) if s + 1 < proc.shape[1] else jnp.zeros(proc.shape[0], proc.dtype)
    return jnp.stack([_waited(v), proc[:, s], rest, v.data["weight"]], axis=1)


def _alt_table(v: jd.View):
    rows = _job_table(v)["value"]
    return jnp.concatenate([rows, _waited(v)[:, None], v.pool.astype(v.t.dtype)[:, None]], axis=1)


ALT = alt.alt_roles(_candidate_rows, lambda v: v.data["weight"], ("downstream_wait", alt.downstream_wait),
                    _alt_table)


class FSJax(jd.JaxDispatchProblem):
    numpy_problem = FSProblem()
    roles = {"paper": PAPER, "alt": ALT}

    def arrays(self, instance):
        return {"proc": np.asarray(instance.proc, np.float64), "weight": np.asarray(instance.weight, np.float64)}

    def objective(self, data, completion):
        # Weighted completion time of the jobs whose last stage completed.
        return jnp.sum(jnp.where(jnp.isnan(completion), 0.0, data["weight"] * completion))


PROBLEM = FSJax()
