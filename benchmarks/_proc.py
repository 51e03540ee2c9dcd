"""Process helpers for the benchmark scripts: CPU of a process tree, another commit's code."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")
_ROOT = Path(__file__).resolve().parent.parent


def tree_usage(root: int) -> tuple[float, float, int]:
    """User and system CPU seconds and minor page faults of every process below ``root``, with
    what the exited ones left in their parents' ``cutime``/``cstime``/``cminflt``; ``/proc``
    counts CPU in clock ticks (10 ms here), faults exactly."""
    children: dict[int, list[tuple[int, int, int, int]]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue  # exited meanwhile
            fields = stat[stat.rindex(")") + 2:].split()  # fields[0] is stat(5)'s field 3, "state"
            faults, c_faults = int(fields[7]), int(fields[8])
            user, system, c_user, c_system = (int(x) for x in fields[11:15])
            children.setdefault(int(fields[1]), []).append(
                (int(entry), user + c_user, system + c_system, faults + c_faults))
    user_ticks = system_ticks = faults = 0
    todo = [root]
    while todo:
        for pid, user, system, minflt in children.get(todo.pop(), []):
            user_ticks, system_ticks, faults = user_ticks + user, system_ticks + system, faults + minflt
            todo.append(pid)
    return user_ticks / _TICK, system_ticks / _TICK, faults


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user + system) of every process below ``root`` (:func:`tree_usage`)."""
    user, system, _ = tree_usage(root)
    return user + system


@contextlib.contextmanager
def commit_checkout(rev: str | None) -> Iterator[Path | None]:
    """A git worktree of ``rev`` in a temporary directory (``None`` without a ``rev``), removed after."""
    if rev is None:
        yield None
        return
    worktree = Path(tempfile.mkdtemp(prefix="relic-before-")) / "worktree"
    subprocess.run(["git", "-C", str(_ROOT), "worktree", "add", "--detach", str(worktree), rev],
                   check=True, capture_output=True)
    try:
        yield worktree
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], capture_output=True, cwd=_ROOT)


def run_script_on(code: Path, script: str, *args: str) -> dict:
    """Run ``script`` (a benchmark script's path) with ``args`` on the code in ``code`` (first on
    ``PYTHONPATH``; also the cwd, since sandbox workers start with ``python -c``, which puts the
    cwd first on ``sys.path``) and return the JSON object its last output line holds."""
    proc = subprocess.run([sys.executable, script, *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(code)}, cwd=code, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(f"the measurement on {code} failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])
