"""What the sandbox's referee does per job besides the simulation: digests, bytes sent, copies.

Counted, not timed, so the figures do not move with the machine's noise: for every built
benchmark (and interface), the seed team plays the 16-instance mixed batch of training
batch 3 through one referee (``relic_learner.sandbox._Referee``, run in this process
with real jailed role workers), and this script counts

* ``digests``: content digests of arrays taken by the referee's share table, and their MiB;
* ``sent``: MiB of pickled messages to the role workers (the arrays that crossed);
* ``copies``: arrays copied when observations were handed out.

``--before REV`` counts the same on an earlier commit (a git worktree, in a child
process), side by side. Usage::

    python benchmarks/referee_work.py [--env dimes mapp_pc ...] [--before REV]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path


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
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", nargs="*", default=None, help="benchmarks (default: all built)")
    parser.add_argument("--before", default=None, help="also count on this earlier commit")
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
    finally:
        if worktree is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], capture_output=True,
                           cwd=Path(__file__).resolve().parent.parent)


if __name__ == "__main__":
    main()
