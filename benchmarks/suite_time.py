"""Where the test suite's time goes: wall time, and the test processes' seconds by directory and file.

Runs README's test command cold (``-p no:cacheprovider``, so JAX's compilation cache is
off, as on CI's fresh machine) with ``--durations=0``, then sums pytest's per-test
durations (setup, call and teardown) by directory and by file, and the share of the files
that compile JAX programs (evaluator parity, functional envs, RL, the JAX loop). Usage::

    python benchmarks/suite_time.py [--top 20] [--from OUTPUT] [-- extra pytest arguments]

``--from OUTPUT`` reads a saved pytest output instead of running the suite (no wall time
then). The wall time includes collection and starting the test processes, which no
duration counts.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import time
from pathlib import Path

COMMAND = [sys.executable, "-m", "pytest", "-n", "auto", "--dist", "loadfile", "-p", "no:cacheprovider",
           "--durations=0", "-q"]
_DURATION = re.compile(r"^([\d.]+)s (?:call|setup|teardown)\s+(\S+?)::")
_JAX_FILE = re.compile(r"jax|functional|tests/rl/|cpu_independence")


def by_file(output: str) -> collections.Counter:
    """Seconds per test file, summed over every duration line pytest printed."""
    seconds: collections.Counter = collections.Counter()
    for line in output.splitlines():
        if (m := _DURATION.match(line)) is not None:
            seconds[m.group(2)] += float(m.group(1))
    return seconds


def report(seconds: collections.Counter, top: int) -> None:
    total = sum(seconds.values())
    jax = sum(t for f, t in seconds.items() if _JAX_FILE.search(f))
    print(f"test processes' seconds (summed durations): {total:.1f}; in files that compile JAX programs: "
          f"{jax:.1f} ({jax / total:.0%})")
    directories: collections.Counter = collections.Counter()
    for f, t in seconds.items():
        directories["/".join(f.split("/")[:2])] += t
    print(f"\n{'seconds':>8}  directory")
    for d, t in directories.most_common(top):
        print(f"{t:>8.1f}  {d}")
    print(f"\n{'seconds':>8}  file")
    for f, t in seconds.most_common(top):
        print(f"{t:>8.1f}  {f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--top", type=int, default=20, help="rows of each table")
    parser.add_argument("--from", dest="source", type=Path, default=None, help="a saved pytest output to read")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = parser.parse_args()
    if args.source is not None:
        output = args.source.read_text()
    else:
        start = time.perf_counter()
        proc = subprocess.run([*COMMAND, *args.pytest_args], capture_output=True, text=True)
        wall = time.perf_counter() - start
        output = proc.stdout + proc.stderr
        tail = [line for line in output.splitlines() if line.strip()][-1:]
        print(f"{' '.join(COMMAND[1:])}: {wall:.1f} s wall, exit {proc.returncode} ({tail[0] if tail else ''})")
    report(by_file(output), args.top)


if __name__ == "__main__":
    main()
