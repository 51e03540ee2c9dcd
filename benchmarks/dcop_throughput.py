"""DCOP throughput: instance-sweeps per second, three ways, side by side.

(a) the PettingZoo parallel env loop with numpy policies,
(b) the numpy reference (``rollout``: the same episode code without the env's dicts),
(c) the JAX evaluator (all 50 sweeps in one jit+vmap+scan program), float64 (exact
    parity, the default) and float32.

``--algorithm dsa-b`` (default) runs DSA-B as a policy team; ``--algorithm lsga-dsa``
runs LSGA-DSA: (a) its ``LSGATeam`` in the env, (b) ``solve_lsga``, (c) its JAX twin
``baselines.dcop.lsga_jax`` (one compiled program for the batch and its populations).

Compile time and peak memory are reported apart from steady-state speed. (a) and (b)
cost the same per instance whatever the batch, so they are measured on
``min(batch, --loop-cap)`` instances and reported as a rate. Prints a table; asserts
nothing.

    python benchmarks/dcop_throughput.py                       # DGC, batches 1 64 1024 8192
    python benchmarks/dcop_throughput.py --env dimes --batches 1 64 1024
    python benchmarks/dcop_throughput.py --algorithm lsga-dsa --batches 1 64 1024
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import time

import numpy as np
from _jax_timing import time_compiled  # benchmarks/ is the script's directory, first on sys.path

import relic_envs
from baselines.dcop import LSGATeam, dsa_team, solve_lsga
from relic_envs.dcop._sweep import SWEEPS


def instances_for(name: str, count: int) -> list:
    test = list(relic_envs.splits(name).test_instances())
    if count <= len(test):
        return test[:count]
    bench = relic_envs.get_benchmark(name)
    rng = np.random.default_rng(12345)
    return test + [bench.generate("test", rng) for _ in range(count - len(test))]


def env_loop_rate(name: str, algorithm: str, instances: list) -> float:
    env = relic_envs.make(name, instances=instances)
    team = dsa_team() if algorithm == "dsa-b" else LSGATeam(name)
    start = time.perf_counter()
    for k in range(len(instances)):
        obs, _ = env.reset(seed=k)
        if algorithm == "lsga-dsa":
            team.reset(env.instance)
        while env.agents:
            obs, *_ = env.step({a: team[a](obs[a]) for a in env.agents})
    return len(instances) * SWEEPS / (time.perf_counter() - start)


def reference_rate(name: str, algorithm: str, instances: list) -> float:
    start = time.perf_counter()
    if algorithm == "dsa-b":
        relic_envs.rollout(name, dsa_team(), instances)
    else:
        solve_lsga(name, instances)
    return len(instances) * SWEEPS / (time.perf_counter() - start)


def jax_rates(name: str, algorithm: str, instances: list, x64: bool, repeats: int) -> tuple[float, float, float]:
    from baselines.dcop.dsa_jax import dsa_jax_team
    from baselines.dcop.lsga_jax import lsga_evaluator, stack_lsga
    from relic_envs.dcop import jax_eval

    if algorithm == "dsa-b":
        batch, run = jax_eval.stack(name, instances), jax_eval.evaluator(name, dsa_jax_team(), x64=x64)
    else:
        batch, run = stack_lsga(name, instances), lsga_evaluator(name, x64=x64)
    best, compile_s, temp_mb = time_compiled(run, batch, x64, repeats)
    return len(instances) * SWEEPS / best, compile_s, temp_mb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="dgc", choices=relic_envs.names())
    parser.add_argument("--algorithm", default="dsa-b", choices=["dsa-b", "lsga-dsa"])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 64, 1024, 8192])
    parser.add_argument("--loop-cap", type=int, default=64, help="instances measured for (a) and (b)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import jax

    print(f"{args.env}, {args.algorithm}, {SWEEPS} sweeps; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, jax {jax.__version__} on {jax.devices()[0].platform}")
    header = (f"{'batch':>6} | {'(a) env loop':>12} | {'(b) numpy ref':>13} | {'(c) jax f64':>11} | {'compile s':>9} | "
              f"{'XLA MB':>7} | {'(c) jax f32':>11} | {'c64/a':>7} | {'c32/a':>7}")
    print("instance-sweeps per second (steady state, best of repeats)")
    print(header)
    print("-" * len(header))
    for size in args.batches:
        instances = instances_for(args.env, size)
        loop = instances[: min(size, args.loop_cap)]
        a = env_loop_rate(args.env, args.algorithm, loop)
        b = reference_rate(args.env, args.algorithm, loop)
        c64, compile64, mem64 = jax_rates(args.env, args.algorithm, instances, True, args.repeats)
        c32, _, _ = jax_rates(args.env, args.algorithm, instances, False, args.repeats)
        print(f"{size:>6} | {a:>12.3g} | {b:>13.3g} | {c64:>11.3g} | {compile64:>9.2f} | {mem64:>7.1f} | "
              f"{c32:>11.3g} | {c64 / a:>7.0f} | {c32 / a:>7.0f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory of this process: {peak:.0f} MB")


if __name__ == "__main__":
    main()
