"""One LLM rate limit shared by every process that points at the same file.

A grid runs many cells at once, on one machine or a Ray cluster; each cell has its own
:class:`~relic_learner.llm.openai_backend.OpenAIClient`. Without a common limit they
would add up to many times the provider's quota. A :class:`RateLimiter` keeps the
requests and tokens of the last ``window_s`` seconds (60: "per minute") in a small JSON
file and admits a request only while both stay under their limits; the file is locked
with ``fcntl.flock`` for every read-modify-write, so processes on one machine, and on
every node of a cluster whose shared filesystem honours POSIX locks (NFSv4, Lustre,
CephFS; the grid already keeps its run directories there), see one budget.

Accounting
----------
- Every HTTP *attempt* is a request (a retried call spends its quota again, as the
  provider counts it).
- Tokens are not known before the answer. A request is admitted when the window's
  tokens plus its estimate (``ceil(characters / 4)`` of the messages plus
  ``max_tokens`` when set) fit under ``tpm``; when the answer comes, its entry is
  settled to the usage the endpoint reported (the estimate stays when it reports none
  or the attempt failed). So the window holds real usage, and requests in flight can
  overshoot ``tpm`` by at most their completions.
- A single request whose estimate alone exceeds ``tpm`` is admitted into an empty
  window rather than never.
- Times are wall-clock (``time.time``), the only clock processes and machines share:
  nodes must keep their clocks in sync (NTP), as any cluster does.

A file that cannot be parsed (a machine died mid-write) is logged and read as an empty
window: the limiter then errs by one window's worth, it never stalls a grid.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import math
import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from relic_envs.errors import InvalidConfig

log = logging.getLogger("relic_learner.llm.ratelimit")


class RateLimiter:
    """Requests-per-window and tokens-per-window limits in a shared, locked file.

    Parameters
    ----------
    path:
        The file every sharing process names (created with its directory).
    rpm, tpm:
        Requests and tokens allowed per window; ``None`` for no limit on that count
        (at least one must be set).
    window_s:
        Window length in seconds; 60 reads the limits as per minute.
    clock, sleep:
        Wall clock and sleep (injected by tests).

    A limiter is a path and numbers, so it pickles into pool and Ray workers.

    Examples
    --------
    >>> import tempfile, os
    >>> tmp = tempfile.TemporaryDirectory()
    >>> limiter = RateLimiter(os.path.join(tmp.name, "rate.json"), rpm=2)
    >>> slots = [limiter.acquire(), limiter.acquire()]
    >>> limiter.wait_time(0) > 0          # a third request would wait for the window
    True
    >>> tmp.cleanup()
    """

    def __init__(self, path: str | os.PathLike[str], *, rpm: int | None = None, tpm: int | None = None,
                 window_s: float = 60.0, clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], None] = time.sleep):
        for name, value in (("rpm", rpm), ("tpm", tpm)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise InvalidConfig(f"rate limit {name} must be None or a positive int, got {value!r}")
        if rpm is None and tpm is None:
            raise InvalidConfig("a rate limiter needs rpm or tpm (or both)")
        if isinstance(window_s, bool) or not isinstance(window_s, int | float) or not window_s > 0:
            raise InvalidConfig(f"rate limit window_s must be a number > 0, got {window_s!r}")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.rpm, self.tpm, self.window_s = rpm, tpm, float(window_s)
        self.clock, self.sleep = clock, sleep

    def __repr__(self) -> str:
        return f"RateLimiter({str(self.path)!r}, rpm={self.rpm}, tpm={self.tpm}, window_s={self.window_s})"

    # -- the two operations ----------------------------------------------------------
    def acquire(self, tokens: int = 0) -> str:
        """Block until a request estimated at ``tokens`` fits; record it; return its slot id."""
        while True:
            with self._window() as entries:
                now = self.clock()
                wait = self._wait(entries, tokens, now)
                if wait <= 0:
                    slot = uuid.uuid4().hex
                    entries.append([now, int(tokens), slot])
                    return slot
            log.debug("rate limit %s: waiting %.3f s", self.path, wait)
            self.sleep(min(wait, self.window_s))

    def settle(self, slot: str, tokens: int) -> None:
        """Replace a request's token estimate with the usage the endpoint reported."""
        with self._window() as entries:
            for entry in entries:
                if entry[2] == slot:
                    entry[1] = int(tokens)
                    break

    def wait_time(self, tokens: int = 0) -> float:
        """Seconds a request of ``tokens`` would wait now (0: it would go at once); records nothing."""
        with self._window(write=False) as entries:
            return max(0.0, self._wait(entries, tokens, self.clock()))

    # -- the window --------------------------------------------------------------------
    def _wait(self, entries: list[list[Any]], tokens: int, now: float) -> float:
        """Seconds until the oldest entries leave the window far enough for one more request."""
        wait = 0.0
        if self.rpm is not None and len(entries) >= self.rpm:
            wait = max(wait, entries[len(entries) - self.rpm][0] + self.window_s - now)
        if self.tpm is not None and entries:
            used = sum(e[1] for e in entries)
            k = 0
            while k < len(entries) and used + tokens > self.tpm:  # drop the oldest until it fits
                used -= entries[k][1]
                k += 1
            if k:
                wait = max(wait, entries[k - 1][0] + self.window_s - now)
        return wait

    @contextlib.contextmanager
    def _window(self, *, write: bool = True) -> Iterator[list[list[Any]]]:
        """The live entries (time, tokens, slot) under an exclusive lock; written back on exit."""
        with open(self.path, "a+", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                handle.seek(0)
                entries = _parse(handle.read(), self.path)
                horizon = self.clock() - self.window_s
                entries = [e for e in entries if e[0] > horizon]
                yield entries
                if write:
                    handle.seek(0)
                    handle.truncate()
                    handle.write(json.dumps(entries))
                    handle.flush()
                    os.fsync(handle.fileno())
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def estimate_tokens(messages: list[dict[str, str]], max_tokens: int | None) -> int:
    """A request's token estimate before it is sent: ``ceil(characters / 4)`` plus ``max_tokens``."""
    chars = sum(len(m.get("content") or "") for m in messages)
    return math.ceil(chars / 4) + (max_tokens or 0)


def _parse(text: str, path: Path) -> list[list[Any]]:
    if not text.strip():
        return []
    try:
        entries = json.loads(text)
        if isinstance(entries, list) and all(
            isinstance(e, list) and len(e) == 3 and isinstance(e[0], int | float) and isinstance(e[1], int)
            and isinstance(e[2], str) for e in entries
        ):
            return entries
    except json.JSONDecodeError:
        pass
    log.warning("rate limit file %s is unreadable; starting an empty window", path)
    return []
