"""The alternative A/B/C interface of the routing family in JAX (twin of ``_alt.py``).

The same three roles (A deadline sentinel, B value harvester, C system regulator) and
the same encoded observations as the numpy env's ``interface="alt"``, built from the
evaluator's :class:`~relic_envs.mapp._jax_routing.View`. A benchmark plugs in its node
value attribute, its coverage (the share of the attainable value gained so far) and,
for MAPP-DS, the time-to-live attribute.

Coverage is a ratio of sums over the nodes; its numerator is summed in numpy's own order
(:func:`numpy_sum`) and every quotient is a division of traced scalars
(:func:`per_element_quotient`), so that observations stay bit-identical to the numpy
env's.
"""

from __future__ import annotations

from collections.abc import Callable

from relic_envs.mapp import _jax_routing as jr
from relic_envs.mapp._jax_routing import jnp

_BLOCK = 128  # numpy's PW_BLOCKSIZE
_UNROLL = 8


def numpy_sum(a):
    """``np.sum`` of a 1-D float array in numpy's order, so with its exact bits.

    numpy adds a contiguous float array pairwise: fewer than 8 elements one by one from
    0.0; up to 128 in 8 interleaved partial sums combined as ``((r0 + r1) + (r2 + r3)) +
    ((r4 + r5) + (r6 + r7))``, then the remainder one by one; longer arrays as the sum of
    two halves split at a multiple of 8. The length is static, so this unrolls at trace
    time (checked bit for bit against ``np.sum`` in the tests, lengths 1 to 400 across
    the three cases).
    """
    n = a.shape[0]
    if n < _UNROLL:
        total = jnp.zeros((), a.dtype)
        for i in range(n):
            total = total + a[i]
        return total
    if n <= _BLOCK:
        r = a[:_UNROLL]
        stop = n - n % _UNROLL
        for i in range(_UNROLL, stop, _UNROLL):
            r = r + a[i : i + _UNROLL]
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for i in range(stop, n):
            total = total + a[i]
        return total
    half = n // 2
    half -= half % _UNROLL
    return numpy_sum(a[:half]) + numpy_sum(a[half:])


def per_element_quotient(values, divisor):
    """``values / divisor`` for a short vector and a scalar, one scalar division each.

    XLA rewrites a division by a broadcast scalar (or by a constant) as a multiplication
    by its reciprocal, which is not always the correctly rounded quotient numpy computes;
    scalar-by-scalar divisions of traced values are left as divisions.
    """
    return jnp.stack([values[i] / divisor for i in range(values.shape[0])])


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
