"""The JAX batch evaluators of the routing benchmarks: not built yet.

Planned shape (see ``relic_envs/dcop/jax_eval.py``): ``relic_envs.mapp._jax_routing``
holding the movement rule once (positions, budgets, per-agent visited masks, the
feasibility guard, depot fallback, the ``N``-step horizon in one ``lax.scan``), and
``relic_envs/mapp/{pc,ar,ds}/jax_eval.py`` holding each arrival rule (PC: collect once;
AR: sequential multiplicative scans; DS: serve the best active request of the stored
stream grid), with parity tests against the numpy reference.
"""

from __future__ import annotations

MISSING = (
    "the JAX evaluators of mapp_pc, mapp_ar and mapp_ds are not built yet (missing: "
    "relic_envs/mapp/_jax_routing.py, relic_envs/mapp/{pc,ar,ds}/jax_eval.py, their parity tests and "
    "throughput rows); use relic_envs.rollout, the numpy reference"
)


def evaluate(name, policies, instances, *, x64: bool = True):
    """Run a team of JAX policies on routing instances (not built yet)."""
    raise NotImplementedError(MISSING)


def evaluator(name, policies, *, x64: bool = True):
    """A compiled batch evaluator for a routing benchmark (not built yet)."""
    raise NotImplementedError(MISSING)
