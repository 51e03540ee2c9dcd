"""SensorDCSP as PettingZoo environments, registered as ``relic/sensor_dcsp-v0``."""

from relic_envs.core.registry import pettingzoo_factories
from relic_envs.dcop._sweep import DCOPBenchmark
from relic_envs.dcop.sensor_dcsp.roles import SensorProblem

BENCHMARK = DCOPBenchmark(SensorProblem())
parallel_env, env = pettingzoo_factories("sensor_dcsp")
