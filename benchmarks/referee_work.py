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
its role workers' CPU seconds and minor page faults (the process tree below it; faults are
counted exactly, so they show a change that CPU ticks of 10 ms blur): on this VM one run of each
differs from the next by 10-40%, which alternating and medians tame. ``--profile`` prints,
per benchmark, the referee's cProfile of one play (after a warm-up play), the functions
that took most time with what they called. ``--digest-speed`` prints what a content digest
and a pickle round trip of one array cost here. ``--worker-cpu`` compares what the jailed
role workers cost per job (their user and system CPU, over 3 jobs) with the same work done
in this process: the messages one job sent each role, recorded, unpickled, answered by
the worker's own code (``role_worker._Worker``) and the answers encoded, without a jail, a
fork or a pipe (each of the three steps timed apart), the jailed workers' CPU per message,
and how many messages a job of the batch's first 8 instances sends (what each of a pool's
two referees plays). Usage::

    python benchmarks/referee_work.py [--env dimes mapp_pc ...] [--before REV [--rounds N]] [--profile] [--digest-speed]
                                      [--worker-cpu]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import sys
import time
from pathlib import Path

from _proc import commit_checkout, run_script_on, tree_usage  # benchmarks/_proc.py, beside this script

_SCRIPT = str(Path(__file__).resolve())
_HERE = Path(__file__).resolve().parent.parent


def _job_maker(name: str, interface: str, instances: int = 16):
    """``job(k)``: the seed team (a distinct text per ``k``, as the evaluator's cache would require)
    on the 16-instance mixed batch of training batch 3 (its first ``instances``)."""
    import relic_envs
    from relic_envs.core.registry import get_benchmark
    from relic_envs.seeds import seed_source
    from relic_learner import sandbox
    from relic_learner.batches import mixed_batch

    bench = get_benchmark(name)
    batch = tuple(mixed_batch(relic_envs.splits(name).train, 3, seed=0).instances)[:instances]
    team = {r: seed_source(name, r, interface) for r in bench.roles}
    call_s = sandbox.Limits.for_family(bench.family).call_s

    def job(k: int):
        return sandbox.Job(name, interface, {r: f"{src}\n# play {k}\n" for r, src in team.items()}, batch, call_s)

    return job


def _count(name: str, interface: str) -> dict[str, float]:
    import hashlib

    from relic_envs.core import declared
    from relic_learner import sandbox

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

    job = _job_maker(name, interface)
    hashlib.blake2b, sandbox._RoleProcess.send = digest, send
    patched = [m for m in list(sys.modules.values()) if getattr(m, "copy_observation", None) is real_copy]
    for module in patched:  # every module that imported the function by name
        module.copy_observation = copy
    referee = sandbox._Referee([0, -1, 0, 0])
    try:
        referee.play(job(0))
    finally:
        referee.close()
        hashlib.blake2b, sandbox._RoleProcess.send = real_digest, real_send
        for module in patched:
            module.copy_observation = real_copy
    return count


def _time(name: str, interface: str, plays: int = 3) -> dict[str, float]:
    """Mean wall and CPU seconds of the referee's play (after a warm-up play), and its workers' CPU
    (``workers``; split into ``workers_user`` and ``workers_system``) and minor page faults."""
    from relic_learner import sandbox

    job = _job_maker(name, interface)
    referee = sandbox._Referee([0, -1, 0, 0])
    try:
        referee.play(job(0))
        referee.spares()
        wall, cpu, workers = time.perf_counter(), time.process_time(), tree_usage(os.getpid())
        for k in range(plays):
            referee.play(job(k + 1))
            referee.spares()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        user, system, faults = (b - a for a, b in zip(workers, tree_usage(os.getpid())))
    finally:
        referee.close()
    return {"wall": wall / plays, "cpu": cpu / plays, "workers": (user + system) / plays,
            "workers_user": user / plays, "workers_system": system / plays, "workers_faults": faults / plays}


def _profile(name: str, interface: str, lines: int = 30) -> None:
    import cProfile
    import pstats

    from relic_learner import sandbox

    job = _job_maker(name, interface)
    referee = sandbox._Referee([0, -1, 0, 0])
    try:
        referee.play(job(0))
        referee.spares()
        profile = cProfile.Profile()
        profile.enable()
        referee.play(job(1))
        profile.disable()
    finally:
        referee.close()
    print(f"\n{name} ({interface}): the referee's play under cProfile, by cumulative time")
    pstats.Stats(profile, stream=sys.stdout).sort_stats("cumulative").print_stats(lines)


def _messages(name: str, interface: str, instances: int = 16) -> list[tuple[str, bytes]]:
    """The messages one job sends its role workers, pickled, with the role each went to."""
    from relic_learner import sandbox

    sent: list[tuple[str, bytes]] = []
    real_send = sandbox._RoleProcess.send

    def send(self, message, deadline):
        sent.append((self.key[2], pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)))
        return real_send(self, message, deadline)

    referee = sandbox._Referee([0, -1, 0, 0])
    sandbox._RoleProcess.send = send
    try:
        referee.play(_job_maker(name, interface, instances)(0))
    finally:
        sandbox._RoleProcess.send = real_send
        referee.close()
    return sent


def _worker_cpu(name: str, interface: str) -> dict[str, float]:
    """Per job: the jailed workers' user and system CPU (:func:`_time`), and the messages of one job
    answered here by the worker's own code; also how many messages a job of half the batch sends."""
    from relic_envs.core.registry import get_benchmark
    from relic_learner import channel, role_worker

    sent = _messages(name, interface)
    jailed = _time(name, interface)
    signatures = get_benchmark(name).signatures(interface)
    spent = {"unpickle": 0.0, "answer": 0.0, "encode": 0.0}  # the child's three steps per message, timed here
    for role in signatures:
        worker = role_worker._Worker(-1, -1, signatures[role].function)
        for to, raw in sent:
            if to == role:
                t0 = time.process_time()
                message = pickle.loads(raw)
                t1 = time.process_time()
                answers = worker.load(*message[1:]) if message[0] == "load" else worker.act(message[1])
                t2 = time.process_time()
                channel.encode_reply(answers)
                spent["unpickle"] += t1 - t0
                spent["answer"] += t2 - t1
                spent["encode"] += time.process_time() - t2
    return {"user": jailed["workers_user"], "system": jailed["workers_system"], "faults": jailed["workers_faults"],
            "here": sum(spent.values()), **spent, "messages": len(sent), "messages_8": len(_messages(name, interface, 8))}


def _digest_speed() -> None:
    import hashlib
    import timeit

    import numpy as np

    print("one float64 array: blake2b digest vs pickle round trip (protocol 5) vs copy, microseconds")
    for size in (6_400, 12_800, 51_200):
        a = np.random.default_rng(0).random(size // 8)
        costs = [min(timeit.repeat(f, number=2000, repeat=3)) / 2000 * 1e6 for f in (
            lambda a=a: hashlib.blake2b(a.data, digest_size=16).digest(),
            lambda a=a: pickle.loads(pickle.dumps(a, protocol=5)),
            a.copy)]
        print(f"{size:>7} bytes: digest {costs[0]:6.1f}  pickle round trip {costs[1]:6.1f}  copy {costs[2]:5.1f}"
              f"  (digest {size / costs[0] / 1e3:.2f} GB/s)")


def _rows(names: list[str]):
    """``(name, interface, label)`` for every interface of every benchmark in ``names``, in order."""
    from relic_envs.core.registry import get_benchmark

    for name in names:
        for interface in get_benchmark(name).interfaces:
            yield name, interface, name if interface == "paper" else f"{name} ({interface})"


def _print_times(names: list[str], worktree: Path, rounds: int) -> None:
    print(f"\nthe referee's play, seconds per job: medians of {rounds} alternating rounds (before, now)")
    header = (f"{'benchmark':<20} {'wall now':>9} {'before':>7} {'ratio':>6} {'referee cpu now':>15} {'before':>7}"
              f" {'ratio':>6} {'workers cpu now':>15} {'before':>7} {'ratio':>6} {'workers faults now':>18}"
              f" {'before':>7} {'ratio':>6}")
    print(header)
    print("-" * len(header))
    for name, interface, label in _rows(names):
        runs: dict[str, list[dict[str, float]]] = {"now": [], "before": []}
        for _ in range(rounds):
            runs["before"].append(run_script_on(worktree, _SCRIPT, "--time-child", name, interface))
            runs["now"].append(run_script_on(_HERE, _SCRIPT, "--time-child", name, interface))
        metrics = ("wall", "cpu", "workers", "workers_faults")
        med = {k: {m: statistics.median(r[m] for r in v) for m in metrics} for k, v in runs.items()}
        cells = "".join(f" {med['now'][m]:>{w}.{d}f} {med['before'][m]:>7.{d}f} {med['now'][m] / med['before'][m]:>5.2f}x"
                        for m, w, d in (("wall", 9, 3), ("cpu", 15, 3), ("workers", 15, 3), ("workers_faults", 18, 0)))
        print(f"{label:<20}{cells}", flush=True)


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
    parser.add_argument("--profile", action="store_true", help="also print the referee's cProfile of one play")
    parser.add_argument("--digest-speed", action="store_true", help="also print the cost of one digest here")
    parser.add_argument("--worker-cpu", action="store_true",
                        help="also compare the jailed workers' CPU per job with the same messages answered here")
    args = parser.parse_args()
    import relic_envs

    names = args.env or relic_envs.names()
    with commit_checkout(args.before) as worktree:
        header = f"{'benchmark':<20} {'digests':>8} {'digest MiB':>10} {'sent MiB':>9} {'copies':>7}"
        if worktree is not None:
            header += f" | {'before: digests':>15} {'digest MiB':>10} {'sent MiB':>9} {'copies':>7}"
        print("per job: the seed team on the 16-instance mixed batch of training batch 3, one referee")
        print(header)
        print("-" * len(header))
        for name, interface, label in _rows(names):
            now = _count(name, interface)
            line = (f"{label:<20} {now['digests']:>8} {now['digest_mib']:>10.1f} {now['sent_mib']:>9.1f}"
                    f" {now['copies']:>7}")
            if worktree is not None:
                b = run_script_on(worktree, _SCRIPT, "--child", name, interface)
                line += f" | {b['digests']:>15} {b['digest_mib']:>10.1f} {b['sent_mib']:>9.1f} {b['copies']:>7}"
            print(line, flush=True)
        if worktree is not None and args.rounds:
            _print_times(names, worktree, args.rounds)
    if args.profile:
        for name, interface, _ in _rows(names):
            _profile(name, interface)
    if args.digest_speed:
        print()
        _digest_speed()
    if args.worker_cpu:
        print("\nthe role workers' CPU seconds per job: jailed (3 jobs; user, system, minor page faults) and the same messages"
              " answered here")
        header = (f"{'benchmark':<20} {'messages':>8} {'8 instances':>11} {'jailed user':>11} {'system':>7}"
                  f" {'faults':>7} {'here':>6} {'jailed/here':>11} {'here: unpickle':>14} {'answer':>7} {'encode':>7}"
                  f" {'jailed per message ms':>21}")
        print(header)
        print("-" * len(header))
        for name, interface, label in _rows(names):
            w = _worker_cpu(name, interface)
            print(f"{label:<20} {w['messages']:>8} {w['messages_8']:>11} {w['user']:>11.3f} {w['system']:>7.3f}"
                  f" {w['faults']:>7.0f} {w['here']:>6.3f} {(w['user'] + w['system']) / w['here']:>10.2f}x"
                  f" {w['unpickle']:>14.3f} {w['answer']:>7.3f} {w['encode']:>7.3f}"
                  f" {1e3 * (w['user'] + w['system']) / w['messages']:>21.3f}", flush=True)


if __name__ == "__main__":
    main()
