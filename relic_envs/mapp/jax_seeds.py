"""JAX twins of the routing seed programs (``relic_envs/seeds/mapp_*/paper/<role>.py``).

Each function is a ``jax.numpy`` translation of one numpy seed: same formulas, same
constants, same tie-breaking. The seeds scan nodes in ascending id order and keep a
node only when its score is strictly better, so "first maximum among the candidates,
if it beats the initial best" is :func:`_first_best`. :func:`seed_jax_team` wraps them as JAX policies
``obs -> int32 node id`` for :mod:`relic_envs.mapp.jax_eval`.

>>> import relic_envs
>>> from relic_envs.mapp import jax_eval
>>> out = jax_eval.evaluate("mapp_ar", seed_jax_team("mapp_ar"), relic_envs.splits("mapp_ar").test["test50"][:1])
>>> bool(out.objectives[0] > 0)
True
"""

from __future__ import annotations

from collections.abc import Callable

from relic_envs.core.jax_policy import as_policy
from relic_envs.core.jax_select import first_argmax, first_argmin
from relic_envs.mapp._jax_routing import jnp


def _first_best(candidate, score, initial):
    """The first node (ascending id) with the largest score among ``candidate`` nodes, if
    that score is strictly above ``initial``; else the depot (0)."""
    s = jnp.where(candidate, score, -jnp.inf)
    j = first_argmax(s)
    return jnp.where(s[j] > initial, j, 0)


def _first_min(candidate, value):
    """The first node with the smallest ``value`` among ``candidate`` nodes (0 if none)."""
    v = jnp.where(candidate, value, jnp.inf)
    j = first_argmin(v)
    return jnp.where(candidate.any(), j, 0)


def _nodes(n):
    return jnp.arange(n)


def _away_dist(dist_mat, teammate_positions):
    """Per node: distance from the nearest teammate not at the depot (inf if none)."""
    away = teammate_positions != 0
    rows = jnp.where(away[:, None], dist_mat[teammate_positions], jnp.inf)
    return rows.min(axis=0)


# --- MAPP-PC -------------------------------------------------------------------------


def pc_A(current, unvisited_prizes, dist_mat, budget_left):
    """Twin of ``seeds/mapp_pc/paper/A.py`` (greedy prize per unit travel)."""
    go = dist_mat[current]
    cand = (unvisited_prizes["mask"] > 0) & (_nodes(go.shape[0]) != current) & ~(go + dist_mat[:, 0] > budget_left)
    return _first_best(cand, unvisited_prizes["value"] / (go + 1e-9), 0.0)


def pc_B(my_state, teammate_positions, graph, budget_left):
    """Twin of ``seeds/mapp_pc/paper/B.py`` (halved where a teammate en route is closer)."""
    current, dist_mat = my_state["current"], graph["dist_mat"]
    prize = graph["nodes"][:, 3]
    idx = _nodes(prize.shape[0])
    go = dist_mat[current]
    cand = (idx != 0) & (idx != current) & ~(prize <= 0.0) & ~(go + dist_mat[:, 0] > budget_left)
    score = prize / (go + 1e-9)
    score = jnp.where(_away_dist(dist_mat, teammate_positions) < go, score * 0.5, score)
    return _first_best(cand, score, 0.0)


def pc_C(current, dist_row, remaining_prizes, remaining_budget):
    """Twin of ``seeds/mapp_pc/paper/C.py`` (conservative return check)."""
    idx = _nodes(dist_row.shape[0])
    safe = (2.0 * dist_row + dist_row[0] <= remaining_budget) & (idx != 0) & (idx != current)
    score = jnp.where(safe & (remaining_prizes > 0), remaining_prizes / (dist_row + 1e-9), -1.0)
    j = first_argmax(score)
    return jnp.where(score[j] > 0, j, 0)


# --- MAPP-AR --------------------------------------------------------------------------
# The human AR seeds (``seeds/mapp_ar/paper``) are the PC seeds with residual uncertainty
# in place of prize: A scores a listed node by value per unit travel, B halves where a
# teammate en route is closer, C uses the conservative return check. Same twins.



def ar_A(current, uncertainty_dict, dist_mat, budget_left):
    """Twin of ``seeds/mapp_ar/paper/A.py``."""
    return pc_A(current, uncertainty_dict, dist_mat, budget_left)


def ar_B(my_state, teammate_positions, graph, budget_left):
    """Twin of ``seeds/mapp_ar/paper/B.py``."""
    return pc_B(my_state, teammate_positions, graph, budget_left)


def ar_C(current, dist_row, uncertainty_vector, remaining_budget):
    """Twin of ``seeds/mapp_ar/paper/C.py``."""
    return pc_C(current, dist_row, uncertainty_vector, remaining_budget)


# --- MAPP-DS -------------------------------------------------------------------------


def ds_A(current, request_dict, dist_mat, budget_left):
    """Twin of ``seeds/mapp_ds/paper/A.py`` (value per unit travel, else the shortest hop)."""
    value, ttl = request_dict["value"][:, 0], request_dict["value"][:, 1]
    idx = _nodes(value.shape[0])
    go = dist_mat[current]
    affordable = ~(go + dist_mat[:, 0] > budget_left)
    cand = (request_dict["mask"] > 0) & (idx != current) & ~(ttl < 1) & affordable
    best = _first_best(cand, value / (go + 0.05), 0.0)
    hops = (idx != 0) & (idx != current) & (go + dist_mat[:, 0] <= budget_left)
    return jnp.where(best != 0, best, _first_min(hops, go))


def ds_B(my_state, teammate_positions, graph, budget_left):
    """Twin of ``seeds/mapp_ds/paper/B.py`` (value per unit travel, contended x0.3, else a short hop)."""
    current, dist_mat = my_state["current"], graph["dist_mat"]
    value, ttl = graph["nodes"][:, 3], graph["nodes"][:, 4]
    idx = _nodes(value.shape[0])
    go = dist_mat[current]
    reachable = (idx != 0) & (idx != current) & ~(go + dist_mat[:, 0] > budget_left)
    cand = reachable & ~(value <= 0.0) & ~(ttl < 1)
    score = value / (go + 0.05)
    score = jnp.where(_away_dist(dist_mat, teammate_positions) < go, score * 0.3, score)
    best = _first_best(cand, score, 0.0)
    return jnp.where(best != 0, best, _first_min(reachable, go))


def ds_C(current, dist_row, value_vector, deadline_vector, remaining_budget):
    """Twin of ``seeds/mapp_ds/paper/C.py`` (value per unit travel, else the shortest safe hop)."""
    idx = _nodes(dist_row.shape[0])
    safe = (2.0 * dist_row + dist_row[0] <= remaining_budget) & (idx != 0) & (idx != current)
    live = safe & (value_vector > 0) & (deadline_vector >= 1)
    serve = first_argmax(jnp.where(live, value_vector / (dist_row + 0.05), -1.0))
    hop = first_argmin(jnp.where(safe, dist_row, jnp.inf))
    return jnp.where(safe.any(), jnp.where(live.any(), serve, hop), 0)


_SEEDS: dict[str, dict[str, Callable]] = {
    "mapp_pc": {"A": pc_A, "B": pc_B, "C": pc_C},
    "mapp_ar": {"A": ar_A, "B": ar_B, "C": ar_C},
    "mapp_ds": {"A": ds_A, "B": ds_B, "C": ds_C},
}


def seed_jax_team(name: str) -> dict[str, Callable]:
    """The JAX twins of a routing benchmark's paper-interface seed programs, one policy per role."""
    if name not in _SEEDS:
        raise NotImplementedError(f"no routing JAX seed twins for {name!r}; available: {sorted(_SEEDS)}")
    return {role: as_policy(fn) for role, fn in _SEEDS[name].items()}
