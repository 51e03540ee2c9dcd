"""MAS-ST as PettingZoo environments, registered as ``relic/mas_st-v0``.

``parallel_env(**kw)`` and ``env(**kw)`` (AEC) take the keywords of
:func:`relic_envs.make` (``interface="alt"``, ``instances``, ``regime``, ``max_cycles``, ``on_invalid``, ...).
"""

from relic_envs.core.registry import pettingzoo_factories
from relic_envs.mas._dispatch import DispatchBenchmark
from relic_envs.mas.st.roles import STProblem

BENCHMARK = DispatchBenchmark(STProblem())
parallel_env, env = pettingzoo_factories("mas_st")
