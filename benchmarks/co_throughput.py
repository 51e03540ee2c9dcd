"""Combinatorial (CO) throughput: instance-steps per second, env loop vs JAX evaluator.

(a) the PettingZoo parallel env loop with the numpy seed programs (paper interface),
(b) the numpy reference (``rollout``: the same episode code without the env's dicts),
(c) the JAX evaluator with the JAX seed twins (``relic_envs.co.jax_eval``: every
    decision of a batch in one jit+vmap program), float64 (exact parity, the default)
    and float32.

An instance-step is one decision of one instance that the numpy episode takes (the
same count for all columns); a JAX batch runs until its longest construction
completes, so the idle tail of the others counts as overhead, not as extra steps. Compile time and XLA buffer sizes
are reported apart from steady-state speed. (a) and (b) cost the same per instance
whatever the batch, so they are measured on ``min(batch, --loop-cap)`` instances and
reported as a rate. Prints a table; asserts nothing but equal episode lengths.

    python benchmarks/co_throughput.py                           # hmtsp, test100, batches 1 64 1024
    python benchmarks/co_throughput.py --env fstsp --size test200
"""

from __future__ import annotations

import argparse
import os
import platform
import resource

import numpy as np
from _jax_timing import env_loop_rate, instances_for, reference_rate, time_compiled  # benchmarks/ is on sys.path

import relic_envs

COS = ("hmtsp", "fstsp", "fjagv", "mrcps")


def jax_timing(name: str, instances: list, x64: bool, repeats: int) -> tuple[float, float, float, np.ndarray]:
    """``(best seconds per batch, compile seconds, XLA MB, steps per instance)``."""
    from relic_envs.co import jax_eval

    batch = jax_eval.stack(name, instances)
    run = jax_eval.evaluator(name, jax_eval.seed_jax_team(name), x64=x64)
    best, compile_s, mb = time_compiled(run, batch, x64, repeats)
    return best, compile_s, mb, run(batch).steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="hmtsp", choices=COS)
    parser.add_argument("--size", default="test100", help="a test split of the benchmark (e.g. test100, test200)")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 64, 1024])
    parser.add_argument("--loop-cap", type=int, default=64, help="instances measured for (a) and (b)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sizes = sorted(relic_envs.splits(args.env).test)
    if args.size not in sizes:
        parser.error(f"--size: {args.env} has test splits {sizes}, not {args.size!r}")
    import jax

    print(f"{args.env} {args.size}, seed team (paper interface); {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, jax {jax.__version__} on {jax.devices()[0].platform}")
    header = (f"{'batch':>6} | {'steps/inst':>10} | {'(a) env loop':>12} | {'(b) numpy ref':>13} | {'(c) jax f64':>11} | "
              f"{'compile s':>9} | {'XLA MB':>7} | {'(c) jax f32':>11} | {'c64/a':>7} | {'c32/a':>7}")
    print("instance-steps per second (steady state, best of repeats)")
    print(header)
    print("-" * len(header))
    for size in args.batches:
        instances = instances_for(args.env, args.size, size)
        loop = instances[: min(size, args.loop_cap)]
        a, _ = env_loop_rate(args.env, loop)
        b, ref_steps = reference_rate(args.env, loop)
        t64, compile64, mb64, steps64 = jax_timing(args.env, instances, True, args.repeats)
        t32, _, _, _ = jax_timing(args.env, instances, False, args.repeats)
        c64, c32 = steps64.sum() / t64, steps64.sum() / t32  # the same steps (numpy's) for every column
        if not np.array_equal(steps64[: len(loop)], ref_steps):  # a speed table of a wrong evaluator is worthless
            raise SystemExit("JAX and numpy episode lengths differ: run tests/co/test_jax_*_parity.py")
        print(f"{size:>6} | {steps64.mean():>10.1f} | {a:>12.3g} | {b:>13.3g} | {c64:>11.3g} | {compile64:>9.2f} | "
              f"{mb64:>7.1f} | {c32:>11.3g} | {c64 / a:>7.0f} | {c32 / a:>7.0f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory of this process: {peak:.0f} MB")


if __name__ == "__main__":
    main()
