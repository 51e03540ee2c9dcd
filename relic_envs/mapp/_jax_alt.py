"""The alternative A/B/C interface of the routing family in JAX (twin of ``_alt.py``).

The same three roles (A deadline sentinel, B value harvester, C system regulator) and
the same encoded observations as the numpy env's ``interface="alt"``, built from the
evaluator's :class:`~relic_envs.mapp._jax_routing.View`. A benchmark plugs in its node
value attribute, its coverage (the share of the attainable value gained so far) and,
for MAPP-DS, the time-to-live attribute.

Coverage is a ratio of sums over the nodes; its numerator is summed in numpy's own order
(``core.jax_numpy_order.numpy_sum``) and every quotient is a division of traced scalars
(``per_element_quotient``), so that observations stay bit-identical to the numpy
env's.
"""

from __future__ import annotations

from collections.abc import Callable

from relic_envs.core.jax_numpy_order import per_element_quotient
from relic_envs.mapp import _jax_routing as jr
from relic_envs.mapp._jax_routing import jnp


def _candidates(value_attr: str, ttl_attr: str | None) -> jr.Getter:
    def get(v: jr.View):
        dist = v.data["dist"]
        slack = v.budget[v.k] - (dist[v.current] + dist[:, 0])
        cols = [jnp.asarray(v.nodes[value_attr], dist.dtype), slack]
        if ttl_attr is not None:
            cols.append(jnp.asarray(v.nodes[ttl_attr], dist.dtype))
        return {"mask": v.feasible.astype(jnp.int8), "value": jnp.stack(cols, axis=1)}

    return get


def _teammate_dist(v: jr.View):
    """Distance from the nearest teammate still en route to each node (``inf`` when none is)."""
    mates = jnp.array(v.teammates)
    rows = v.data["dist"][v.pos[mates]]
    return jnp.where(v.home[mates][:, None], jnp.inf, rows).min(axis=0)


def _team_state(coverage: Callable[[jr.View], object]) -> jr.Getter:
    def get(v: jr.View):
        budget0 = v.data["budget"]
        used = budget0 - v.budget
        n = v.data["dist"].shape[0]
        return {
            "positions": v.pos,
            "budgets_left": v.budget,
            "home": v.home.astype(v.budget.dtype),
            "utilisation": jnp.where(budget0 > 0, per_element_quotient(used, jnp.where(budget0 > 0, budget0, 1.0)), 0.0),
            "coverage": coverage(v),
            "t": jnp.minimum(v.t, n),
        }

    return get


def _node_table(value_attr: str, ttl_attr: str | None) -> jr.Getter:
    def get(v: jr.View):
        coords, dtype = v.data["coords"], v.data["dist"].dtype
        cols = [coords[:, 0], coords[:, 1], jnp.asarray(v.nodes[value_attr], dtype)]
        if ttl_attr is not None:
            cols.append(jnp.asarray(v.nodes[ttl_attr], dtype))
        cols.append(v.feasible.astype(dtype))
        return jnp.stack(cols, axis=1)

    return get


def alt_roles(value_attr: str, coverage: Callable[[jr.View], object], ttl_attr: str | None = None) -> dict[str, dict[str, jr.Getter]]:
    """The alt-interface role table of one routing benchmark (``_alt.alt_roles``'s getters)."""
    return {
        "A": {"current": jr.current, "candidates": _candidates(value_attr, ttl_attr), "budget_left": jr.budget_left},
        "B": {"current": jr.current, "values": jr.attr(value_attr), "dist_row": jr.dist_row,
              "teammate_dist": _teammate_dist, "budget_left": jr.budget_left},
        "C": {"my_state": jr.my_state, "team_state": _team_state(coverage), "node_table": _node_table(value_attr, ttl_attr)},
    }
