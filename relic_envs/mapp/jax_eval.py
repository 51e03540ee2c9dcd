"""The JAX batch evaluators of the routing benchmarks (needs ``pip install 'relic-envs[jax]'``).

All ``N`` decision epochs of a batch of same-size instances run in one compiled
program; the movement rule lives once in :mod:`relic_envs.mapp._jax_routing`, each
benchmark's arrival rule and objective in ``relic_envs/mapp/<name>/jax_eval.py``.
Both interfaces: ``interface="paper"`` (the default) and ``"alt"`` (``_jax_alt``).

>>> import relic_envs
>>> from relic_envs.mapp.jax_seeds import seed_jax_team
>>> out = evaluate("mapp_pc", seed_jax_team("mapp_pc"), relic_envs.splits("mapp_pc").test["test50"][:2])
>>> out.objectives.shape, out.routes(0)[0][0]
((2,), 0)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from relic_envs.core.jax_kit import benchmark_module
from relic_envs.core.registry import family_modules
from relic_envs.mapp import _jax_routing as jr
from relic_envs.mapp._routing import RoutingInstance

_MODULES = family_modules("mapp", "jax_eval")


def problem(name: str) -> jr.JaxRoutingProblem:
    """The :class:`~relic_envs.mapp._jax_routing.JaxRoutingProblem` of a routing benchmark."""
    return benchmark_module(_MODULES, name, "routing JAX evaluator").PROBLEM


def stack(name: str, instances: Sequence[RoutingInstance]) -> jr.Batch:
    """Stack same-size instances of a benchmark for the JAX evaluator."""
    batch = jr.stack(problem(name), instances)
    return batch._replace(data=problem(name).compact(batch.data))


@dataclasses.dataclass(frozen=True)
class JaxResult:
    objectives: np.ndarray  # (B,) raw objective (higher is better; score = objective)
    steps: np.ndarray  # (B,) decision epochs until every route closed
    moves: np.ndarray  # (B, N, 3) node each route appended per epoch, -1 once that agent is home
    budget_left: np.ndarray  # (B, 3) remaining budget of each agent at the end

    def routes(self, i: int) -> list[list[int]]:
        """Instance ``i``'s three routes, as ``RoutingEpisode.routes`` lists them."""
        return jr.routes(self.moves[i])


def evaluator(name: str, policies: Mapping[str, Callable], *, interface: str = "paper", x64: bool = True):
    """A compiled ``run(batch) -> Outcome`` for a team of JAX policies (``obs -> node id``)."""
    return jr.make_evaluator(problem(name), policies, interface=interface, x64=x64)


def evaluate(name: str, policies: Mapping[str, Callable], instances: Sequence[RoutingInstance], *,
             interface: str = "paper", x64: bool = True) -> JaxResult:
    """Run a team of JAX policies on instances, all epochs in one compiled program."""
    out = evaluator(name, policies, interface=interface, x64=x64)(stack(name, instances))
    return JaxResult(out.objective, out.steps, out.moves, out.budget)
