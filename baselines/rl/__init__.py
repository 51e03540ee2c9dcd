"""IPPO and MAPPO trained entirely in JAX on the functional envs; trained policies as comparators.

    python -m baselines.rl train dgc --algo ippo --steps 200000 --out runs/dgc_ippo
    python -m baselines.rl eval runs/dgc_ippo

See docs/rl.md ("IPPO and MAPPO"). Needs the ``jax`` extra; without it, using any name
here (or the command) is one :class:`~relic_envs.errors.MissingExtra` naming it.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {"RLTeam": "policy", "evaluate_checkpoint": "policy", "load": "policy", "save": "policy",
          "Config": "ppo", "train": "ppo"}
__all__ = sorted(_WHERE)


def require_jax() -> None:
    """:class:`~relic_envs.errors.MissingExtra` unless jax and optax import."""
    try:
        import jax  # noqa: F401  (the trainer and the policies are JAX through and through)
        import optax  # noqa: F401
    except ImportError as exc:
        from relic_envs.errors import MissingExtra

        raise MissingExtra(exc.name or "jax", "jax") from None


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'baselines.rl' has no attribute {name!r}")
    require_jax()
    return getattr(importlib.import_module(f"baselines.rl.{_WHERE[name]}"), name)
