"""DGC as PettingZoo environments, registered as ``relic/dgc-v0``.

``parallel_env(**kw)`` and ``env(**kw)`` (AEC) take the keywords of
:func:`relic_envs.make` (``instances``, ``regime``, ``max_cycles``, ...).
"""

from relic_envs.core.registry import pettingzoo_factories
from relic_envs.dcop._sweep import DCOPBenchmark
from relic_envs.dcop.dgc.roles import DGCProblem

BENCHMARK = DCOPBenchmark(DGCProblem())
parallel_env, env = pettingzoo_factories("dgc")
