"""JAX twins of the FSTSP seed programs (``relic_envs/seeds/fstsp/paper/<role>.py``).

Each function is a ``jax.numpy`` translation of one numpy seed on the encoded
observation (``candidate_ids`` a mask over node ids, aligned arrays as
``{"mask", "value"}``): same formulas, same tie-breaking (``argmin`` over ascending
candidates is the first minimum over the masked id space).
"""

from __future__ import annotations

from collections.abc import Callable

from relic_envs.co._jax_decisions import first_min_or_skip, jnp
from relic_envs.core.jax_policy import as_policy


def select_next_A(candidate_ids, drone_roundtrip_times, truck_detours, endurance):
    """Twin of ``A.py``: the nearest candidate whose flight beats the truck's detour, else no sortie."""
    useful = (candidate_ids > 0) & (drone_roundtrip_times["value"] < truck_detours["value"])
    return first_min_or_skip(useful, drone_roundtrip_times["value"])


def select_next_B(current, candidate_ids, truck_distances, drone_customer):
    """Twin of ``B.py``: nearest neighbour among the candidates."""
    return first_min_or_skip(candidate_ids > 0, truck_distances)


def select_next_C(candidate_ids, truck_etas, drone_etas, endurance):
    """Twin of ``C.py``: the earliest rendezvous max(truck ETA, drone ETA)."""
    return first_min_or_skip(candidate_ids > 0, jnp.maximum(truck_etas["value"], drone_etas["value"]))


def seed_policies() -> dict[str, Callable]:
    """The three twins as JAX policies ``obs -> int32 id``."""
    return {"A": as_policy(select_next_A), "B": as_policy(select_next_B), "C": as_policy(select_next_C)}
