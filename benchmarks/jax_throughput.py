"""Throughput of every benchmark, three ways side by side: one command, one table.

(a) the PettingZoo parallel env loop with numpy policies,
(b) the numpy reference (``relic_envs.rollout``: the same episode code without the env's dicts),
(c) the JAX batch evaluator (every step of the batch in one jit+vmap program), float64
    (exact parity with (b), the default) and float32.

The team is DSA-B for the DCOPs (``--algorithm lsga-dsa`` runs LSGA-DSA: its
``LSGATeam``, ``solve_lsga`` and its JAX twin) and the paper's seed programs (their JAX
twins for (c)) for every other benchmark. The unit is an instance-step: one sweep of one
instance for the DCOPs (50 per episode), one decision epoch (routing, scheduling) or one
construction decision (combinatorial) of one instance elsewhere, counted as the numpy
episode counts them, so every column of a row divides the same steps. (a) and (b) cost
the same per instance whatever the batch, so they are measured on ``min(batch,
--loop-cap)`` instances and reported as a rate; a row whose JAX episode lengths differ
from numpy's stops the script. Compile time, XLA buffer sizes (arguments, outputs and
temporaries of the compiled program) and the process's peak resident memory are
reported apart from steady-state speed (best of ``--repeats`` calls on a batch already on
the device: placing it there is a one-off per batch, not a per-evaluation cost); ``cpu/wall`` is the
process's CPU time over the wall time of the float64 steady-state calls, i.e. how many
cores the compiled program kept busy.

``--host-devices N`` splits the CPU into N XLA devices (default: one per usable core):
every evaluator then runs one copy of its program per device, each on its share of the
batch (``relic_envs.core.jax_devices.over_devices``), and the batch is placed split over
them; ``--host-devices 1`` measures XLA's single CPU device.
A user turns the same thing on with ``jax.config.update("jax_num_cpu_devices", N)``
before JAX first touches the CPU (or ``XLA_FLAGS=--xla_force_host_platform_device_count=N``);
nothing else changes. On a GPU nothing changes either: the table says which device ran it.

    python benchmarks/jax_throughput.py                              # all 14 benchmarks, batch 1024
    python benchmarks/jax_throughput.py --env dgc --batches 1 64 1024 8192
    python benchmarks/jax_throughput.py --family mas co --host-devices 1
    python benchmarks/jax_throughput.py --env dgc --algorithm lsga-dsa
    python benchmarks/jax_throughput.py --batches 262144 --distinct 1024 --no-f32   # a GPU's batch

Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

FAMILIES = {
    "mapp": ("mapp_pc", "mapp_ar", "mapp_ds"),
    "mas": ("mas_jd", "mas_st", "mas_fs"),
    "co": ("hmtsp", "fstsp", "fjagv", "mrcps"),
    "dcop": ("dgc", "dimes", "sensor_dcsp", "shds"),
}
FAMILY_OF = {name: family for family, names in FAMILIES.items() for name in names}
UNIT = {"dcop": "sweep", "mapp": "epoch", "mas": "epoch", "co": "decision"}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", nargs="+", choices=list(FAMILY_OF), help="benchmarks (default: every one)")
    parser.add_argument("--family", nargs="+", choices=list(FAMILIES), help="families (default: every one)")
    parser.add_argument("--size", default=None,
                        help="test split of the non-DCOP benchmarks (default: the first: test50 or test100)")
    parser.add_argument("--algorithm", default="dsa-b", choices=["dsa-b", "lsga-dsa"], help="the DCOP team")
    parser.add_argument("--batches", type=int, nargs="+", default=[1024])
    parser.add_argument("--loop-cap", type=int, default=64, help="instances measured for (a) and (b)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--host-devices", type=int, default=len(os.sched_getaffinity(0)),
                        help="XLA CPU devices to split each batch over (default: one per usable core; 1: XLA's "
                             "single CPU device); no effect where JAX runs on a GPU")
    parser.add_argument("--no-f32", action="store_true", help="skip the float32 column (halves the time)")
    parser.add_argument("--distinct", type=int, default=0,
                        help="build at most this many distinct instances and repeat them, on the device, up to the "
                             "batch (0: every instance distinct). Generating and stacking 262,144 instances in numpy "
                             "takes longer than timing them; the compiled program does the same work per instance "
                             "whether or not two instances are equal")
    return parser.parse_args()


# -- instances ---------------------------------------------------------------------------
def instances_for(name: str, size: str | None, count: int) -> list:
    """The first ``count`` test instances of the split, then fresh ones from its generator (fixed seed)."""
    import relic_envs

    splits = relic_envs.splits(name)
    if FAMILY_OF[name] == "dcop":
        test, regime = list(splits.test_instances()), "test"
    else:
        size = size or sorted(splits.test)[0]
        test, regime = list(splits.test[size]), size
    if count <= len(test):
        return test[:count]
    rng = np.random.default_rng(12345)
    bench = relic_envs.get_benchmark(name)
    return test + [bench.generate(regime, rng) for _ in range(count - len(test))]


# -- the three ways ---------------------------------------------------------------------
def numpy_team(name: str, algorithm: str):
    if FAMILY_OF[name] != "dcop":
        from relic_envs.seeds import seed_team

        return seed_team(name)
    from baselines.dcop import LSGATeam, dsa_team

    return dsa_team() if algorithm == "dsa-b" else LSGATeam(name)


def env_loop_rate(name: str, algorithm: str, instances: list) -> tuple[float, int]:
    """Instance-steps per second of the PettingZoo parallel env loop, and the steps played."""
    import relic_envs

    env = relic_envs.make(name, instances=instances)
    team = numpy_team(name, algorithm)
    steps = 0
    start = time.perf_counter()
    for k in range(len(instances)):
        obs, _ = env.reset(seed=k)
        if hasattr(team, "reset"):
            team.reset(env.instance)  # LSGA-DSA keeps a population per instance
        while env.agents:
            obs, *_ = env.step({a: team[a](obs[a]) for a in env.agents})
            steps += 1
    return steps / (time.perf_counter() - start), steps


def reference_rate(name: str, algorithm: str, instances: list) -> tuple[float, np.ndarray]:
    """Instance-steps per second of the numpy reference, and the steps of each instance."""
    import relic_envs

    start = time.perf_counter()
    if FAMILY_OF[name] == "dcop" and algorithm == "lsga-dsa":
        from baselines.dcop import solve_lsga
        from relic_envs.dcop._sweep import SWEEPS

        solve_lsga(name, instances)
        steps = np.full(len(instances), SWEEPS)
    else:
        results = relic_envs.rollout(name, numpy_team(name, algorithm), instances)
        steps = np.array([r.steps for r in results])
    return steps.sum() / (time.perf_counter() - start), steps


def jax_evaluator(name: str, algorithm: str, instances: list, x64: bool) -> tuple[Callable, Any, Callable]:
    """``(run, batch, steps)``: the compiled evaluator, the stacked batch, and ``steps(out)`` per instance."""
    family = FAMILY_OF[name]
    if family == "dcop":
        from relic_envs.dcop._sweep import SWEEPS

        if algorithm == "lsga-dsa":
            from baselines.dcop.lsga_jax import lsga_evaluator, stack_lsga

            batch, run = stack_lsga(name, instances), lsga_evaluator(name, x64=x64)
        else:
            from baselines.dcop.dsa_jax import dsa_jax_team
            from relic_envs.dcop import jax_eval

            batch, run = jax_eval.stack(name, instances), jax_eval.evaluator(name, dsa_jax_team(), x64=x64)
        return run, batch, lambda out: np.full(np.shape(out[0])[0], SWEEPS)  # out: (costs, valid, x)
    if family == "mapp":
        from relic_envs.mapp import jax_eval
        from relic_envs.mapp.jax_seeds import seed_jax_team
    elif family == "mas":
        from relic_envs.mas import jax_eval
        from relic_envs.mas.jax_seeds import seed_jax_team
    else:
        from relic_envs.co import jax_eval
        from relic_envs.co.jax_eval import seed_jax_team
    batch = jax_eval.stack(name, instances)
    return jax_eval.evaluator(name, seed_jax_team(name), x64=x64), batch, lambda out: np.asarray(out.steps)


def place(batch, size: int | None = None):
    """``batch`` on the device, once, before the timed calls (as the learner, which scores
    many teams on one batch, and an RL loop keep it), split over the host devices as the
    evaluators split it (``relic_envs.core.jax_devices.batch_sharding``). A batch of fewer
    than ``size`` (default: its own size) instances is repeated up to ``size`` on the device (``--distinct``), so
    the host never holds the large batch."""
    import jax
    import jax.numpy as jnp

    from relic_envs.core.jax_devices import batch_sharding

    data = jax.device_put(dict(batch.data))
    have = len(jax.tree.leaves(data)[0])
    size = have if size is None else size
    if have < size:
        reps = -(-size // have)
        data = jax.tree.map(lambda a: jnp.concatenate([a] * reps)[:size], data)
    return batch._replace(data=jax.device_put(data, batch_sharding(size)), size=size)


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def time_jax(name: str, algorithm: str, instances: list, x64: bool, repeats: int, size: int):
    """``(best seconds per batch, compile seconds, XLA MB, steps per instance, CPU/wall)``.

    CPU/wall is the process's CPU time over the wall time of the steady-state calls: about
    the number of cores the compiled program kept busy.
    """
    import jax

    run, batch, steps_of = jax_evaluator(name, algorithm, instances, x64)
    with jax.enable_x64(x64):
        batch = place(batch, size)
    start = time.perf_counter()
    out = run(batch)  # compiles
    first = time.perf_counter() - start
    best, wall, cpu = float("inf"), 0.0, cpu_seconds()
    for _ in range(repeats):
        start = time.perf_counter()
        run(batch)
        best = min(best, time.perf_counter() - start)
        wall += time.perf_counter() - start
    cores = (cpu_seconds() - cpu) / wall
    with jax.enable_x64(x64):
        lowered = run.jitted.lower(batch.data)
        stats = lowered.compile().memory_analysis()
    mb = (stats.temp_size_in_bytes + stats.argument_size_in_bytes + stats.output_size_in_bytes) / 2**20
    return best, max(first - best, 0.0), mb, steps_of(out), cores


# -- the table --------------------------------------------------------------------------
def main() -> None:
    args = parse_args()
    import jax

    jax.config.update("jax_num_cpu_devices", args.host_devices)  # before JAX starts its CPU backend
    from relic_envs.core.jax_devices import batch_devices

    names = list(args.env or [])
    for family in args.family or ([] if names else list(FAMILIES)):
        names += [n for n in FAMILIES[family] if n not in names]
    device = jax.devices()[0]
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
          f"jax {jax.__version__}; device: {device.platform} ({getattr(device, 'device_kind', '?')}), "
          f"{jax.device_count()} device(s), batch split over {len(batch_devices(args.batches[0]))}")
    print(f"instance-steps per second (steady state, best of {args.repeats}); DCOP team: {args.algorithm}, "
          "others: the seed programs")
    header = (f"{'benchmark':<12} | {'unit':<8} | {'batch':>5} | {'steps/inst':>10} | {'(a) env loop':>12} | "
              f"{'(b) numpy ref':>13} | {'(c) jax f64':>11} | {'(c) jax f32':>11} | {'compile s':>9} | "
              f"{'XLA MB':>7} | {'cpu/wall':>8} | {'c64/a':>6} | {'c32/a':>6}")
    print(header)
    print("-" * len(header))
    for name in names:
        for size in args.batches:
            instances = instances_for(name, args.size, min(size, args.distinct or size))
            loop = instances[: min(size, args.loop_cap)]
            a, _ = env_loop_rate(name, args.algorithm, loop)
            b, ref_steps = reference_rate(name, args.algorithm, loop)
            t64, compile64, mb64, steps, cores = time_jax(name, args.algorithm, instances, True, args.repeats, size)
            if not np.array_equal(steps[: len(loop)], ref_steps):  # a speed table of a wrong evaluator is worthless
                raise SystemExit(f"{name}: JAX and numpy episode lengths differ: run the family's parity tests")
            c64 = steps.sum() / t64
            c32_rate, c32_ratio = "-", "-"  # --no-f32: not measured
            if not args.no_f32:
                t32, *_ = time_jax(name, args.algorithm, instances, False, args.repeats, size)
                c32 = steps.sum() / t32
                c32_rate, c32_ratio = f"{c32:.3g}", f"{c32 / a:.0f}"
            print(f"{name:<12} | {UNIT[FAMILY_OF[name]]:<8} | {size:>5} | {steps.mean():>10.1f} | {a:>12.3g} | "
                  f"{b:>13.3g} | {c64:>11.3g} | {c32_rate:>11} | {compile64:>9.2f} | {mb64:>7.1f} | {cores:>8.2f} | "
                  f"{c64 / a:>6.0f} | {c32_ratio:>6}", flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory of this process: {peak:.0f} MB")


if __name__ == "__main__":
    main()
