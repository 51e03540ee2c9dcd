"""The suite's core API: registry, instances, signatures, policies, rollout, splits."""

from relic_envs.core.benchmark import ROLES, WAIT, Benchmark, Episode, Invalid
from relic_envs.core.instance import Instance, load_instances, save_instances
from relic_envs.core.program import ProgramPolicy, check_source
from relic_envs.core.registry import SPECS, BenchmarkSpec, get_benchmark, make, names, spec
from relic_envs.core.rollout import RolloutResult, rollout
from relic_envs.core.signature import Param, Signature

__all__ = [
    "ROLES", "SPECS", "WAIT", "Benchmark", "BenchmarkSpec", "Episode", "Instance", "Invalid", "Param",
    "ProgramPolicy", "RolloutResult", "Signature", "check_source", "get_benchmark", "load_instances",
    "make", "names", "rollout", "save_instances", "spec",
]
