"""The JAX batch evaluators of the DCOP benchmarks (needs ``pip install 'relic-envs[jax]'``).

>>> import relic_envs
>>> from relic_envs.dcop.jax_seeds import seed_jax_team
>>> result = evaluate("dgc", seed_jax_team("dgc"), relic_envs.splits("dgc").test_instances()[:2])
>>> result.costs.shape, bool(result.valid.all())
((2,), True)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from relic_envs.core.instance import Instance
from relic_envs.core.jax_kit import benchmark_module
from relic_envs.core.registry import family_modules
from relic_envs.dcop import _jax_sweep as js
from relic_envs.dcop._sweep import SWEEPS

_MODULES = family_modules("dcop", "jax_eval")


def problem_module(name: str):
    """The ``jax_eval`` module of a DCOP benchmark (``PROBLEM`` and ``peers``)."""
    return benchmark_module(_MODULES, name, "DCOP JAX evaluator")


def stack(name: str, instances: Sequence[Instance]) -> js.Batch:
    """Stack same-size instances of a benchmark for the JAX evaluator."""
    module = problem_module(name)
    return js.stack(module.PROBLEM, instances, peers=module.peers)


@dataclasses.dataclass(frozen=True)
class JaxResult:
    costs: np.ndarray  # (B,) raw objective after the last sweep
    valid: np.ndarray  # (B,) False where a policy returned an out-of-domain value
    x: np.ndarray  # (B, N) final assignments


def evaluator(name: str, policies: Mapping[str, Callable], *, sweeps: int = SWEEPS, x64: bool = True):
    """A compiled ``run(batch) -> (costs, valid, x)`` for a team of JAX policies."""
    return js.make_evaluator(problem_module(name).PROBLEM, policies, sweeps=sweeps, x64=x64)


def evaluate(name: str, policies: Mapping[str, Callable], instances: Sequence[Instance], *, x64: bool = True) -> JaxResult:
    """Run a team of JAX policies on instances, all sweeps in one compiled program."""
    costs, valid, x = evaluator(name, policies, x64=x64)(stack(name, instances))
    return JaxResult(costs, valid, x)
