"""MAPP-PC in JAX: the functional twin of ``simulator.py`` + ``roles.py`` (paper interface).

Use through :func:`relic_envs.mapp.jax_eval.evaluate` or
``relic_envs.mapp.jax_eval.evaluator("mapp_pc", policies)``.
"""

from __future__ import annotations

import numpy as np

from relic_envs.mapp import _jax_routing as jr
from relic_envs.mapp._jax_routing import jnp


class PCJax(jr.JaxRoutingProblem):
    name = "mapp_pc"
    roles = {"paper": jr.paper_roles("unvisited_prizes", "open", ("prize",), {"remaining_prizes": "prize"})}

    def arrays(self, instance, dist):
        return {"prizes": np.asarray(instance.prizes, np.float64)}

    def init_dynamic(self, data):
        return {"remaining": data["prizes"], "reached": jnp.zeros(data["prizes"].shape, bool)}

    def arrive(self, data, dyn, node, t):
        # Collect once: a later arrival (even in the same epoch) finds the prize at 0.
        return {"remaining": dyn["remaining"].at[node].set(0.0), "reached": dyn["reached"].at[node].set(True)}

    def objective(self, data, dyn):
        return jnp.sum(jnp.where(dyn["reached"], data["prizes"], 0.0))

    def node_view(self, data, dyn, t):
        return {"prize": dyn["remaining"], "open": (~dyn["reached"]).at[0].set(False)}


PROBLEM = PCJax()
