"""DSA (variants A/B/C) as a JAX policy: ``baselines.dcop.dsa.dsa_decide`` on ``jax.numpy``."""

from __future__ import annotations

from baselines.dcop.dsa import DSA, dsa_decide
from relic_envs.dcop._jax_sweep import first_argmin, jnp


def dsa_policy(p: float = 0.7, variant: str = "B"):
    """A JAX policy ``obs -> values`` usable for every DCOP role."""
    DSA(p=p, variant=variant)  # validates the settings

    def policy(obs):
        values = dsa_decide(obs["cur"], obs["delta"], obs["u"], p=p, variant=variant, xp=jnp, argmin=first_argmin)
        return values.astype(jnp.int32)

    return policy


def dsa_jax_team(p: float = 0.7, variant: str = "B") -> dict:
    policy = dsa_policy(p, variant)
    return {r: policy for r in ("A", "B", "C")}
