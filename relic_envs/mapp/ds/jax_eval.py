"""MAPP-DS in JAX: the functional twin of ``simulator.py`` + ``roles.py`` (both interfaces).

The request stream is not redrawn in JAX: :func:`stack` stores the numpy
``generator.stream(instance)`` grid (``fire``, ``value``, ``expiry``, ``(N + 1, N)``
each) in the batch, so both evaluators serve the same requests; each node's column is
ranked by value (``epoch`` holds each entry's firing epoch), so a node's best active
request is its first active rank (a plain min reduction, not an argmax over the
epochs), and the evaluator's batches keep only the ranks some node of the batch uses
(:meth:`DSJax.compact`: about half of the ``N + 1`` on the test splits).

Use through :func:`relic_envs.mapp.jax_eval.evaluate` or
``relic_envs.mapp.jax_eval.evaluator("mapp_ds", policies)``.
"""

from __future__ import annotations

import numpy as np

from relic_envs.core.jax_select import first_true, narrowest_int
from relic_envs.mapp import _jax_routing as jr
from relic_envs.mapp._jax_alt import alt_roles
from relic_envs.mapp._jax_routing import jnp
from relic_envs.mapp.ds.generator import stream


def active(data, dyn, t):
    """``(H, N)`` bool, in the per-node value order of :meth:`DSJax.arrays`: requests active
    at time ``t`` and not yet served (fired by ``t``, not expired, not served: one window
    ``opens <= t <= closes``, see :meth:`DSJax.arrays`)."""
    return (data["opens"] <= t) & (t <= dyn["closes"])


def coverage(v: jr.View):
    """Twin of ``roles._coverage``: served value over the value released so far."""
    released = v.nodes["released"]
    return jnp.where(released > 0, v.nodes["served_value"] / jnp.where(released > 0, released, 1.0), 0.0)


RANKED = ("fire", "value", "expiry", "epoch", "opens", "closes")  # the (ranks, N) arrays of arrays()


class DSJax(jr.JaxRoutingProblem):
    name = "mapp_ds"
    allow_revisit = True
    shrink_stages = 3  # batch 1024 -> 256 -> 64 -> 16 as episodes end (see JaxRoutingProblem)
    roles = {"paper": jr.paper_roles("request_dict", "active", ("value", "ttl"),
                                     {"value_vector": "value", "deadline_vector": "ttl"}),
             "alt": alt_roles("value", coverage, ttl_attr="ttl")}

    def arrays(self, instance, dist):
        s = stream(instance)
        # Each node's requests ranked by value, highest first, ties by the earlier epoch
        # (a stable sort), unfired ones last: the best active request is then the first
        # active one in rank order, numpy's argmax over the epochs (first maximum).
        order = np.argsort(np.where(s.fire, -s.value, np.inf), axis=0, kind="stable")
        ranked = {k: np.take_along_axis(a, order, axis=0) for k, a in
                  (("fire", s.fire), ("value", s.value), ("expiry", s.expiry.astype(np.int32)))}
        # The value released by each epoch t, summed by the numpy reference's own
        # expression (node_view), so its bits match.
        released = np.array([np.sum(s.value[: t + 1]) for t in range(s.value.shape[0])], np.float64)
        # Each request's active window in the smallest integer type that holds the
        # epochs: it opens at its firing epoch (never if it did not fire) and closes at its
        # expiry (the dynamic copy closes at -1 once served, the only negative value).
        # ``active`` then reads two narrow arrays instead of four (2 bytes a request
        # instead of 10: it is the (ranks, N) pass of every epoch). Epochs run 0..H - 1,
        # so clipping at H keeps every comparison.
        horizon = s.value.shape[0]
        small = narrowest_int(horizon)
        opens = np.where(ranked["fire"], order, horizon).astype(small)
        closes = np.minimum(ranked["expiry"], horizon).astype(small)
        return {**ranked, "epoch": order.astype(np.int32), "released": released, "opens": opens, "closes": closes}

    def compact(self, data):
        # Ranks past the most requests any node of the batch receives hold unfired
        # entries only (about half the N + 1 ranks on the test splits): cut them.
        used = max(1, int(data["fire"].sum(axis=1).max()))
        return {k: (v[:, :used] if k in RANKED else v) for k, v in data.items()}

    def init_dynamic(self, data):
        # ``closes``: per (rank, node), as the ranked arrays, each request's last active
        # epoch, -1 once served (so ``closes < 0`` is numpy's ``served``). ``gained``: the
        # served value, added one arrival at a time as numpy adds it.
        return {"closes": data["closes"], "gained": jnp.zeros((), data["value"].dtype)}

    def arrive(self, data, dyn, node, t, on):
        # Serve the node's best active request: its first active rank. Only the node's
        # column: computing ``active`` over the whole grid for each of the three arrivals
        # of an epoch cost most of a step.
        live = (data["opens"][:, node] <= t) & (t <= dyn["closes"][:, node])
        rank = first_true(live, axis=0)
        hit = (rank < live.shape[0]) & on
        rank = jnp.minimum(rank, live.shape[0] - 1)
        closes = dyn["closes"]
        return {"closes": closes.at[rank, node].set(jnp.where(hit, -1, closes[rank, node]).astype(closes.dtype)),
                "gained": dyn["gained"] + jnp.where(hit, data["value"][rank, node], 0.0)}

    def objective(self, data, dyn):
        return jnp.sum(jnp.where(dyn["closes"] < 0, data["value"], 0.0))

    def node_view(self, data, dyn, t):
        rank = first_true(active(data, dyn, t), axis=0)
        exists = rank < data["fire"].shape[0]
        rank = jnp.minimum(rank, data["fire"].shape[0] - 1)
        cols = jnp.arange(rank.shape[0])
        ttl = jnp.where(exists, data["expiry"][rank, cols] - t, 0).astype(data["value"].dtype)
        released = data["released"][jnp.minimum(t, data["released"].shape[0] - 1)]
        return {"value": jnp.where(exists, data["value"][rank, cols], 0.0), "ttl": ttl, "active": exists,
                "released": released, "served_value": dyn["gained"]}


PROBLEM = DSJax()
