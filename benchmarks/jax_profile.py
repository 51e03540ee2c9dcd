"""Where a JAX evaluator spends its time: the compiled program's costliest XLA operations.

Runs the evaluator of ``benchmarks/jax_throughput.py`` (same team, same instances, batch
already on the device) once under ``jax.profiler`` and prints the operations (XLA
fusions, loops, copies) by total time, with how often each ran. Dump the optimised HLO
(``XLA_FLAGS=--xla_dump_to=DIR``) to see which lines of the benchmark's code a fusion
holds: its ``op_name`` metadata names them. Every speed change of issue 20 started from
this table (see ``benchmarks/RESULTS.md``). Prints a table; asserts nothing.

    python benchmarks/jax_profile.py --env fjagv
    python benchmarks/jax_profile.py --env shds --batch 256 --top 30
"""

from __future__ import annotations

import argparse
import collections
import glob
import gzip
import json
import tempfile
import time

import jax
from jax_throughput import FAMILY_OF, instances_for, jax_evaluator, place


def profile(name: str, batch_size: int, algorithm: str, x64: bool) -> tuple[float, collections.Counter, collections.Counter]:
    """``(seconds of one steady-state call, total microseconds per operation, calls per operation)``."""
    instances = instances_for(name, None, batch_size)[:batch_size]
    run, batch, _ = jax_evaluator(name, algorithm, instances, x64)
    with jax.enable_x64(x64):
        batch = place(batch)
        run(batch)  # compile
        start = time.perf_counter()
        run(batch)
        seconds = time.perf_counter() - start
        with tempfile.TemporaryDirectory() as folder:
            jax.profiler.start_trace(folder, create_perfetto_trace=True)
            run(batch)
            jax.profiler.stop_trace()
            (trace,) = glob.glob(f"{folder}/**/*.trace.json.gz", recursive=True)
            with gzip.open(trace) as handle:
                events = json.load(handle)["traceEvents"]
    total, calls = collections.Counter(), collections.Counter()
    for event in events:
        if event.get("ph") == "X" and not event["name"].startswith(("$", "Thunk")):  # python frames, executor waits
            total[event["name"]] += event["dur"]
            calls[event["name"]] += 1
    return seconds, total, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", required=True, choices=sorted(FAMILY_OF))
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--algorithm", default="dsa-b", choices=("dsa-b", "lsga-dsa"), help="DCOP team")
    parser.add_argument("--f32", action="store_true", help="float32 instead of float64")
    args = parser.parse_args()
    seconds, total, calls = profile(args.env, args.batch, args.algorithm, not args.f32)
    print(f"{args.env}, batch {args.batch}, {'float32' if args.f32 else 'float64'}, jax {jax.__version__} "
          f"on {jax.devices()[0].platform}: {seconds * 1e3:.1f} ms per call (untraced)")
    print("operation time summed over threads and calls (a fusion split over both cores counts twice)")
    print(f"{'ms':>9} | {'calls':>6} | {'ms/call':>8} | operation")
    for label, micros in total.most_common(args.top):
        print(f"{micros / 1e3:9.2f} | {calls[label]:6d} | {micros / 1e3 / calls[label]:8.3f} | {label[:80]}")


if __name__ == "__main__":
    main()
