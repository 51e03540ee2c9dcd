"""MAPP-AR in JAX: the functional twin of ``simulator.py`` + ``roles.py`` (both interfaces).

Use through :func:`relic_envs.mapp.jax_eval.evaluate` or
``relic_envs.mapp.jax_eval.evaluator("mapp_ar", policies)``.
"""

from __future__ import annotations

import numpy as np

from relic_envs.core.jax_numpy_order import numpy_sum
from relic_envs.mapp import _jax_routing as jr
from relic_envs.mapp._jax_alt import alt_roles
from relic_envs.mapp._jax_routing import jnp
from relic_envs.mapp.ar.simulator import correlation


def coverage(v: jr.View):
    """Twin of ``roles._coverage``: the share of the initial uncertainty removed."""
    # Divided by an array of the data, not a constant: XLA turns x / constant into a
    # multiplication by the reciprocal, which can differ from numpy's quotient in the last bit.
    return 1.0 - numpy_sum(v.nodes["uncertainty"]) / v.data["cells"]


class ARJax(jr.JaxRoutingProblem):
    name = "mapp_ar"
    roles = {"paper": jr.paper_roles("uncertainty_dict", "unscanned", ("uncertainty",),
                                     {"uncertainty_vector": "uncertainty"}),
             "alt": alt_roles("uncertainty", coverage)}

    def arrays(self, instance, dist):
        return {"rho": correlation(dist, instance.sigma),  # the numpy reference's own rho, bit for bit
                "cells": np.float64(instance.n_nodes - 1)}

    def init_dynamic(self, data):
        n = data["dist"].shape[0]
        return {"u": jnp.ones(n, data["dist"].dtype).at[0].set(0.0), "scanned": jnp.zeros(n, bool)}

    def arrive(self, data, dyn, node, t, on):
        # One scan event (simulator.scan); the step applies A, B, C one after another,
        # so repeated scans multiply again.
        u = (dyn["u"] * (1.0 - data["rho"][node])).at[node].set(0.0).at[0].set(0.0)
        return {"u": jnp.where(on, u, dyn["u"]), "scanned": dyn["scanned"].at[node].set(dyn["scanned"][node] | on)}

    def objective(self, data, dyn):
        return (data["dist"].shape[0] - 1) - jnp.sum(dyn["u"])

    def node_view(self, data, dyn, t):
        return {"uncertainty": dyn["u"], "unscanned": (~dyn["scanned"]).at[0].set(False)}


PROBLEM = ARJax()
