"""DSA (variants A/B/C) as a JAX policy: the rule of ``baselines.dcop.dsa.dsa_decide``."""

from __future__ import annotations

from baselines.dcop.dsa import DSA, TIE_TOL
from relic_envs.dcop._jax_sweep import jnp


def dsa_decide_jax(cur, delta, u, *, p: float, variant: str):
    """``dsa_decide`` on ``jax.numpy``, one value (column) of the domain at a time.

    The same rule and decisions (``tests/dcop/test_jax_parity.py`` checks them against
    the numpy rule, ties and all); written over the ``(m,)`` columns of ``delta`` and
    ``u`` so that every step is elementwise over the variables: XLA compiles it into
    one loop with the landscape's columns (``JaxProblem.columns``) instead of writing
    each ``(m, domain)`` intermediate to memory (DGC 1.9 -> 1.8, DiMES 6.0 -> 4.1 ms per
    sweep with the column landscape; ``benchmarks/RESULTS.md``).

    "A lateral move exists" is "some value is a candidate": the candidates are the tied
    values, less the current one unless the move improves, and an improving move always
    has a candidate.
    """
    m, d = delta.shape
    columns = [delta[:, j] for j in range(d)]
    now, best = columns[0], columns[0]
    for j in range(1, d):
        now = jnp.where(cur == j, columns[j], now)
        best = jnp.minimum(best, columns[j])
    improving = now - best > TIE_TOL
    limit = best + TIE_TOL
    # the candidate of least u, the first on ties (``argmin`` of the masked u)
    found = jnp.zeros(m, bool)
    least, target = jnp.full(m, jnp.inf, u.dtype), jnp.zeros(m, jnp.int32)
    for j in range(d):
        candidate = (columns[j] <= limit) & (improving | (cur != j))
        found = found | candidate
        lower = candidate & (u[:, j] < least)
        least = jnp.where(lower, u[:, j], least)
        target = jnp.where(lower, jnp.int32(j), target)
    if variant == "A":
        eligible = improving
    elif variant == "B":
        eligible = improving | (found & (now > TIE_TOL))
    else:
        eligible = found
    move = eligible & (u[:, d] < p)
    return jnp.where(move, target, cur)


def dsa_policy(p: float = 0.7, variant: str = "B"):
    """A JAX policy ``obs -> values`` usable for every DCOP role."""
    DSA(p=p, variant=variant)  # validates the settings

    def policy(obs):
        return dsa_decide_jax(obs["cur"], obs["delta"], obs["u"], p=p, variant=variant).astype(jnp.int32)

    return policy


def dsa_jax_team(p: float = 0.7, variant: str = "B") -> dict:
    policy = dsa_policy(p, variant)
    return {r: policy for r in ("A", "B", "C")}
