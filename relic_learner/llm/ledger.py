"""Call accounting: logical calls by purpose and tag, attempts, failures, tokens, latency.

Appendix D.4 counts *logical* invocations: one algorithm-level request is one call,
however many HTTP retries it took, and a failed or malformed answer still counts.
The ledger keeps that count apart from the raw attempts so both can be reported,
and it round-trips through JSON so a resumed run continues its counts.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from relic_learner.llm.base import FAILURE_REASONS, PURPOSES, Completion

SNAPSHOT_VERSION = 1

_INT_FIELDS = ("attempts", "retries", "prompt_tokens", "completion_tokens", "cache_hits")
_COUNTER_FIELDS = ("calls", "failed_calls", "by_tag", "failures")


class CallLedger:
    """Counts of one client's logical calls (thread-safe).

    Attributes
    ----------
    calls:
        Logical calls by purpose (``"proposal"``, ``"auxiliary"``): every call that
        reached the backend, whether answered, served from the cache, or failed.
    failed_calls:
        Of those, the ones that raised :class:`~relic_learner.llm.base.LLMCallFailed`, by purpose.
    by_tag:
        Logical calls by operator tag (``"lift"``, ``"distill"``, ...); untagged calls
        are not listed.
    failures:
        Failed calls by reason (``"timeout"``, ``"rate_limited"``, ...).
    attempts:
        HTTP attempts over all calls (a cache hit makes none).
    retries:
        Attempts beyond the first of each call.
    prompt_tokens, completion_tokens:
        Tokens the endpoint reported for fresh answers; cache hits add nothing, as
        nothing was billed.
    latency_s:
        Summed wall time of all logical calls, retries and waits included.
    cache_hits:
        Calls served from the response cache.

    Examples
    --------
    >>> ledger = CallLedger()
    >>> ledger.record_failure("proposal", tag="lift", reason="timeout", attempts=3)
    >>> ledger.calls["proposal"], ledger.retries, ledger.failures["timeout"]
    (1, 2, 1)
    >>> CallLedger.from_snapshot(ledger.snapshot()).snapshot() == ledger.snapshot()
    True
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self.calls: Counter[str] = Counter({p: 0 for p in PURPOSES})
        self.failed_calls: Counter[str] = Counter({p: 0 for p in PURPOSES})
        self.by_tag: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.attempts = 0
        self.retries = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.latency_s = 0.0
        self.cache_hits = 0

    # -- recording -----------------------------------------------------------------------
    def record(self, completion: Completion, *, tag: str | None = None) -> None:
        """Count one answered logical call (fresh or cached)."""
        with self._lock:
            self.calls[completion.purpose] += 1
            if tag is not None:
                self.by_tag[tag] += 1
            self.attempts += completion.attempts
            self.retries += max(0, completion.attempts - 1)
            self.latency_s += completion.latency_s
            if completion.cached:
                self.cache_hits += 1
            else:
                self.prompt_tokens += completion.prompt_tokens
                self.completion_tokens += completion.completion_tokens

    def record_failure(
        self, purpose: str, *, tag: str | None, reason: str, attempts: int, latency_s: float = 0.0,
        cached: bool = False,
    ) -> None:
        """Count one logical call that failed with ``reason`` after ``attempts`` attempts (or replayed, ``cached``)."""
        with self._lock:
            if cached:
                self.cache_hits += 1
            self.calls[purpose] += 1
            self.failed_calls[purpose] += 1
            if tag is not None:
                self.by_tag[tag] += 1
            self.failures[reason] += 1
            self.attempts += attempts
            self.retries += max(0, attempts - 1)
            self.latency_s += latency_s

    # -- reading -------------------------------------------------------------------------
    @property
    def total_calls(self) -> int:
        """All logical calls, proposal plus auxiliary."""
        return sum(self.calls.values())

    def snapshot(self) -> dict[str, Any]:
        """The counts as a JSON-able dict (for checkpoints and run summaries)."""
        with self._lock:
            snap: dict[str, Any] = {"version": SNAPSHOT_VERSION}
            for name in _COUNTER_FIELDS:
                snap[name] = dict(sorted(getattr(self, name).items()))
            for name in _INT_FIELDS:
                snap[name] = getattr(self, name)
            snap["latency_s"] = self.latency_s
            snap["total_calls"] = sum(self.calls.values())
            return snap

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Replace all counts with those of ``snapshot`` (from :meth:`snapshot`).

        Raises
        ------
        ValueError
            Wrong version, a missing field, a negative count or an unknown purpose/reason.
        """
        if not isinstance(snapshot, dict) or snapshot.get("version") != SNAPSHOT_VERSION:
            got = snapshot.get("version") if isinstance(snapshot, dict) else type(snapshot).__name__
            raise ValueError(f"ledger snapshot must be a dict with version {SNAPSHOT_VERSION}; got {got!r}")
        missing = [k for k in (*_COUNTER_FIELDS, *_INT_FIELDS, "latency_s") if k not in snapshot]
        if missing:
            raise ValueError(f"ledger snapshot lacks {', '.join(missing)}")
        counters = {name: Counter(_counts(snapshot, name)) for name in _COUNTER_FIELDS}
        for name, allowed in (("calls", PURPOSES), ("failed_calls", PURPOSES), ("failures", FAILURE_REASONS)):
            unknown = set(counters[name]) - set(allowed)
            if unknown:
                raise ValueError(f"ledger snapshot {name} has unknown keys {sorted(unknown)}; allowed: {allowed}")
        ints = {name: _count(snapshot[name], name) for name in _INT_FIELDS}
        latency = snapshot["latency_s"]
        if not isinstance(latency, int | float) or latency < 0:
            raise ValueError(f"ledger snapshot latency_s must be a number >= 0; got {latency!r}")
        with self._lock:
            self._reset()
            for p in PURPOSES:  # keep both purposes present even if an old snapshot dropped a zero
                counters["calls"].setdefault(p, 0)
                counters["failed_calls"].setdefault(p, 0)
            for name, counter in counters.items():
                setattr(self, name, counter)
            for name, value in ints.items():
                setattr(self, name, value)
            self.latency_s = float(latency)

    @classmethod
    def from_snapshot(cls, snapshot: dict[str, Any]) -> CallLedger:
        """A new ledger holding the counts of ``snapshot``."""
        ledger = cls()
        ledger.restore(snapshot)
        return ledger

    def __repr__(self) -> str:
        return (
            f"CallLedger(proposal={self.calls['proposal']}, auxiliary={self.calls['auxiliary']}, "
            f"failed={sum(self.failed_calls.values())}, retries={self.retries}, cache_hits={self.cache_hits})"
        )


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"ledger snapshot {name} must be an int >= 0; got {value!r}")
    return value


def _counts(snapshot: dict[str, Any], name: str) -> dict[str, int]:
    value = snapshot[name]
    if not isinstance(value, dict):
        raise ValueError(f"ledger snapshot {name} must be a dict of counts; got {type(value).__name__}")
    return {str(k): _count(v, f"{name}[{k!r}]") for k, v in value.items()}
