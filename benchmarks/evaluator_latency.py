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
runs of each and the ratios.

``--before REV`` also measures the sandbox of an earlier commit in the same run: a
git worktree of REV is made in a temporary directory and, for each benchmark, this
script times that code's sandbox (1 worker, pool) in a child process with the
worktree first on ``PYTHONPATH``, right after timing today's. ``--teams K`` times K
distinct teams per call (``evaluate_many``), the shape in which RELIC re-validates its
programs and scores the incumbent beside the seeds, and the AHD comparators score a
generation (RELIC scores each new proposal alone, as one team, between two LLM calls).
``--cpu`` adds the CPU seconds of each mode (this process and every process below it:
referees, zygotes, role workers; the least of the repeats): what bounds the pool when its
processes already share every core.

``--rounds N`` (with ``--before``) prints a second table instead of the first: for each
benchmark, N rounds, each timing both commits' sandboxes (1 worker and pool, best of
``--repeats``) in fresh child processes, the commits' order alternating from round to
round; then per column the median over rounds, and the median, least and greatest of the
rounds' now/before ratios. On a VM where one run differs from the next by 10-40%, one
best-of-N draw per commit decides a ratio near a threshold by luck; the spread of the
ratios over rounds says how far to trust it. Usage::

    python benchmarks/evaluator_latency.py [--repeats 5] [--env dgc ...] [--before REV [--rounds N]] [--teams K] [--cpu]
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
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from _proc import commit_checkout, run_script_on, tree_cpu_seconds  # noqa: E402  (benchmarks/_proc.py)

import relic_envs  # noqa: E402
from relic_envs.core.registry import get_benchmark  # noqa: E402
from relic_envs.seeds import seed_source  # noqa: E402
from relic_learner.batches import mixed_batch  # noqa: E402
from relic_learner.evaluate import TeamEvaluator  # noqa: E402

_unique = itertools.count()


def _cpu_seconds() -> float:
    """CPU time of this process and every process below it (referees, zygotes, role workers):
    on 2 cores the pool is bound by this sum, not by any one process's wall clock."""
    own = os.times()
    return own.user + own.system + own.children_user + own.children_system + tree_cpu_seconds(os.getpid())


NEW_CODE = os.environ.get("RELIC_LATENCY_NEW_CODE") == "1"  # --new-code, also in a --before child


def _once(evaluator: TeamEvaluator, team: dict[str, str], batch, teams: int = 1) -> tuple[float, float]:
    """Wall and CPU seconds of one evaluation.

    Each team's texts are new to the cache (a trailing comment); with ``--new-code`` they
    are new code too (a module constant), so the determinism check runs on every one.
    """
    mark = "RUN_{0} = {0}" if NEW_CODE else "# run {0}"
    fresh = [{r: f"{src}\n{mark.format(next(_unique))}\n" for r, src in team.items()} for _ in range(teams)]
    cpu, start = _cpu_seconds(), time.perf_counter()
    results = evaluator.evaluate_many(fresh, batch)  # one team: exactly evaluate()
    elapsed = time.perf_counter() - start
    cpu = _cpu_seconds() - cpu
    for result in results:
        if not result.ok:
            raise RuntimeError(f"seed team invalid: {result.status}")
    return elapsed, cpu


def _timed(evaluators: list[TeamEvaluator], team: dict[str, str], batch, repeats: int, teams: int = 1
           ) -> tuple[list[float], list[float]]:
    """Best wall time and least CPU time of each evaluator; the modes alternate so they share the machine's noise."""
    for ev in evaluators:  # warm-up: imports, compiled code, started workers
        _once(ev, team, batch, teams)
    times: list[list[tuple[float, float]]] = [[] for _ in evaluators]
    for _ in range(repeats):
        for k, ev in enumerate(evaluators):
            times[k].append(_once(ev, team, batch, teams))
    return [min(w for w, _ in t) for t in times], [min(c for _, c in t) for t in times]


def _measure(name: str, interface: str, repeats: int, cores: int, plain: bool = True, teams: int = 1) -> dict:
    bench = get_benchmark(name)
    batch = mixed_batch(relic_envs.splits(name).train, 3, seed=0)
    team = {r: seed_source(name, r, interface) for r in bench.roles}
    evaluators = [TeamEvaluator(bench, interface=interface, workers=1),
                  TeamEvaluator(bench, interface=interface, workers=cores)]
    if plain:
        evaluators.insert(0, TeamEvaluator(bench, interface=interface, sandbox=False))
    try:
        times, cpu = _timed(evaluators, team, batch, repeats, teams)
        isolation = dict(evaluators[-2]._workers[0].isolation)
    finally:
        for ev in evaluators:
            ev.close()
    out = {"one": times[-2], "pool": times[-1], "cpu_one": cpu[-2], "cpu_pool": cpu[-1], "isolation": isolation}
    if plain:
        out["plain"], out["cpu_plain"] = times[0], cpu[0]
    return out


def _measure_before(worktree: Path, name: str, interface: str, repeats: int, cores: int, teams: int = 1) -> dict:
    """This script's measurement, run on the code of ``worktree`` (an earlier commit)."""
    before = run_script_on(worktree, str(Path(__file__).resolve()), "--child", name, interface, str(repeats),
                           str(cores), str(teams))
    if not Path(before["code"]).resolve().is_relative_to(worktree.resolve()):
        raise RuntimeError(f"the child measured {before['code']}, not the earlier commit in {worktree}")
    return before


def _print_rounds(names: list[str], worktree: Path, rounds: int, repeats: int, cores: int, teams: int) -> None:
    """Per benchmark, ``rounds`` alternating measurements of both commits (fresh processes); medians and ratio spread."""
    here = Path(__file__).resolve().parent.parent
    print(f"{rounds} rounds per benchmark, each timing both commits in fresh processes (order alternating); "
          f"each figure a median over rounds of a best of {repeats}; ratios: median [least, greatest] over rounds\n")
    header = (f"{'benchmark':<20} {'1w now s':>9} {'before':>7} {'1w now/before':>22} {f'pool {cores}w now s':>15}"
              f" {'before':>7} {'pool now/before':>22}")
    print(header)
    print("-" * len(header))
    script = str(Path(__file__).resolve())
    for name in names:
        for interface in get_benchmark(name).interfaces:
            runs: dict[str, list[dict]] = {"now": [], "before": []}
            for r in range(rounds):
                order = [("now", here), ("before", worktree)]
                for which, code in (order if r % 2 == 0 else order[::-1]):
                    run = run_script_on(code, script, "--child", name, interface, str(repeats), str(cores), str(teams))
                    if not Path(run["code"]).resolve().is_relative_to(code.resolve()):
                        raise RuntimeError(f"the child measured {run['code']}, not the code in {code}")
                    runs[which].append(run)
            label = name if interface == "paper" else f"{name} ({interface})"
            cells = f"{label:<20}"
            for mode, width in (("one", 9), ("pool", 15)):
                ratios = [n[mode] / b[mode] for n, b in zip(runs["now"], runs["before"])]
                spread = f"{statistics.median(ratios):.2f}x [{min(ratios):.2f}, {max(ratios):.2f}]"
                cells += (f" {statistics.median(r[mode] for r in runs['now']):>{width}.3f}"
                          f" {statistics.median(r[mode] for r in runs['before']):>7.3f} {spread:>22}")
            print(cells, flush=True)


def main() -> None:
    if sys.argv[1:2] == ["--child"]:  # a measurement on another commit's code (see --before)
        name, interface, repeats, cores, teams = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
        import relic_learner

        print(json.dumps({**_measure(name, interface, repeats, cores, plain=False, teams=teams), "code": relic_learner.__file__}))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--env", nargs="*", default=None, help="benchmarks (default: all built)")
    parser.add_argument("--before", default=None, help="also time the sandbox of this earlier commit, in the same run")
    parser.add_argument("--cpu", action="store_true",
                        help="also print CPU seconds (this process and all below it) of each mode, and the ratios")
    parser.add_argument("--teams", type=int, default=1,
                        help="distinct teams per timed call (evaluate_many, as re-validation and the AHD comparators call it); default 1")
    parser.add_argument("--new-code", action="store_true",
                        help="every timed team is new code (not only a new comment), so the determinism check "
                             "of issue 54 runs on each evaluation, as on each new proposal of a search")
    parser.add_argument("--rounds", type=int, default=0,
                        help="with --before: N alternating rounds of both commits in fresh processes; medians and ratio spread")
    args = parser.parse_args()
    if args.new_code:
        os.environ["RELIC_LATENCY_NEW_CODE"] = "1"  # read by this module and by each --before child
        globals()["NEW_CODE"] = True
    if args.rounds and not args.before:
        parser.error("--rounds compares two commits: give --before REV")
    names = args.env or relic_envs.names()
    cores = os.cpu_count() or 1
    with commit_checkout(args.before) as worktree:
        print(f"machine: {platform.processor() or platform.machine()}, {cores} cores, Python {platform.python_version()}")
        what = "the seed team" if args.teams == 1 else f"{args.teams} copies of the seed team (distinct sources) in one evaluate_many"
        print(f"best of {args.repeats} evaluations (modes interleaved) of {what} on a 16-instance mixed batch (batch 3)")
        if worktree is not None and args.rounds:
            print(f"'before': the sandbox of {args.before}")
            _print_rounds(names, worktree, args.rounds, args.repeats, cores, args.teams)
            return
        if worktree is not None:
            print(f"'before' columns: the sandbox of {args.before}, measured in this run right after today's")
        print()
        header = f"{'benchmark':<20} {'in-process s':>12} {'sandbox 1w s':>12} {'overhead':>9} {f'pool {cores}w s':>12} {'pool/in-proc':>12}"
        if worktree is not None:
            header += f" {'before 1w s':>12} {'before pool':>12} {'1w now/before':>14} {'pool now/before':>16}"
        if args.cpu:
            header += f" {'cpu in-proc':>11} {'cpu 1w':>8} {'cpu pool':>8} {'1w/in-proc':>10}"
            if worktree is not None:
                header += f" {'before cpu 1w':>13} {'cpu 1w now/before':>17}"
        print(header)
        print("-" * len(header))
        isolation: dict = {}
        for name in names:
            for interface in get_benchmark(name).interfaces:
                now = _measure(name, interface, args.repeats, cores, teams=args.teams)
                isolation = now["isolation"] or isolation
                label = name if interface == "paper" else f"{name} ({interface})"
                line = (f"{label:<20} {now['plain']:>12.3f} {now['one']:>12.3f} {100 * (now['one'] / now['plain'] - 1):>8.1f}% "
                        f"{now['pool']:>12.3f} {now['pool'] / now['plain']:>11.2f}x")
                if worktree is not None:
                    before = _measure_before(worktree, name, interface, args.repeats, cores, args.teams)
                    line += (f" {before['one']:>12.3f} {before['pool']:>12.3f} {now['one'] / before['one']:>13.2f}x"
                             f" {now['pool'] / before['pool']:>15.2f}x")
                if args.cpu:
                    line += (f" {now['cpu_plain']:>11.3f} {now['cpu_one']:>8.3f} {now['cpu_pool']:>8.3f}"
                             f" {now['cpu_one'] / now['cpu_plain']:>9.2f}x")
                    if worktree is not None:
                        line += f" {before['cpu_one']:>13.3f} {now['cpu_one'] / before['cpu_one']:>16.2f}x"
                print(line, flush=True)
    held = [k for k, v in isolation.items() if v]
    print(f"\nrole worker OS isolation: {', '.join(held) or 'none (see docs/learner.md)'}")


if __name__ == "__main__":
    main()
