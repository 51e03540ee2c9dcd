"""SHDS as PettingZoo environments, registered as ``relic/shds-v0``."""

from relic_envs.core.registry import pettingzoo_factories
from relic_envs.dcop._sweep import DCOPBenchmark
from relic_envs.dcop.shds.roles import SHDSProblem

BENCHMARK = DCOPBenchmark(SHDSProblem())
parallel_env, env = pettingzoo_factories("shds")
