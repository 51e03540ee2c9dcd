"""Sandbox overhead: time to evaluate the seed team on a 16-instance mixed batch.

For every built benchmark (and interface), the seed team is evaluated on the mixed
batch of training batch 3 (10 current + 2 x 3 replayed = 16 instances) by
:class:`relic_learner.evaluate.TeamEvaluator` three ways, in one run:

* in-process: ``sandbox=False`` (trusted code, no limits), one core, BLAS single-threaded;
* sandbox, 1 worker: the same work in one sandbox process (the overhead of isolation);
* sandbox, pool: the batch split over ``os.cpu_count()`` workers (what the search uses).

Every timed evaluation uses a distinct team source (a unique trailing comment) so
the evaluator's cache never answers; workers are started before timing. The three
modes alternate, so they share the machine's noise; prints the best of ``--repeats``
runs of each and the ratios. Usage::

    python benchmarks/evaluator_latency.py [--repeats 5] [--env dgc ...]
"""

from __future__ import annotations

import os
import sys

# Run this process under the environment the sandbox workers get (single-threaded BLAS,
# fixed glibc malloc thresholds), or the in-process column would measure BLAS threads
# fighting over the cores and a cold malloc instead of the sandbox. glibc reads its
# variables at start-up, hence the re-exec.
_SAME_AS_WORKERS = {
    "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0",
    "MALLOC_MMAP_THRESHOLD_": str(32 * 2**20), "MALLOC_TRIM_THRESHOLD_": str(64 * 2**20),
}
if any(os.environ.get(k) != v for k, v in _SAME_AS_WORKERS.items()):
    os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, **_SAME_AS_WORKERS})

import argparse  # noqa: E402
import itertools  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import relic_envs  # noqa: E402
from relic_envs.core.registry import get_benchmark  # noqa: E402
from relic_envs.seeds import seed_source  # noqa: E402
from relic_learner.batches import mixed_batch  # noqa: E402
from relic_learner.evaluate import TeamEvaluator  # noqa: E402

_unique = itertools.count()


def _once(evaluator: TeamEvaluator, team: dict[str, str], batch) -> float:
    fresh = {r: f"{src}\n# run {next(_unique)}\n" for r, src in team.items()}
    start = time.perf_counter()
    result = evaluator.evaluate(fresh, batch)
    elapsed = time.perf_counter() - start
    if not result.ok:
        raise RuntimeError(f"seed team invalid: {result.status}")
    return elapsed


def _timed(evaluators: list[TeamEvaluator], team: dict[str, str], batch, repeats: int) -> list[float]:
    """Best time of each evaluator; the modes alternate so they share the machine's noise."""
    for ev in evaluators:  # warm-up: imports, compiled code, started workers
        _once(ev, team, batch)
    times: list[list[float]] = [[] for _ in evaluators]
    for _ in range(repeats):
        for k, ev in enumerate(evaluators):
            times[k].append(_once(ev, team, batch))
    return [min(t) for t in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--env", nargs="*", default=None, help="benchmarks (default: all built)")
    args = parser.parse_args()
    names = args.env or relic_envs.names()
    cores = os.cpu_count() or 1
    print(f"machine: {platform.processor() or platform.machine()}, {cores} cores, Python {platform.python_version()}")
    print(f"best of {args.repeats} evaluations (modes interleaved) of the seed team on a 16-instance mixed batch (batch 3)\n")
    header = f"{'benchmark':<20} {'in-process s':>12} {'sandbox 1w s':>12} {'overhead':>9} {f'pool {cores}w s':>12} {'pool/in-proc':>12}"
    print(header)
    print("-" * len(header))
    for name in names:
        bench = get_benchmark(name)
        batch = mixed_batch(relic_envs.splits(name).train, 3, seed=0)
        for interface in bench.interfaces:
            team = {r: seed_source(name, r, interface) for r in bench.roles}
            with (
                TeamEvaluator(bench, interface=interface, sandbox=False) as plain,
                TeamEvaluator(bench, interface=interface, workers=1) as one,
                TeamEvaluator(bench, interface=interface, workers=cores) as pool,
            ):
                t_plain, t_one, t_pool = _timed([plain, one, pool], team, batch, args.repeats)
                isolation = one._workers[0].isolation
            label = name if interface == "paper" else f"{name} ({interface})"
            print(f"{label:<20} {t_plain:>12.3f} {t_one:>12.3f} {100 * (t_one / t_plain - 1):>8.1f}% "
                  f"{t_pool:>12.3f} {t_pool / t_plain:>11.2f}x")
    held = [k for k, v in isolation.items() if v]
    print(f"\nworker OS isolation: {', '.join(held) or 'none (see docs/learner.md)'}")


if __name__ == "__main__":
    main()
