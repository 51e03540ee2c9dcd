"""DSA (variants A/B/C) as a JAX policy, the twin of ``baselines.dcop.dsa.dsa_decide``."""

from __future__ import annotations

from baselines.dcop.dsa import TIE_TOL, VARIANTS
from relic_envs.dcop._jax_sweep import jnp
from relic_envs.errors import InvalidConfig


def dsa_policy(p: float = 0.7, variant: str = "B"):
    """A JAX policy ``obs -> values`` usable for every DCOP role."""
    if variant not in VARIANTS or not 0.0 <= p <= 1.0:
        raise InvalidConfig(f"DSA needs variant in {VARIANTS} and p in [0, 1], got {variant!r}, {p}")

    def policy(obs):
        cur, delta, u = obs["cur"], obs["delta"], obs["u"]
        m, d = delta.shape
        rows = jnp.arange(m)
        now = delta[rows, cur]
        best = delta.min(axis=1)
        tied = delta <= best[:, None] + TIE_TOL
        improving = (now - best) > TIE_TOL
        lateral_tied = tied.at[rows, cur].set(False)
        has_lateral = lateral_tied.any(axis=1)
        choose_from = jnp.where(improving[:, None], tied, lateral_tied)
        target = jnp.where(choose_from, u[:, :d], jnp.inf).argmin(axis=1)
        if variant == "A":
            eligible = improving
        elif variant == "B":
            eligible = improving | (~improving & has_lateral & (now > TIE_TOL))
        else:
            eligible = improving | (~improving & has_lateral)
        move = eligible & (u[:, d] < p)
        return jnp.where(move, target, cur).astype(jnp.int32)

    return policy


def dsa_jax_team(p: float = 0.7, variant: str = "B") -> dict:
    policy = dsa_policy(p, variant)
    return {r: policy for r in ("A", "B", "C")}
