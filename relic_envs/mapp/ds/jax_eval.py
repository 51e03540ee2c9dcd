"""MAPP-DS in JAX: the functional twin of ``simulator.py`` + ``roles.py`` (both interfaces).

The request stream is not redrawn in JAX: :func:`stack` stores the numpy
``generator.stream(instance)`` grid (``fire``, ``value``, ``expiry``, ``(N + 1, N)``
each) in the batch, so both evaluators serve the same requests.

Use through :func:`relic_envs.mapp.jax_eval.evaluate` or
``relic_envs.mapp.jax_eval.evaluator("mapp_ds", policies)``.
"""

from __future__ import annotations

import numpy as np

from relic_envs.mapp import _jax_routing as jr
from relic_envs.mapp._jax_alt import alt_roles
from relic_envs.mapp._jax_routing import jnp
from relic_envs.mapp.ds.generator import stream


def active(data, dyn, t):
    """``(H, N)`` bool: requests active at time ``t`` and not yet served."""
    tau = jnp.arange(data["fire"].shape[0])[:, None]
    return data["fire"] & ~dyn["served"] & (tau <= t) & (t <= data["expiry"])


def coverage(v: jr.View):
    """Twin of ``roles._coverage``: served value over the value released so far."""
    released = v.nodes["released"]
    return jnp.where(released > 0, v.nodes["served_value"] / jnp.where(released > 0, released, 1.0), 0.0)


def first_argmax_over_rows(score):
    """``score.argmax(axis=0)``: each node's best request row (the first on ties, 0 where
    all are ``-inf``) as a running maximum over the rows. XLA evaluated ``argmax``'s
    paired reduction element by element: it was most of an epoch (MAPP-DS at batch 1024:
    430 -> 254 ms per evaluation). Only the row leaves this function: reading the
    running maximum itself let XLA copy its chain into each consumer (350 ms)."""
    top, row = score[0], jnp.zeros(score.shape[1], jnp.int32)
    for r in range(1, score.shape[0]):
        higher = score[r] > top
        top, row = jnp.where(higher, score[r], top), jnp.where(higher, jnp.int32(r), row)
    return row


class DSJax(jr.JaxRoutingProblem):
    name = "mapp_ds"
    allow_revisit = True
    shrink_stages = 3  # batch 1024 -> 256 -> 64 -> 16 as episodes end (see JaxRoutingProblem)
    roles = {"paper": jr.paper_roles("request_dict", "active", ("value", "ttl"),
                                     {"value_vector": "value", "deadline_vector": "ttl"}),
             "alt": alt_roles("value", coverage, ttl_attr="ttl")}

    def arrays(self, instance, dist):
        s = stream(instance)
        # The value released by each epoch t, summed by the numpy reference's own
        # expression (node_view), so its bits match.
        released = np.array([np.sum(s.value[: t + 1]) for t in range(s.value.shape[0])], np.float64)
        return {"fire": s.fire, "value": s.value, "expiry": s.expiry.astype(np.int32), "released": released}

    def init_dynamic(self, data):
        # ``gained``: the served value, added one arrival at a time as numpy adds it.
        return {"served": jnp.zeros(data["fire"].shape, bool), "gained": jnp.zeros((), data["value"].dtype)}

    def arrive(self, data, dyn, node, t):
        # Serve the highest-value active request at the node; argmax takes the first
        # maximum, i.e. the earliest arrival on ties, as the numpy reference does.
        # Only the node's column of the request grid: computing ``active`` over the whole
        # (N + 1, N) grid for each of the three arrivals of an epoch cost most of a step.
        tau = jnp.arange(data["fire"].shape[0])
        live = data["fire"][:, node] & ~dyn["served"][:, node] & (tau <= t) & (t <= data["expiry"][:, node])
        score = jnp.where(live, data["value"][:, node], -jnp.inf)
        row = jnp.argmax(score)
        hit = jnp.isfinite(score[row])
        return {"served": dyn["served"].at[row, node].set(dyn["served"][row, node] | hit),
                "gained": dyn["gained"] + jnp.where(hit, data["value"][row, node], 0.0)}

    def objective(self, data, dyn):
        return jnp.sum(jnp.where(dyn["served"], data["value"], 0.0))

    def node_view(self, data, dyn, t):
        score = jnp.where(active(data, dyn, t), data["value"], -jnp.inf)
        row = first_argmax_over_rows(score)
        cols = jnp.arange(score.shape[1])
        top = score[row, cols]
        exists = jnp.isfinite(top)
        ttl = jnp.where(exists, data["expiry"][row, cols] - t, 0).astype(data["value"].dtype)
        released = data["released"][jnp.minimum(t, data["released"].shape[0] - 1)]
        return {"value": jnp.where(exists, top, 0.0), "ttl": ttl, "active": exists, "released": released,
                "served_value": dyn["gained"]}


PROBLEM = DSJax()
