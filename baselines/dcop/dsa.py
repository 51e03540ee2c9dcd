"""Distributed Stochastic Search (Zhang, Wang, Xing & Wittenburg 2005), variants A/B/C.

Each sweep every variable computes its best value ``v*`` on its local landscape
``delta`` and the gain ``g = delta[cur] - delta[v*]``, then, with probability ``p``:

- DSA-A: moves to ``v*`` when ``g > 0``;
- DSA-B: moves when ``g > 0``, or makes a lateral move to another equally good value
  when ``g == 0`` and the variable is in conflict;
- DSA-C: moves when ``g > 0``, and laterally whenever ``g == 0``.

Decisions taken here (the paper names DSA-B without parameters):

- ``p = 0.7``, pyDCOP's default for DSA (its default variant is also B).
- "In conflict" is ``delta[cur] > 0``: some cost term involving the variable is
  positive. For DGC this is exactly "has a same-coloured neighbour"; for the soft
  benchmarks (DiMES, SensorDCSP, SHDS) it is the positive-cost reading of pyDCOP's
  "a constraint is not at its optimum". It needs nothing beyond ``delta``, so DSA runs
  from any role's observation.
- Ties among best values, and the coin for ``p``, come from the evaluator's ``u``
  tensor (``u[:, :domain]`` orders tied values, ``u[:, domain] < p`` activates), so a
  run is deterministic given the instance. A lateral move excludes the current value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from baselines.dcop.sweep import SweepSolver
from relic_envs.core.instance import Instance
from relic_envs.core.rollout import RolloutResult, rollout
from relic_envs.dcop._explore import exploration
from relic_envs.errors import InvalidConfig

TIE_TOL = 1e-9
VARIANTS = ("A", "B", "C")


def dsa_decide(cur, delta, u, *, p: float, variant: str, xp=np, argmin=None):
    """One DSA decision for ``m`` variables; returns their next values.

    ``xp`` is the array namespace: ``numpy`` here, ``jax.numpy`` for the JAX twin
    (``baselines.dcop.dsa_jax``), so both run the same rule. ``argmin(values)`` is the
    row-wise first-minimum index (``values.argmin(axis=1)`` unless given: the JAX twin
    passes ``first_argmin``; ``baselines.dcop.dsa_jax.dsa_decide_jax`` restates the rule
    column by column for XLA).
    """
    m, d = delta.shape
    rows = xp.arange(m)
    now = delta[rows, cur]
    best = delta.min(axis=1)
    gain = now - best
    tied = delta <= best[:, None] + TIE_TOL
    improving = gain > TIE_TOL
    # On a plateau the move is lateral: to another tied value, never the current one.
    lateral_tied = tied & (xp.arange(d)[None, :] != cur[:, None])
    has_lateral = lateral_tied.any(axis=1)
    choose_from = xp.where(improving[:, None], tied, lateral_tied)
    masked = xp.where(choose_from, u[:, :d], xp.inf)
    target = masked.argmin(axis=1) if argmin is None else argmin(masked)
    if variant == "A":
        eligible = improving
    elif variant == "B":
        eligible = improving | (~improving & has_lateral & (now > TIE_TOL))
    else:
        eligible = improving | (~improving & has_lateral)
    move = eligible & (u[:, d] < p)
    return xp.where(move, target, cur)


@dataclasses.dataclass(frozen=True)
class DSA(SweepSolver):
    """A DSA policy usable for any DCOP role: ``DSA(p=0.7, variant="B")(obs) -> values``.

    It is also a :class:`~baselines.dcop.sweep.SweepSolver` (``run_sweeps``), applying the
    same rule to all variables at once from the full landscape and the same ``u``.
    """

    p: float = 0.7
    variant: str = "B"

    @property
    def label(self) -> str:
        return f"dsa-{self.variant.lower()}"

    def __post_init__(self) -> None:
        if not 0.0 <= self.p <= 1.0:
            raise InvalidConfig(f"DSA p must lie in [0, 1], got {self.p}")
        if self.variant not in VARIANTS:
            raise InvalidConfig(f"DSA variant must be one of {VARIANTS}, got {self.variant!r}")

    def __call__(self, obs: Mapping[str, Any]) -> np.ndarray:
        values = dsa_decide(np.asarray(obs["cur"]), np.asarray(obs["delta"]), np.asarray(obs["u"]), p=self.p, variant=self.variant)
        return values.astype(np.int64)

    def start(self, problem, instance):
        return problem, instance

    def sweep(self, state, x: np.ndarray, t: int) -> np.ndarray:
        problem, instance = state
        u = exploration(int(instance.seed), t, x.size, problem.domain + 1)
        return dsa_decide(x, problem.landscape(instance, x), u, p=self.p, variant=self.variant).astype(np.int64)


def dsa_team(p: float = 0.7, variant: str = "B") -> dict[str, DSA]:
    """The same DSA policy for roles A, B and C."""
    policy = DSA(p=p, variant=variant)
    return {r: policy for r in ("A", "B", "C")}


def solve_dsa(
    benchmark: str, instances: Sequence[Instance], *, p: float = 0.7, variant: str = "B", progress: bool = False
) -> list[RolloutResult]:
    """Run DSA for the benchmark's 50 sweeps on every instance (whole-batch solver)."""
    return rollout(benchmark, dsa_team(p, variant), instances, progress=progress)
