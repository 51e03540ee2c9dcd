"""MAPP-PC in JAX: the functional twin of ``simulator.py`` + ``roles.py`` (both interfaces).

Use through :func:`relic_envs.mapp.jax_eval.evaluate` or
``relic_envs.mapp.jax_eval.evaluator("mapp_pc", policies)``.
"""

from __future__ import annotations

import numpy as np

from relic_envs.core.jax_numpy_order import numpy_sum
from relic_envs.mapp import _jax_routing as jr
from relic_envs.mapp._jax_alt import alt_roles
from relic_envs.mapp._jax_routing import jnp


def coverage(v: jr.View):
    """Twin of ``roles._coverage``: the share of the total prize collected."""
    total = v.data["prize_total"]
    share = 1.0 - numpy_sum(v.nodes["prize"]) / jnp.where(total > 0, total, 1.0)
    return jnp.where(total > 0, share, 1.0)


class PCJax(jr.JaxRoutingProblem):
    name = "mapp_pc"
    shrink_stages = 3  # batch 1024 -> 256 -> 64 -> 16 as episodes end (see JaxRoutingProblem)
    roles = {"paper": jr.paper_roles("unvisited_prizes", "open", ("prize",), {"remaining_prizes": "prize"}),
             "alt": alt_roles("prize", coverage)}

    def arrays(self, instance, dist):
        prizes = np.asarray(instance.prizes, np.float64)
        return {"prizes": prizes, "prize_total": np.float64(prizes.sum())}

    def init_dynamic(self, data):
        return {"remaining": data["prizes"], "reached": jnp.zeros(data["prizes"].shape, bool)}

    def arrive(self, data, dyn, node, t, on):
        # Collect once: a later arrival (even in the same epoch) finds the prize at 0.
        remaining, reached = dyn["remaining"], dyn["reached"]
        return {"remaining": remaining.at[node].set(jnp.where(on, 0.0, remaining[node])),
                "reached": reached.at[node].set(reached[node] | on)}

    def objective(self, data, dyn):
        return jnp.sum(jnp.where(dyn["reached"], data["prizes"], 0.0))

    def node_view(self, data, dyn, t):
        return {"prize": dyn["remaining"], "open": (~dyn["reached"]).at[0].set(False)}


PROBLEM = PCJax()
