"""The fork path alone: how long the referee waits for a fresh, unused child, now and before.

Every job asks each role's zygote for a fresh child (docs/learner.md, "Every job gets a
fresh child"). This times ``_RoleProcess.fresh()`` with no spare asked for in advance, so
each call pays the whole path: the previous child killed and reaped, the zygote's state
check (issue 54), the fork (through the template since issue 54), the child's limits and
filter, its first message. The jail is started before timing. ``--before REV`` times the
same on an earlier commit's code (a git worktree, in a child process), in alternating
rounds. Prints per commit the median over rounds of each round's median, in milliseconds.

Usage::

    python benchmarks/fresh_child.py [--children 200] [--rounds 5] [--before REV]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import commit_checkout, run_script_on  # noqa: E402  (benchmarks/_proc.py)


def _measure(children: int) -> dict:
    from relic_learner import sandbox

    role = sandbox._RoleProcess("dgc", "paper", "A", 256, "full")
    try:
        role.fresh()
        waits = []
        for _ in range(children):
            role._used = True  # as after a job: the next fresh() forks anew
            start = time.perf_counter()
            role.fresh()
            waits.append(time.perf_counter() - start)
    finally:
        role.kill()
    import relic_learner

    return {"median_ms": 1e3 * statistics.median(waits), "code": relic_learner.__file__}


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(_measure(int(sys.argv[2]))))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--children", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", default=None)
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    with commit_checkout(args.before) as worktree:
        codes = [("now", here)] + ([("before", worktree)] if worktree is not None else [])
        runs: dict[str, list[float]] = {name: [] for name, _ in codes}
        for r in range(args.rounds):
            for name, code in (codes if r % 2 == 0 else codes[::-1]):
                run = run_script_on(code, str(Path(__file__).resolve()), "--child", str(args.children))
                if not Path(run["code"]).resolve().is_relative_to(code.resolve()):
                    raise RuntimeError(f"measured {run['code']}, not the code in {code}")
                runs[name].append(run["median_ms"])
    print(f"fresh() with nothing asked in advance, dgc role A, {args.children} children a round, {args.rounds} rounds")
    for name, values in runs.items():
        print(f"{name:<7} median {statistics.median(values):6.2f} ms   rounds: {', '.join(f'{v:.2f}' for v in values)}")
    if "before" in runs:
        print(f"now/before {statistics.median(runs['now']) / statistics.median(runs['before']):.2f}x")


if __name__ == "__main__":
    main()
