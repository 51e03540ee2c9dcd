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
- The limit holds where the server sees it. A request is reserved *before* it is sent
  and stays in flight until :meth:`RateLimiter.finish` stamps it with the time its
  answer (or failure) came back; it leaves the window ``window_s`` after that stamp. A
  request in flight counts as arriving now and for as long as it lasts. So for any two
  requests ``rpm`` admissions apart, the later was admitted at least ``window_s`` after
  the earlier one *ended*, hence arrived at least ``window_s`` after the earlier one
  arrived, whatever the network and the machine's load did in between. (Stamping at
  admission, as an earlier version did, let a request delayed after admission arrive
  inside the next one's window.)
- Tokens are not known before the answer. A request is admitted when the window's
  tokens plus its estimate (``ceil(characters / 4)`` of the messages plus
  ``max_tokens`` when set) fit under ``tpm``; when the answer comes, its entry is
  settled to the usage the endpoint reported (the estimate stays when it reports none
  or the attempt failed).
- A single request whose estimate alone exceeds ``tpm`` is admitted into an empty
  window rather than never.
- A request in flight for longer than ``stale_s`` (its process died before finishing it)
  is treated as ended at admission plus ``stale_s``, with a warning: a crashed cell never
  stalls the grid.
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
    stale_s:
        After this many seconds in flight a request is taken to have ended (its process
        died); keep it above the client's request timeout.
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
    >>> for slot in slots:                # answers came back (or the attempts failed)
    ...     limiter.finish(slot, tokens=120)
    >>> tmp.cleanup()
    """

    def __init__(self, path: str | os.PathLike[str], *, rpm: int | None = None, tpm: int | None = None,
                 window_s: float = 60.0, stale_s: float = 900.0, clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], None] = time.sleep):
        for name, value in (("rpm", rpm), ("tpm", tpm)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise InvalidConfig(f"rate limit {name} must be None or a positive int, got {value!r}")
        if rpm is None and tpm is None:
            raise InvalidConfig("a rate limiter needs rpm or tpm (or both)")
        if isinstance(window_s, bool) or not isinstance(window_s, int | float) or not window_s > 0:
            raise InvalidConfig(f"rate limit window_s must be a number > 0, got {window_s!r}")
        if isinstance(stale_s, bool) or not isinstance(stale_s, int | float) or not stale_s > 0:
            raise InvalidConfig(f"rate limit stale_s must be a number > 0, got {stale_s!r}")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.rpm, self.tpm, self.window_s, self.stale_s = rpm, tpm, float(window_s), float(stale_s)
        self.clock, self.sleep = clock, sleep

    def __repr__(self) -> str:
        return f"RateLimiter({str(self.path)!r}, rpm={self.rpm}, tpm={self.tpm}, window_s={self.window_s})"

    # -- the operations ------------------------------------------------------------------
    def acquire(self, tokens: int = 0) -> str:
        """Block until a request estimated at ``tokens`` fits; reserve it (in flight); return its slot id.

        Every slot must be handed to :meth:`finish` when its attempt ends, answered or not.
        """
        while True:
            with self._window() as entries:
                now = self.clock()
                wait = self._wait(entries, tokens, now)
                if wait <= 0:
                    slot = uuid.uuid4().hex
                    entries.append([now, None, int(tokens), slot])
                    return slot
            log.debug("rate limit %s: waiting %.3f s", self.path, wait)
            self.sleep(min(wait, self.window_s))

    def finish(self, slot: str, tokens: int | None = None) -> None:
        """End a request: stamp it now, and settle its tokens to the reported usage when given."""
        with self._window() as entries:
            for entry in entries:
                if entry[3] == slot:
                    entry[1] = self.clock()
                    if tokens is not None:
                        entry[2] = int(tokens)
                    break

    def wait_time(self, tokens: int = 0) -> float:
        """Seconds a request of ``tokens`` would wait now (0: it would go at once); records nothing.

        While the request that blocks is still in flight, its end is unknown and this is a
        poll interval, not a promise.
        """
        with self._window(write=False) as entries:
            return max(0.0, self._wait(entries, tokens, self.clock()))

    # -- the window --------------------------------------------------------------------
    def _end(self, entry: list[Any], now: float) -> float:
        """When an entry stops counting as arriving: its finish stamp; ``now`` while in flight."""
        if entry[1] is not None:
            return entry[1]
        return min(now, entry[0] + self.stale_s)

    def _wait(self, entries: list[list[Any]], tokens: int, now: float) -> float:
        """Seconds until enough entries leave the window for one more request.

        Entries are taken oldest-ending first; an entry in flight ends "now", so a wait on
        it is a short poll (a tenth of the window) until it finishes.
        """
        order = sorted(entries, key=lambda e: (e[1] is None, self._end(e, now)))
        poll = self.window_s / 10

        def until_gone(entry: list[Any]) -> float:
            if entry[1] is None and entry[0] + self.stale_s > now:
                return poll
            return self._end(entry, now) + self.window_s - now

        wait = 0.0
        if self.rpm is not None and len(order) >= self.rpm:
            wait = max(wait, until_gone(order[len(order) - self.rpm]))
        if self.tpm is not None and order:
            used = sum(e[2] for e in order)
            k = 0
            while k < len(order) and used + tokens > self.tpm:  # drop the earliest-ending until it fits
                used -= order[k][2]
                k += 1
            if k:
                wait = max(wait, until_gone(order[k - 1]))
        return wait

    @contextlib.contextmanager
    def _window(self, *, write: bool = True) -> Iterator[list[list[Any]]]:
        """The live entries (admitted, ended or None, tokens, slot) under an exclusive lock; written back on exit."""
        with open(self.path, "a+", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                handle.seek(0)
                entries = _parse(handle.read(), self.path)
                now = self.clock()
                stale = [e for e in entries if e[1] is None and e[0] + self.stale_s <= now]
                if stale and write:
                    log.warning("rate limit %s: %d request(s) in flight for over %.0f s are taken as ended",
                                self.path, len(stale), self.stale_s)
                entries = [e for e in entries if self._end(e, now) + self.window_s > now]
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
            isinstance(e, list) and len(e) == 4 and isinstance(e[0], int | float)
            and (e[1] is None or isinstance(e[1], int | float)) and isinstance(e[2], int) and isinstance(e[3], str)
            for e in entries
        ):
            return entries
    except json.JSONDecodeError:
        pass
    log.warning("rate limit file %s is unreadable; starting an empty window", path)
    return []
