"""MAS-FS as PettingZoo environments, registered as ``relic/mas_fs-v0``.

``parallel_env(**kw)`` and ``env(**kw)`` (AEC) take the keywords of
:func:`relic_envs.make` (``interface="alt"``, ``instances``, ``regime``, ``max_cycles``, ``on_invalid``, ...).
"""

from relic_envs.core.registry import pettingzoo_factories
from relic_envs.mas._dispatch import DispatchBenchmark
from relic_envs.mas.fs.roles import FSProblem

BENCHMARK = DispatchBenchmark(FSProblem())
parallel_env, env = pettingzoo_factories("mas_fs")
