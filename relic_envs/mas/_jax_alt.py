"""The alternative A/B/C interface of the scheduling family in JAX (twin of ``_alt.py``).

The same three roles (A deadline sentinel, B value harvester, C system regulator) and
the same encoded observations as the numpy env's ``interface="alt"``, built from the
evaluator's :class:`~relic_envs.mas._jax_dispatch.View`. A benchmark plugs in its
candidate columns, job values, contention vector and job-table columns, as in numpy.

Two sums run over a pool that changes during the episode (C's ``backlog``, MAS-FS's
``downstream_wait``): numpy adds the pool's durations after boolean indexing, in its
pairwise order over however many jobs the pool holds, so :func:`masked_numpy_sum` adds
them in that order too; and ``utilisation`` divides by the elapsed time one scalar at a
time (``per_element_quotient``: XLA turns a division by a broadcast scalar into a
multiplication by its reciprocal). So observations stay bit-identical to the numpy env's.
"""

from __future__ import annotations

from collections.abc import Callable

from relic_envs.core.jax_numpy_order import masked_numpy_sum, per_element_quotient
from relic_envs.mas import _jax_dispatch as jd
from relic_envs.mas._jax_dispatch import N_RES, jnp


def own_time(v: jd.View):
    """``(N,)`` this resource's duration of each job's operation at its stage."""
    return v.data["dur"][v.k, :, v.stage(v.k)]


def my_finish(v: jd.View):
    return jnp.where(v.pool, jnp.maximum(v.busy[v.k], v.t) + own_time(v), jnp.inf)


def rival_finish(v: jd.View):
    """``(N,)`` the earliest finish a teammate could offer each job of this role's pool."""
    best = jnp.full(v.pool.shape, jnp.inf, v.t.dtype)
    for j in v.teammates:
        finish = jnp.maximum(v.busy[j], v.t) + v.data["dur"][j, :, v.stage(j)]
        best = jnp.minimum(best, jnp.where(v.pools[j], finish, jnp.inf))
    return jnp.where(v.pool, best, jnp.inf)


def downstream_wait(v: jd.View):
    """``(N,)`` MAS-FS: the wait at the next stage if this stage started the job now."""
    s = v.stage(v.k)
    if s + 1 >= v.machine.shape[1]:
        return jnp.zeros(v.pool.shape, v.t.dtype)
    nxt = s + 1
    ahead = jnp.maximum(0.0, v.busy[nxt] - v.t) + masked_numpy_sum(v.data["dur"][nxt, :, nxt], v.pools[nxt])
    return jnp.where(v.pool, jnp.maximum(0.0, ahead - own_time(v)), 0.0)


def team_state(v: jd.View) -> dict:
    """The system regulator's view of the three resources (twin of ``_alt.team_state``)."""
    elapsed = v.t - v.data["release"][0]
    running = jnp.maximum(0.0, v.busy - v.t)
    positive = elapsed > 0
    util = jnp.clip(per_element_quotient(v.load - running, jnp.where(positive, elapsed, 1.0)), 0.0, 1.0)
    util = jnp.where(positive, util, 0.0)
    backlog = jnp.stack([masked_numpy_sum(v.data["dur"][k, :, v.stage(k)], v.pools[k]) for k in range(N_RES)])
    released = v.released.sum()
    covered = ((v.machine[:, -1] >= 0) & v.released).sum()
    coverage = jnp.where(released > 0, covered.astype(v.t.dtype) / jnp.maximum(released, 1).astype(v.t.dtype), 0.0)
    return {"busy_until": v.busy, "load": v.load, "utilisation": util, "backlog": backlog, "coverage": coverage}


def machine_and_completion(v: jd.View):
    """``(N,)`` resource that runs / ran each job's last operation and its completion (-1 if not dispatched)."""
    dispatched = v.machine[:, -1] >= 0
    machine = v.machine[:, -1].astype(v.t.dtype)
    completion = jnp.where(dispatched, jnp.nan_to_num(v.end[:, -1], nan=-1.0), -1.0)
    return machine, completion


def alt_roles(candidates: Callable[[jd.View], object], values: Callable[[jd.View], object],
              contention: tuple[str, Callable[[jd.View], object]], table: Callable[[jd.View], object]) -> dict:
    """The alt-interface role table of one scheduling benchmark (twin of ``_alt.alt_roles``):
    ``candidates(view)`` A's ``(N, width)`` pool columns, ``values(view)`` B's ``(N,)``
    job values (zeroed outside the pool here), ``contention`` B's third parameter
    ``(name, getter)``, ``table(view)`` C's ``(N, width)`` job-table columns."""
    contention_name, contention_of = contention
    return {
        "A": {"candidates": jd.pool_dict(candidates), "t_now": jd.t_now},
        "B": {"values": lambda v: jnp.where(v.pool, values(v), 0.0), "my_finish": my_finish,
              contention_name: contention_of, "t_now": jd.t_now},
        "C": {"team_state": team_state,
              "job_table": lambda v: {"mask": v.released.astype(jnp.int8), "value": table(v)},
              "t_now": jd.t_now},
    }
