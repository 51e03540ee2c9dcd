"""JAX twins of the HMTSP seed programs (``relic_envs/seeds/hmtsp/paper/<role>.py``).

Each function is a ``jax.numpy`` translation of one numpy seed on the encoded
observation (``candidate_ids`` a mask over customer ids, aligned arrays as
``{"mask", "value"}``): same formulas, same constants, same tie-breaking (``argmin``
over ascending candidates is the first minimum over the masked id space).
"""

from __future__ import annotations

from collections.abc import Callable

from relic_envs.co._jax_decisions import first_min_or_skip, jnp
from relic_envs.core.jax_policy import as_policy


def select_next_A(current, candidate_ids, candidate_costs, budget_left):
    """Twin of ``A.py``: cheapest insertion while the soft budget lasts, else skip."""
    best = first_min_or_skip(candidate_ids > 0, candidate_costs["value"])
    over = candidate_costs["value"][jnp.maximum(best, 0)] > budget_left
    return jnp.where(over, -1, best)


def select_next_B(candidate_ids, candidate_costs, task_types, route_cost):
    """Twin of ``B.py``: cheapest, preferring task type 1 when within 20% of the cheapest."""
    mask, costs = candidate_ids > 0, candidate_costs["value"]
    best = first_min_or_skip(mask, costs)
    own = mask & (task_types["value"] == 1)
    best_own = first_min_or_skip(own, costs)
    near = own.any() & (costs[jnp.maximum(best_own, 0)] <= 1.2 * costs[jnp.maximum(best, 0)])
    return jnp.where(near, best_own, best)


def select_next_C(current, candidate_ids, candidate_costs, team_route_costs):
    """Twin of ``C.py``: cheapest, skipping while this route is clearly the longest."""
    best = first_min_or_skip(candidate_ids > 0, candidate_costs["value"])
    others = jnp.maximum(team_route_costs[0], team_route_costs[1])
    longest = (team_route_costs[2] > 1.5 * jnp.maximum(others, 1e-9)) & (team_route_costs[2] > 1.0)
    return jnp.where(longest & (best >= 0), -1, best)


def seed_policies() -> dict[str, Callable]:
    """The three twins as JAX policies ``obs -> int32 id``."""
    return {"A": as_policy(select_next_A), "B": as_policy(select_next_B), "C": as_policy(select_next_C)}
