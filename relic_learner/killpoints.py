"""A test hook: the process SIGKILLs itself at the n-th occurrence of a named point.

Resume must give the result of an uninterrupted run wherever a kill lands; a test
cannot aim an external ``kill`` at "the middle of the third proposal" reliably, so
the search calls :func:`reached` at the points that matter and the environment
variable ``RELIC_KILL_AT="POINT:N"`` turns the N-th occurrence into a SIGKILL (no
cleanup, no ``finally``, exactly like an external kill). Points:

* ``llm`` - an LLM reply has arrived and nothing has been done with it yet
  (mid-proposal, or mid-batch-end for auxiliary calls);
* ``event`` - an event line has just been appended to ``events.jsonl``;
* ``checkpoint`` - the new checkpoint is written to its temporary file but not yet
  renamed over the old one.

Unset (the normal case) it does nothing. Counts are per process, so a resumed run
(started without the variable) is never killed by it.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

ENV = "RELIC_KILL_AT"
POINTS = ("llm", "event", "checkpoint")
_seen: Counter[str] = Counter()


def reached(point: str) -> None:
    """Count one occurrence of ``point``; SIGKILL this process if ``RELIC_KILL_AT`` names this one."""
    spec = os.environ.get(ENV)
    if not spec:
        return
    name, _, count = spec.partition(":")
    if name not in POINTS or not count.isdigit():
        raise ValueError(f"{ENV} must be POINT:N with POINT in {POINTS}, got {spec!r}")
    if name != point:
        return
    _seen[point] += 1
    if _seen[point] == int(count):
        os.kill(os.getpid(), signal.SIGKILL)
