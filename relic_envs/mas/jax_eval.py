"""The JAX batch evaluators of the scheduling benchmarks (needs ``pip install 'relic-envs[jax]'``).

Every decision epoch of a batch of same-size instances runs in one compiled program;
the dispatch rules live once in :mod:`relic_envs.mas._jax_dispatch`, each benchmark's
role tables and objective in ``relic_envs/mas/<name>/jax_eval.py``. Both interfaces
(``interface="paper"`` or ``"alt"``; the alternative's shared getters in
:mod:`relic_envs.mas._jax_alt`).

>>> import relic_envs
>>> batch = stack("mas_fs", relic_envs.splits("mas_fs").test["test50"][:2])
>>> batch.data["dur"].shape  # (B, 3 resources, N jobs, S operations)
(2, 3, 50, 3)

then ``evaluate("mas_fs", seed_jax_team("mas_fs"), instances)`` (``relic_envs.mas.jax_seeds``)
compiles once per batch shape and returns a :class:`JaxResult` (tests/mas/test_jax_parity.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from relic_envs.core.jax_kit import benchmark_module
from relic_envs.core.registry import family_modules
from relic_envs.mas import _jax_dispatch as jd
from relic_envs.mas._dispatch import DispatchInstance

_MODULES = family_modules("mas", "jax_eval")


def problem(name: str) -> jd.JaxDispatchProblem:
    """The :class:`~relic_envs.mas._jax_dispatch.JaxDispatchProblem` of a scheduling benchmark."""
    return benchmark_module(_MODULES, name, "scheduling JAX evaluator").PROBLEM


def stack(name: str, instances: Sequence[DispatchInstance]) -> jd.Batch:
    """Stack same-size instances of a benchmark for the JAX evaluator."""
    return jd.stack(problem(name), instances)


@dataclasses.dataclass(frozen=True)
class JaxResult:
    objectives: np.ndarray  # (B,) raw objective in the paper's direction; nan where the rollout was voided
    valid: np.ndarray  # (B,) bool
    reasons: np.ndarray  # (B,) int32 index into _jax_dispatch.REASONS ("" = valid, "range", "pool", "stall")
    void_roles: np.ndarray  # (B,) int32 0, 1, 2 = A, B, C; -1 if valid
    steps: np.ndarray  # (B,) decision epochs (the voiding one included), as RolloutResult.steps
    start: np.ndarray  # (B, N, S) start time of each operation, nan if never dispatched
    completion: np.ndarray  # (B, N, S) completion time of each operation, nan if never dispatched
    machine: np.ndarray  # (B, N, S) resource (0, 1, 2) that ran each operation, -1 if never dispatched

    def reason(self, i: int) -> str | None:
        """Instance ``i``'s void reason as ``Invalid.reason`` names it, or ``None`` if valid."""
        return jd.REASONS[int(self.reasons[i])] or None


def evaluator(name: str, policies: Mapping[str, Callable], *, interface: str = "paper", x64: bool = True,
              loop: str = "while"):
    """A compiled ``run(batch) -> Outcome`` for a team of JAX policies (``obs -> int32 job id or -1``)."""
    return jd.make_evaluator(problem(name), policies, interface=interface, x64=x64, loop=loop)


def evaluate(name: str, policies: Mapping[str, Callable], instances: Sequence[DispatchInstance], *,
             interface: str = "paper", x64: bool = True, loop: str = "while") -> JaxResult:
    """Run a team of JAX policies on instances, all epochs in one compiled program."""
    out = evaluator(name, policies, interface=interface, x64=x64, loop=loop)(stack(name, instances))
    return JaxResult(out.objective, out.valid, out.reason, out.void_role, out.steps, out.start, out.end, out.machine)
