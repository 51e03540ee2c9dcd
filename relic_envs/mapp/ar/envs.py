"""MAPP-AR as PettingZoo environments, registered as ``relic/mapp_ar-v0``.

``parallel_env(**kw)`` and ``env(**kw)`` (AEC) take the keywords of
:func:`relic_envs.make` (``interface="alt"``, ``instances``, ``regime``, ``max_cycles``, ...).
"""

from relic_envs.core.registry import pettingzoo_factories
from relic_envs.mapp._routing import RoutingBenchmark
from relic_envs.mapp.ar.roles import ARProblem

BENCHMARK = RoutingBenchmark(ARProblem())
parallel_env, env = pettingzoo_factories("mapp_ar")
