"""What a logical LLM call is: its purposes, its result, its failure, its valid input.

Plain data and checks shared by the client interface (``client.py``), the ledger
(``ledger.py``) and every backend.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from relic_envs.errors import RelicError

PROPOSAL = "proposal"  # the response holds a new executable program (charged to the proposal budget)
AUXILIARY = "auxiliary"  # reveal / distill / cross-distill / reflection text, never a scored program
PURPOSES = (PROPOSAL, AUXILIARY)

ROLES = ("system", "user", "assistant")

FAILURE_REASONS = ("timeout", "rate_limited", "server_error", "malformed", "empty", "auth", "bad_request", "connection")


@dataclasses.dataclass(frozen=True)
class Completion:
    """One answered logical call.

    Attributes
    ----------
    text:
        The assistant message content (never empty).
    purpose:
        ``"proposal"`` or ``"auxiliary"``.
    model:
        The model that answered (as the endpoint reports it), or ``"offline"``.
    prompt_tokens, completion_tokens:
        Token usage reported by the endpoint (0 when it reports none, and for the
        offline backend). For a cached completion these are the original call's
        numbers; the ledger does not bill them again.
    latency_s:
        Wall time of the whole logical call, retries and back-off waits included.
    attempts:
        HTTP attempts it took (1 without retries; 0 when served from the cache).
    cached:
        Whether it was served from the response cache.
    """

    text: str
    purpose: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    attempts: int
    cached: bool


class LLMCallFailed(RelicError):
    """A logical call that got no usable answer, after any retries it was allowed.

    The only exception :meth:`LLMClient.complete` raises for endpoint problems. The
    call is still a logical call (the ledger counts it, and the search charges a
    failed proposal to its budget, as the paper charges an invalid candidate).

    Attributes
    ----------
    reason:
        One of ``"timeout"``, ``"rate_limited"``, ``"server_error"``, ``"malformed"``,
        ``"empty"``, ``"auth"``, ``"bad_request"``, ``"connection"``.
    attempts:
        HTTP attempts made before giving up (0 for a failure replayed from the cache).
    cached:
        Whether this is a recorded failure replayed from the response cache.
    """

    def __init__(self, reason: str, message: str, *, attempts: int, cached: bool = False):
        if reason not in FAILURE_REASONS:
            raise ValueError(f"reason must be one of {', '.join(FAILURE_REASONS)}; got {reason!r}")
        self.reason = reason
        self.attempts = attempts
        self.cached = cached
        self.message = message
        super().__init__(f"{reason} after {attempts} attempt(s): {message}")

    def __reduce__(self):  # keep reason/attempts across pickling (worker processes, checkpoints)
        return (_rebuild_failure, (self.reason, self.message, self.attempts))


def _rebuild_failure(reason: str, message: str, attempts: int) -> LLMCallFailed:
    return LLMCallFailed(reason, message, attempts=attempts)


def check_purpose(purpose: object) -> str:
    """Return ``purpose`` if it is ``"proposal"`` or ``"auxiliary"``; raise ``ValueError`` otherwise."""
    if purpose not in PURPOSES:
        raise ValueError(f"purpose must be one of {', '.join(map(repr, PURPOSES))}; got {purpose!r}")
    return str(purpose)


def check_messages(messages: object) -> list[dict[str, str]]:
    """Validate chat messages and return them as a fresh list of plain ``{role, content}`` dicts.

    Raises
    ------
    TypeError
        ``messages`` is not a sequence of mappings, or a content is not a string.
    ValueError
        ``messages`` is empty or a role is not ``"system"``, ``"user"`` or ``"assistant"``.
    """
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise TypeError(f"messages must be a list of {{'role', 'content'}} dicts; got {type(messages).__name__}")
    if not messages:
        raise ValueError("messages must hold at least one message; got an empty list")
    out = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, Mapping):
            raise TypeError(f"messages[{i}] must be a dict with 'role' and 'content'; got {type(msg).__name__}")
        role, content = msg.get("role"), msg.get("content")
        if role not in ROLES:
            raise ValueError(f"messages[{i}]['role'] must be one of {', '.join(ROLES)}; got {role!r}")
        if not isinstance(content, str):
            raise TypeError(f"messages[{i}]['content'] must be a str; got {type(content).__name__}")
        out.append({"role": role, "content": content})
    return out


def check_tag(tag: object) -> str | None:
    """Return ``tag`` if it is ``None`` or a non-empty string; raise ``ValueError`` otherwise."""
    if tag is not None and (not isinstance(tag, str) or not tag):
        raise ValueError(f"tag must be None or a non-empty str such as 'lift' or 'distill'; got {tag!r}")
    return tag


def check_salt(cache_salt: object) -> Any:
    """Return ``cache_salt`` if it is JSON-serialisable; raise ``TypeError`` otherwise."""
    try:
        json.dumps(cache_salt, sort_keys=True)
    except (TypeError, ValueError):
        raise TypeError(f"cache_salt must be JSON-serialisable (str, int, list, ...); got {cache_salt!r}") from None
    return cache_salt
