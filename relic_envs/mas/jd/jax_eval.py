"""MAS-JD in JAX: the functional twin of ``simulator.py`` + ``roles.py`` (both interfaces).

Use through :func:`relic_envs.mas.jax_eval.evaluate` or
``relic_envs.mas.jax_eval.evaluator("mas_jd", policies)``. Durations, qualification and
the horizon come from ``simulator.py`` itself (``_jax_dispatch.stack``).
"""

from __future__ import annotations

import numpy as np

from relic_envs.mas import _jax_alt as alt
from relic_envs.mas import _jax_dispatch as jd
from relic_envs.mas._jax_dispatch import jnp
from relic_envs.mas.jd.roles import JDProblem


def _features(v: jd.View):
    d = v.data
    return jnp.stack([d["proc"], d["due"], d["weight"]], axis=1)


POOL = jd.pool_dict(_features)

PAPER = {
    "A": {"my_busy_until": jd.my_busy_until, "t_now": jd.t_now, "job_pool": POOL, "p_mine": lambda v: v.load[v.k]},
    "B": {"my_busy_until": jd.my_busy_until, "teammate_busy_until": jd.teammate_busy, "job_pool": POOL,
          "t_now": jd.t_now},
    "C": {"busy_vector": jd.busy_vector, "job_ids": lambda v: v.pool.astype(jnp.int8), "job_features": POOL,
          "t_now": jd.t_now},
}


def _slack_rows(v: jd.View):
    d = v.data
    return jnp.stack([d["due"] - (v.t + d["proc"]), d["proc"], d["weight"]], axis=1)


def _table(v: jd.View):
    d = v.data
    machine, completion = alt.machine_and_completion(v)
    return jnp.stack([d["proc"], d["due"], d["weight"], machine, completion, v.pool.astype(v.t.dtype)], axis=1)


ALT = alt.alt_roles(_slack_rows, lambda v: v.data["weight"], ("rival_finish", alt.rival_finish), _table)


class JDJax(jd.JaxDispatchProblem):
    numpy_problem = JDProblem()
    roles = {"paper": PAPER, "alt": ALT}

    def arrays(self, instance):
        return {k: np.asarray(getattr(instance, k), np.float64) for k in ("proc", "due", "weight")}

    def objective(self, data, completion):
        # Weighted tardiness of the completed jobs (nan = not dispatched).
        done = ~jnp.isnan(completion)
        tardy = jnp.maximum(0.0, completion - data["due"])
        return jnp.sum(jnp.where(done, data["weight"] * tardy, 0.0))


PROBLEM = JDJax()
