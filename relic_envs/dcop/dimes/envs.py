"""DiMES as PettingZoo environments, registered as ``relic/dimes-v0``."""

from relic_envs.core.registry import pettingzoo_factories
from relic_envs.dcop._sweep import DCOPBenchmark
from relic_envs.dcop.dimes.roles import DiMESProblem

BENCHMARK = DCOPBenchmark(DiMESProblem())
parallel_env, env = pettingzoo_factories("dimes")
