"""CPU accounting of a process tree, for the benchmark scripts (Linux ``/proc``)."""

from __future__ import annotations

import os
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user + system) of every process below ``root``, with what the exited ones
    left in their parents' ``cutime``/``cstime``; ``/proc`` counts in clock ticks (10 ms here)."""
    children: dict[int, list[tuple[int, int]]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue  # exited meanwhile
            fields = stat[stat.rindex(")") + 2:].split()
            children.setdefault(int(fields[1]), []).append((int(entry), sum(int(x) for x in fields[11:15])))
    ticks, todo = 0, [root]
    while todo:
        for pid, used in children.get(todo.pop(), []):
            ticks += used
            todo.append(pid)
    return ticks / _TICK
