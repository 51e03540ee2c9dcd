"""The one LLM interface, ``complete(messages, purpose)``, with its accounting.

Every backend subclasses :class:`LLMClient` and implements only ``_complete`` and
``describe``. Validation and the ledger (logical calls by purpose, Appendix D.4) live
here once, so no backend can forget to count a call or count a retry as a call.
"""

from __future__ import annotations

import abc
import time
from typing import Any

from relic_learner.llm.base import Completion, LLMCallFailed, check_messages, check_purpose, check_salt, check_tag
from relic_learner.llm.ledger import CallLedger


class LLMClient(abc.ABC):
    """One interface to every LLM backend.

    Subclasses implement :meth:`_complete` (raise :class:`LLMCallFailed` for an
    endpoint problem) and :meth:`describe`. :meth:`complete` validates the request,
    calls the backend and records the outcome in :attr:`ledger` exactly once per
    logical call, however many HTTP attempts it took.

    Attributes
    ----------
    ledger:
        The :class:`~relic_learner.llm.ledger.CallLedger` counting this client's calls.
    """

    ledger: CallLedger

    def __init__(self, *, ledger: CallLedger | None = None):
        self.ledger = ledger if ledger is not None else CallLedger()

    def complete(
        self,
        messages: list[dict],
        purpose: str,
        *,
        tag: str | None = None,
        cache_salt: Any = None,
    ) -> Completion:
        """Make one logical call.

        Parameters
        ----------
        messages:
            Chat messages, each ``{"role": "system"|"user"|"assistant", "content": str}``.
        purpose:
            ``"proposal"`` (the answer holds a candidate program) or ``"auxiliary"``.
        tag:
            The operator that made the call (``"lift"``, ``"bridge"``, ``"reflect"``,
            ``"reveal"``, ``"distill"``, ``"cross_distill"``, ...); counted in the ledger.
        cache_salt:
            Any JSON value (e.g. ``[run_seed, proposal_index]``) mixed into the cache
            key, so the same prompt at two points of a run is two independent draws
            while a resumed run replays the same ones. Ignored by backends without a cache.

        Returns
        -------
        Completion

        Raises
        ------
        LLMCallFailed
            The endpoint gave no usable answer (after the retries allowed); counted.
        ValueError, TypeError
            Bad ``messages``, ``purpose``, ``tag`` or ``cache_salt``; not counted.
        """
        purpose = check_purpose(purpose)
        tag = check_tag(tag)
        messages = check_messages(messages)
        cache_salt = check_salt(cache_salt)
        start = time.perf_counter()
        try:
            completion = self._complete(messages, purpose, tag=tag, cache_salt=cache_salt)
        except LLMCallFailed as exc:
            elapsed = time.perf_counter() - start
            self.ledger.record_failure(purpose, tag=tag, reason=exc.reason, attempts=exc.attempts, latency_s=elapsed,
                                      cached=getattr(exc, "cached", False))
            raise
        self.ledger.record(completion, tag=tag)
        return completion

    def export_state(self) -> dict[str, Any]:
        """What this backend needs, besides its ledger, to continue a run identically (JSON-able).

        A run checkpoints it after every step and hands it back to :meth:`restore_state`
        on resume. Stateless backends return ``{}``; a backend whose replies depend on
        what it answered before (the offline backend's edit kinds) must return it all.
        """
        return {}

    def restore_state(self, state: dict[str, Any]) -> None:
        """Take back what :meth:`export_state` returned (called on resume)."""
        if state:
            raise ValueError(f"{type(self).__name__} keeps no state, got {sorted(state)}")

    @abc.abstractmethod
    def _complete(self, messages: list[dict[str, str]], purpose: str, *, tag: str | None, cache_salt: Any) -> Completion:
        """Answer validated ``messages``; raise :class:`LLMCallFailed` on endpoint problems."""

    @abc.abstractmethod
    def describe(self) -> str:
        """One line naming the backend, e.g. ``"openai:gpt-4o-mini @ http://..."``."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.describe()}>"
