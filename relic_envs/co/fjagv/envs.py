"""FJAGV as PettingZoo environments, registered as ``relic/fjagv-v0``.

``parallel_env(**kw)`` and ``env(**kw)`` (AEC) take the keywords of
:func:`relic_envs.make` (``instances``, ``regime``, ``max_cycles``, ``on_invalid``, ...).
"""

from relic_envs.co._construct import ConstructiveBenchmark
from relic_envs.co.fjagv.roles import FJAGVProblem
from relic_envs.core.registry import pettingzoo_factories

BENCHMARK = ConstructiveBenchmark(FJAGVProblem())
parallel_env, env = pettingzoo_factories("fjagv")
