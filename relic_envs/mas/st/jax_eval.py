"""MAS-ST in JAX: the functional twin of ``simulator.py`` + ``roles.py`` (both interfaces).

Use through :func:`relic_envs.mas.jax_eval.evaluate` or
``relic_envs.mas.jax_eval.evaluator("mas_st", policies)``. The skill-adjusted durations,
qualification and horizon come from ``simulator.py`` itself (``_jax_dispatch.stack``).
"""

from __future__ import annotations

import numpy as np

from relic_envs.mas import _jax_alt as alt
from relic_envs.mas import _jax_dispatch as jd
from relic_envs.mas._jax_dispatch import jnp
from relic_envs.mas.st.roles import STProblem


def _features(v: jd.View):
    d = v.data
    return jnp.stack([d["category"], d["duration"], d["value"], d["deadline"]], axis=1)


def _rows(v: jd.View):
    ids = jnp.arange(v.data["release"].shape[0], dtype=v.data["release"].dtype)
    return jnp.concatenate([ids[:, None], _features(v)], axis=1)


def _state(v: jd.View, k: int) -> dict:
    return {"skills": v.data["skills"][k], "busy_until": v.busy[k]}


def _teammate_states(v: jd.View) -> dict:
    mates = jnp.array(v.teammates)
    return {"skills": v.data["skills"][mates], "busy_until": v.busy[mates]}


POOL = jd.pool_dict(_features)

PAPER = {
    "A": {"my_skills": lambda v: v.data["skills"][v.k], "my_busy_until": jd.my_busy_until, "task_pool": POOL,
          "t_now": jd.t_now},
    "B": {"my_state": lambda v: {**_state(v, v.k), "busy_until": jd.my_busy_until(v)}, "teammate_states": _teammate_states, "task_pool": POOL,
          "t_now": jd.t_now},
    "C": {"skill_matrix": lambda v: v.data["skills"], "busy_vector": jd.busy_vector,
          "task_features": jd.pool_dict(_rows), "t_now": jd.t_now},
}


def _slack_rows(v: jd.View):
    d, mine = v.data, alt.own_time(v)
    return jnp.stack([d["deadline"] - (v.t + mine), mine, d["value"]], axis=1)


def _attainable(v: jd.View):
    return jnp.where(v.t + alt.own_time(v) <= v.data["deadline"], v.data["value"], 0.0)


def _table(v: jd.View):
    d = v.data
    worker, completion = alt.machine_and_completion(v)
    times = d["dur"][:, :, 0].T  # (N, 3) each worker's time
    return jnp.concatenate([jnp.stack([d["category"], d["value"], d["deadline"]], axis=1), times,
                            jnp.stack([worker, completion, v.pool.astype(v.t.dtype)], axis=1)], axis=1)


ALT = alt.alt_roles(_slack_rows, _attainable, ("rival_finish", alt.rival_finish), _table)


class STJax(jd.JaxDispatchProblem):
    numpy_problem = STProblem()
    # Episodes of 21 epochs on average, 32 at most: 7.9e5 -> 9.0e5 instance-steps/s at
    # batch 1024 (MAS-JD runs 50 each and MAS-FS 137 of at most 148: no gain there;
    # benchmarks/jax_throughput.py --env NAME, figures in benchmarks/RESULTS.md).
    shrink_stages = 3
    roles = {"paper": PAPER, "alt": ALT}

    def arrays(self, instance):
        out = {k: np.asarray(getattr(instance, k), np.float64) for k in ("duration", "value", "deadline", "skills")}
        out["category"] = np.asarray(instance.category, np.float64)  # the observations carry it as a float column
        return out

    def objective(self, data, completion):
        # Value of the tasks completed by their deadlines (nan compares False: never dispatched).
        return jnp.sum(jnp.where(completion <= data["deadline"], data["value"], 0.0))


PROBLEM = STJax()
