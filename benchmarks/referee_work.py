"""What the sandbox's referee does per job besides the simulation: digests, bytes sent, copies.

Counted, not timed, so the figures do not move with the machine's noise: for every built
benchmark (and interface), the seed team plays the 16-instance mixed batch of training
batch 3 through one referee (``relic_learner.sandbox._Referee``, run in this process
with real jailed role workers), and this script counts

* ``digests``: content digests of arrays taken by the referee's share table, and their MiB;
* ``sent``: MiB of pickled messages to the role workers (the arrays that crossed);
* ``copies``: arrays copied when observations were handed out.

``--before REV`` counts the same on an earlier commit (a git worktree, in a child
process), side by side. ``--rounds N`` (with ``--before``) also times the referee's play,
alternating the two commits N times (each a fresh child process: a warm-up play, then
three timed plays), and prints the medians of the referee's wall and CPU seconds and of
its role workers' CPU seconds (the process tree below it): on this VM one run of each
differs from the next by 10-40%, which alternating and medians tame. Usage::

    python benchmarks/referee_work.py [--env dimes mapp_pc ...] [--before REV [--rounds N]]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _proc import tree_cpu_seconds  # benchmarks/_proc.py, beside this script


def _count(name: str, interface: str) -> dict[str, float]:
    import hashlib

    import relic_envs
    from relic_envs.core import declared
    from relic_envs.core.registry import get_benchmark
    from relic_envs.seeds import seed_source
    from relic_learner import sandbox
    from relic_learner.batches import mixed_batch

    count = {"digests": 0, "digest_mib": 0.0, "sent_mib": 0.0, "copies": 0}
    real_digest, real_send, real_copy = hashlib.blake2b, sandbox._RoleProcess.send, declared.copy_observation

    def digest(data, **kwargs):
        count["digests"] += 1
        count["digest_mib"] += memoryview(data).nbytes / 2**20
        return real_digest(data, **kwargs)

    def send(self, message, deadline):
        count["sent_mib"] += len(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)) / 2**20
        return real_send(self, message, deadline)

    def copy(obs):
        out = real_copy(obs)
        stack = [out]
        while stack:
            value = stack.pop()
            if isinstance(value, dict):
                stack.extend(value.values())
            elif hasattr(value, "shape") and hasattr(value, "copy"):
                count["copies"] += 1
        return out

    hashlib.blake2b, sandbox._RoleProcess.send = digest, send
    patched = [m for m in list(sys.modules.values()) if getattr(m, "copy_observation", None) is real_copy]
    for module in patched:  # every module that imported the function by name
        module.copy_observation = copy
    bench = get_benchmark(name)
    batch = mixed_batch(relic_envs.splits(name).train, 3, seed=0)
    team = {r: seed_source(name, r, interface) for r in bench.roles}
    referee = sandbox._Referee([0, -1, 0, 0])
    try:
        referee.play(sandbox.Job(name, interface, team, tuple(batch.instances),
                                 sandbox.Limits.for_family(bench.family).call_s))
    finally:
        referee.close()
        hashlib.blake2b, sandbox._RoleProcess.send = real_digest, real_send
        for module in patched:
            module.copy_observation = real_copy
    return count


def _time(name: str, interface: str, plays: int = 3) -> dict[str, float]:
    """Mean wall and CPU seconds of the referee's play (after a warm-up play), and its workers' CPU."""
    import relic_envs
    from relic_envs.core.registry import get_benchmark
    from relic_envs.seeds import seed_source
    from relic_learner import sandbox
    from relic_learner.batches import mixed_batch

    bench = get_benchmark(name)
    batch = mixed_batch(relic_envs.splits(name).train, 3, seed=0)
    team = {r: seed_source(name, r, interface) for r in bench.roles}
    call_s = sandbox.Limits.for_family(bench.family).call_s
    referee = sandbox._Referee([0, -1, 0, 0])

    def job(k: int):  # a distinct text per play, as the evaluator's cache would require
        return sandbox.Job(name, interface, {r: f"{src}\n# play {k}\n" for r, src in team.items()},
                           tuple(batch.instances), call_s)

    try:
        referee.play(job(0))
        referee.spares()
        wall, cpu, workers = time.perf_counter(), time.process_time(), tree_cpu_seconds(os.getpid())
        for k in range(plays):
            referee.play(job(k + 1))
            referee.spares()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        workers = tree_cpu_seconds(os.getpid()) - workers
    finally:
        referee.close()
    return {"wall": wall / plays, "cpu": cpu / plays, "workers": workers / plays}


def _child(code: Path, what: str, name: str, interface: str) -> dict[str, float]:
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), what, name, interface],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(code)},
                          cwd=code, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"the measurement on {code} failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _count_before(worktree: Path, name: str, interface: str) -> dict[str, float]:
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", name, interface],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(worktree)},
                          cwd=worktree, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"the earlier commit's count failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(_count(sys.argv[2], sys.argv[3])))
        return
    if sys.argv[1:2] == ["--time-child"]:
        print(json.dumps(_time(sys.argv[2], sys.argv[3])))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", nargs="*", default=None, help="benchmarks (default: all built)")
    parser.add_argument("--before", default=None, help="also count on this earlier commit")
    parser.add_argument("--rounds", type=int, default=0, help="with --before: also time both, alternating, N rounds")
    args = parser.parse_args()
    import relic_envs
    from relic_envs.core.registry import get_benchmark

    worktree = None
    if args.before:
        worktree = Path(tempfile.mkdtemp(prefix="relic-before-")) / "worktree"
        subprocess.run(["git", "-C", str(Path(__file__).resolve().parent.parent), "worktree", "add", "--detach",
                        str(worktree), args.before], check=True, capture_output=True)
    header = f"{'benchmark':<20} {'digests':>8} {'digest MiB':>10} {'sent MiB':>9} {'copies':>7}"
    if worktree is not None:
        header += f" | {'before: digests':>15} {'digest MiB':>10} {'sent MiB':>9} {'copies':>7}"
    print("per job: the seed team on the 16-instance mixed batch of training batch 3, one referee")
    print(header)
    print("-" * len(header))
    try:
        for name in args.env or relic_envs.names():
            for interface in get_benchmark(name).interfaces:
                label = name if interface == "paper" else f"{name} ({interface})"
                now = _count(name, interface)
                line = (f"{label:<20} {now['digests']:>8} {now['digest_mib']:>10.1f} {now['sent_mib']:>9.1f}"
                        f" {now['copies']:>7}")
                if worktree is not None:
                    b = _count_before(worktree, name, interface)
                    line += f" | {b['digests']:>15} {b['digest_mib']:>10.1f} {b['sent_mib']:>9.1f} {b['copies']:>7}"
                print(line, flush=True)
        if worktree is not None and args.rounds:
            _print_times(args.env or relic_envs.names(), worktree, args.rounds)
    finally:
        if worktree is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], capture_output=True,
                           cwd=Path(__file__).resolve().parent.parent)


def _print_times(names: list[str], worktree: Path, rounds: int) -> None:
    from relic_envs.core.registry import get_benchmark

    here = Path(__file__).resolve().parent.parent
    print(f"\nthe referee's play, seconds per job: medians of {rounds} alternating rounds (before, now)")
    header = (f"{'benchmark':<20} {'wall now':>9} {'before':>7} {'ratio':>6} {'referee cpu now':>15} {'before':>7}"
              f" {'ratio':>6} {'workers cpu now':>15} {'before':>7} {'ratio':>6}")
    print(header)
    print("-" * len(header))
    for name in names:
        for interface in get_benchmark(name).interfaces:
            runs: dict[str, list[dict[str, float]]] = {"now": [], "before": []}
            for _ in range(rounds):
                runs["before"].append(_child(worktree, "--time-child", name, interface))
                runs["now"].append(_child(here, "--time-child", name, interface))
            med = {k: {m: statistics.median(r[m] for r in v) for m in ("wall", "cpu", "workers")} for k, v in runs.items()}
            label = name if interface == "paper" else f"{name} ({interface})"
            cells = "".join(f" {med['now'][m]:>{w}.3f} {med['before'][m]:>7.3f} {med['now'][m] / med['before'][m]:>5.2f}x"
                            for m, w in (("wall", 9), ("cpu", 15), ("workers", 15)))
            print(f"{label:<20}{cells}", flush=True)


if __name__ == "__main__":
    main()
