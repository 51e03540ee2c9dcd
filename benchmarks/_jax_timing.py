"""Helpers shared by the throughput scripts: the instances, the env-loop and numpy-reference
rates, and the steady-state timing of a compiled evaluator apart from its compile time."""

from __future__ import annotations

import time

import numpy as np

import relic_envs
from relic_envs.seeds import seed_team


def time_compiled(run, batch, x64: bool, repeats: int) -> tuple[float, float, float]:
    """``(best seconds per call, compile seconds, XLA buffer MB)`` of a compiled evaluator.

    ``run(batch)`` is the evaluator, ``run.jitted`` its ``jax.jit`` function of
    ``batch.data``. The first call compiles; compile time is that call minus the best
    steady-state call.
    """
    import jax

    start = time.perf_counter()
    run(batch)  # compiles
    first = time.perf_counter() - start
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run(batch)
        best = min(best, time.perf_counter() - start)
    with jax.enable_x64(x64):
        stats = run.jitted.lower(batch.data).compile().memory_analysis()
    mb = (stats.temp_size_in_bytes + stats.argument_size_in_bytes + stats.output_size_in_bytes) / 2**20
    return best, first - best, mb


def instances_for(name: str, size: str, count: int) -> list:
    test = list(relic_envs.splits(name).test[size])
    if count <= len(test):
        return test[:count]
    bench = relic_envs.get_benchmark(name)
    rng = np.random.default_rng(12345)
    return test + [bench.generate(size, rng) for _ in range(count - len(test))]


def env_loop_rate(name: str, instances: list) -> tuple[float, int]:
    """Instance-steps per second of the parallel env loop, and the steps it played."""
    env = relic_envs.make(name, instances=instances)
    team = seed_team(name)
    steps = 0
    start = time.perf_counter()
    for k in range(len(instances)):
        obs, _ = env.reset(seed=k)
        while env.agents:
            obs, *_ = env.step({a: team[a](obs[a]) for a in env.agents})
            steps += 1
    return steps / (time.perf_counter() - start), steps


def reference_rate(name: str, instances: list) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    results = relic_envs.rollout(name, seed_team(name), instances)
    elapsed = time.perf_counter() - start
    steps = np.array([r.steps for r in results])
    return steps.sum() / elapsed, steps
