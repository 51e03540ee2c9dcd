"""The JAX batch evaluators of the combinatorial benchmarks (needs ``pip install 'relic-envs[jax]'``).

All decisions of a batch of same-size instances run in one compiled program
(``jit(vmap(...))`` or one batched loop); the one shared decision loop lives in
:mod:`relic_envs.co._jax_decisions` (turn order, skips, repairs), which the routing
benchmarks reach through :mod:`relic_envs.co._jax_construct` (HMTSP, FSTSP: one decision
at a time) and the scheduling ones through :mod:`relic_envs.co._jax_events` (FJAGV, MRCPS:
event time). Paper interface only.

**The contract** of a per-benchmark module ``relic_envs/co/<name>/jax_eval.py``:

* ``stack(instances) -> batch``: same-size instances stacked (``batch.data``: a dict of
  arrays with a leading batch axis; ``batch.size``);
* ``evaluator(policies, *, x64=True) -> run``: ``policies`` maps each role ``"A"``,
  ``"B"``, ``"C"`` to a JAX policy (encoded observation dict, as the env's, ``-> int``
  id); ``run(batch) -> Outcome`` returns numpy arrays with at least ``objective (B,)``
  (the raw, minimised objective), ``repairs (B, 3)`` (repairs per role A, B, C, counted
  as ``Episode.step`` counts them) and ``steps (B,)`` (decisions taken); ``run.jitted``
  is the ``jax.jit`` function of ``batch.data`` (with ``.lower``) for the timing scripts.
  ``x64=True`` (float64) promises exact parity of every decision, schedule and repair
  count with ``relic_envs.rollout``, and objectives within one ulp (numpy sums FJAGV's and
  MRCPS's cost terms with ``math.fsum``, XLA with ordinary adds);
  ``x64=False`` runs float32 without that promise;
* ``seed_policies() -> dict role -> JAX policy``: the twins of the paper's seed programs
  (same formulas and tie-breaking as ``relic_envs/seeds/<name>/paper``);
* ``PROBLEM``: the benchmark's JAX problem object (:func:`problem`).

The first three are the same for every benchmark: ``relic_envs.co._jax_decisions.entry_points``
makes them from ``PROBLEM`` and the module of its seeds.

Usage (``evaluate`` compiles once per call; keep ``evaluator(...)`` to reuse it)::

    out = evaluate("hmtsp", seed_jax_team("hmtsp"), relic_envs.splits("hmtsp").test["test100"][:2])
    out.objectives, out.repairs  # (2,), (2, 3)

>>> problem("fstsp").name
'fstsp'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from relic_envs.core.instance import Instance
from relic_envs.core.jax_kit import benchmark_module
from relic_envs.core.registry import family_modules

_MODULES = family_modules("co", "jax_eval")


def module(name: str) -> ModuleType:
    """The per-benchmark JAX module of a combinatorial benchmark (see the contract above)."""
    return benchmark_module(_MODULES, name, "combinatorial JAX evaluator")


def problem(name: str) -> Any:
    """The benchmark's JAX problem object (``module(name).PROBLEM``)."""
    return module(name).PROBLEM


def stack(name: str, instances: Sequence[Instance]) -> Any:
    """Stack same-size instances of a benchmark for its JAX evaluator."""
    return module(name).stack(instances)


def evaluator(name: str, policies: Mapping[str, Callable], *, x64: bool = True):
    """A compiled ``run(batch) -> Outcome`` for a team of JAX policies (``obs -> id``)."""
    return module(name).evaluator(policies, x64=x64)


def seed_jax_team(name: str) -> dict[str, Callable]:
    """The JAX twins of the benchmark's paper seed programs, one policy per role."""
    return module(name).seed_policies()


@dataclasses.dataclass(frozen=True)
class JaxResult:
    objectives: np.ndarray  # (B,) raw objective (minimised; score = -objective)
    repairs: np.ndarray  # (B, 3) repaired answers per role A, B, C
    steps: np.ndarray  # (B,) decisions taken
    outcome: Any  # the module's full Outcome (``result``, alias ``solution`` / ``schedule``: routes, sorties, schedules)


def evaluate(name: str, policies: Mapping[str, Callable], instances: Sequence[Instance], *,
             x64: bool = True) -> JaxResult:
    """Run a team of JAX policies on instances, all decisions in one compiled program."""
    out = evaluator(name, policies, x64=x64)(stack(name, instances))
    return JaxResult(out.objective, out.repairs, out.steps, out)
