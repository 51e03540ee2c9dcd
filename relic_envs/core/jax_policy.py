"""A JAX seed twin as a policy: the one adapter every family's ``jax_seeds`` uses (needs ``relic-envs[jax]``).

A seed twin is written with the paper's parameter names (``fn(delta, cur, u)``); a batch
evaluator and a functional env hand a policy the role's observation dict. ``as_policy``
binds one to the other and fixes the answer's dtype.

JAX is imported here, so this module stays out of ``relic_envs.core``'s imports.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from relic_envs.errors import MissingExtra

try:
    import jax.numpy as jnp
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtra("jax", "jax") from exc


def as_policy(fn: Callable) -> Callable:
    """A JAX policy ``obs -> int32 values`` calling ``fn`` with its parameters taken from ``obs``."""
    names = tuple(inspect.signature(fn).parameters)

    def policy(obs):
        return fn(**{k: obs[k] for k in names}).astype(jnp.int32)

    policy.__name__ = policy.__qualname__ = f"jax_seed:{fn.__name__}"
    return policy
