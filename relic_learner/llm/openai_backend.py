"""The ``openai`` backend: any OpenAI-compatible chat-completions endpoint.

Retries are ours, not the SDK's (``max_retries=0`` on the ``openai.OpenAI`` client),
so that each one is bounded, logged and counted in the ledger; a logical call
stays one call however many attempts it takes (Appendix D.4).

Fault policy (what :class:`OpenAIClient` does with each endpoint problem):

=================  ==============================  ===========================
reason             cause                           handling
=================  ==============================  ===========================
``timeout``        no answer in ``timeout_s``;     retried (up to ``max_retries``)
                   HTTP 408
``connection``     refused / reset connection      retried
``rate_limited``   HTTP 429                        retried, waiting ``Retry-After``
                                                   when sent (capped at ``backoff_max_s``)
``server_error``   HTTP 5xx                        retried (``Retry-After`` honoured)
``malformed``      body is not a chat completion   retried **once** (a truncated body is
                   (bad JSON, no choices)          usually a transient proxy fault, but an
                                                   endpoint that always sends garbage should
                                                   not be hammered)
``empty``          empty or null content           **not** retried: the model answered
                                                   nothing; like an invalid candidate, the
                                                   call is charged (Appendix D.6)
``auth``           HTTP 401 / 403                  not retried
``bad_request``    other HTTP 4xx                  not retried
=================  ==============================  ===========================

After the allowed attempts the call raises
:class:`~relic_learner.llm.base.LLMCallFailed` with that reason; the ledger counts it.

With a response cache, the failure is recorded beside the answers (``auth`` excepted: a
wrong key is the run's fault, not the request's) and, by default, replayed when the same
request comes again, so a rerun that lost its run directories makes the same decisions
at no cost; ``replay_failures=False`` asks recorded failures again instead.
"""

from __future__ import annotations

import email.utils
import logging
import os
import random
import time
from typing import Any

from relic_envs.errors import InvalidConfig, MissingExtra
from relic_learner.llm.base import FAILURE_REASONS, Completion, LLMCallFailed
from relic_learner.llm.cache import ResponseCache
from relic_learner.llm.client import LLMClient
from relic_learner.llm.ledger import CallLedger
from relic_learner.llm.ratelimit import RateLimiter, estimate_tokens

try:
    import openai
except ImportError:  # the `learner` extra is optional; only this backend needs it
    openai = None

DEFAULT_LOGGER = "relic_learner.llm.openai"
RETRYABLE = frozenset({"timeout", "connection", "rate_limited", "server_error", "malformed"})
MAX_MALFORMED_RETRIES = 1


class _Fault(Exception):
    """One failed attempt, classified."""

    def __init__(self, reason: str, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.retry_after = retry_after


class OpenAIClient(LLMClient):
    """An OpenAI-compatible chat-completions backend with bounded, logged retries.

    Parameters
    ----------
    model:
        Model name sent to the endpoint, e.g. ``"gpt-4o-mini"``.
    base_url:
        Endpoint root (``.../v1``); ``None`` is the SDK default (OpenAI's API), or
        whatever ``OPENAI_BASE_URL`` says.
    api_key:
        The key itself. Leave ``None`` to read it from ``api_key_env``; give a dummy
        string explicitly for a local endpoint that ignores keys.
    api_key_env:
        Environment variable holding the key.
    temperature:
        Sampling temperature in ``[0, 2]``.
    max_tokens:
        Cap on completion tokens; ``None`` leaves it to the endpoint.
    timeout_s:
        Per-attempt timeout in seconds.
    max_retries:
        Retries after the first attempt for retryable faults (see the module table).
    backoff_s, backoff_max_s:
        Exponential back-off base and cap in seconds (jittered to 50-100% of
        ``backoff_s * 2**retry``); a ``Retry-After`` header replaces it, capped at ``backoff_max_s``.
    cache_dir:
        Directory of a :class:`~relic_learner.llm.cache.ResponseCache`; ``None`` disables caching.
        A call that fails for good (after its retries) is recorded there too, except an
        ``auth`` failure (the run's key, not the request, was at fault).
    replay_failures:
        ``True`` (default): a recorded failure is replayed (:class:`LLMCallFailed`, no
        request), so a rerun that lost its run directories makes the same decisions at
        no cost. ``False``: recorded failures are asked again and a fresh answer
        replaces the record (``relic-grid run --retry-failed``; results may change).
    logger:
        Where retries and failures are logged; default ``relic_learner.llm.openai``.
    ledger:
        A ledger to count into (e.g. restored from a checkpoint); default a fresh one.
    rate_limiter:
        A :class:`~relic_learner.llm.ratelimit.RateLimiter` shared with other clients
        (e.g. every cell of a grid); every HTTP attempt waits for its turn. Cache hits
        are free. ``None``: no limit of ours (the endpoint's 429s are still honoured).

    Raises
    ------
    InvalidConfig
        No key (naming ``api_key_env``) or an out-of-range argument.
    MissingExtra
        The ``openai`` package is not installed.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float = 1.0,
        max_tokens: int | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        backoff_s: float = 1.0,
        backoff_max_s: float = 30.0,
        cache_dir: str | os.PathLike[str] | None = None,
        logger: logging.Logger | None = None,
        ledger: CallLedger | None = None,
        rate_limiter: RateLimiter | None = None,
        replay_failures: bool = True,
    ):
        super().__init__(ledger=ledger)
        self.replay_failures = bool(replay_failures)
        if openai is None:
            raise MissingExtra("openai", "learner")
        _check(isinstance(model, str) and model.strip() != "", "model", model, "a non-empty model name")
        _check(_is_number(temperature) and 0 <= temperature <= 2, "temperature", temperature, "a number in [0, 2]")
        _check(max_tokens is None or (_is_int(max_tokens) and max_tokens > 0), "max_tokens", max_tokens, "None or an int > 0")
        _check(_is_number(timeout_s) and timeout_s > 0, "timeout_s", timeout_s, "a number > 0")
        _check(_is_int(max_retries) and max_retries >= 0, "max_retries", max_retries, "an int >= 0")
        _check(_is_number(backoff_s) and backoff_s >= 0, "backoff_s", backoff_s, "a number >= 0")
        _check(_is_number(backoff_max_s) and backoff_max_s >= backoff_s, "backoff_max_s", backoff_max_s, f"a number >= backoff_s ({backoff_s})")
        if api_key is None:
            api_key = os.environ.get(api_key_env, "")
            if not api_key.strip():
                raise InvalidConfig(
                    f"OpenAIClient({model!r}) needs an API key: set the environment variable {api_key_env} "
                    f"(or pass api_key_env=<another variable>; for a local endpoint that ignores keys pass "
                    f"api_key='<dummy>' explicitly)"
                )
        self.model = model
        self.temperature = float(temperature)
        self.max_tokens = max_tokens
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.backoff_max_s = float(backoff_max_s)
        self.cache = ResponseCache(cache_dir) if cache_dir is not None else None
        self.rate_limiter = rate_limiter
        self.log = logger if logger is not None else logging.getLogger(DEFAULT_LOGGER)
        self._jitter = random.Random()  # back-off jitter only; never touches program randomness
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=self.timeout_s, max_retries=0)
        self.base_url = str(self._client.base_url)

    def describe(self) -> str:
        cache = self.cache.directory if self.cache is not None else "off"
        limit = "" if self.rate_limiter is None else f", rate limit rpm={self.rate_limiter.rpm} tpm={self.rate_limiter.tpm}"
        return (
            f"openai:{self.model} @ {self.base_url} (temperature={self.temperature}, timeout={self.timeout_s}s, "
            f"max_retries={self.max_retries}, cache={cache}{limit})"
        )

    def close(self) -> None:
        """Close the underlying HTTP connections."""
        self._client.close()

    def cache_request(self, messages: list[dict[str, str]], cache_salt: Any = None) -> dict[str, Any]:
        """What identifies a request in the cache: model, messages, sampling parameters, salt."""
        return {
            "api": "chat.completions",
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "salt": cache_salt,
        }

    # -- one logical call ----------------------------------------------------------------
    def _complete(self, messages: list[dict[str, str]], purpose: str, *, tag: str | None, cache_salt: Any) -> Completion:
        start = time.perf_counter()
        request = self.cache_request(messages, cache_salt)
        if self.cache is not None:
            entry = self.cache.get(request)
            hit = _cached_completion(entry)
            if hit is not None:
                text, model, p_tok, c_tok = hit
                return Completion(text, purpose, model, p_tok, c_tok, time.perf_counter() - start, 0, True)
            failed = _cached_failure(entry) if self.replay_failures else None
            if failed is not None:
                raise LLMCallFailed(failed[0], f"replayed from the response cache: {failed[1]}", attempts=0,
                                    cached=True)
        label = purpose if tag is None else f"{purpose}/{tag}"
        malformed_retries = 0
        attempt = 0
        while True:
            attempt += 1
            try:
                text, model, p_tok, c_tok = self._limited_attempt(messages)
            except _Fault as fault:
                retry = fault.reason in RETRYABLE and attempt <= self.max_retries
                if fault.reason == "malformed":
                    retry = retry and malformed_retries < MAX_MALFORMED_RETRIES
                    malformed_retries += 1
                if not retry:
                    self.log.warning("LLM %s call failed after %d attempt(s): %s: %s", label, attempt, fault.reason, fault.message)
                    if self.cache is not None and fault.reason != "auth":
                        self.cache.put(request, {"failed": {"reason": fault.reason, "message": fault.message[:500]}})
                    raise LLMCallFailed(fault.reason, fault.message, attempts=attempt) from None
                delay = self._delay(attempt, fault.retry_after)
                self.log.warning(
                    "LLM %s call attempt %d/%d failed: %s: %s; retrying in %.3f s%s",
                    label, attempt, self.max_retries + 1, fault.reason, fault.message, delay,
                    " (Retry-After)" if fault.retry_after is not None else "",
                )
                time.sleep(delay)
                continue
            if self.cache is not None:
                self.cache.put(request, {"text": text, "model": model, "prompt_tokens": p_tok, "completion_tokens": c_tok})
            return Completion(text, purpose, model, p_tok, c_tok, time.perf_counter() - start, attempt, False)

    def _limited_attempt(self, messages: list[dict[str, str]]) -> tuple[str, str, int, int]:
        """:meth:`_attempt` after the shared rate limiter admits it; its usage settles the slot."""
        if self.rate_limiter is None:
            return self._attempt(messages)
        slot = self.rate_limiter.acquire(estimate_tokens(messages, self.max_tokens))
        used = None  # a failed attempt keeps its estimate: the request was spent
        try:
            reply = self._attempt(messages)
            if reply[2] + reply[3] > 0:
                used = reply[2] + reply[3]
            return reply
        finally:
            self.rate_limiter.finish(slot, used)

    def _attempt(self, messages: list[dict[str, str]]) -> tuple[str, str, int, int]:
        """One HTTP attempt: ``(text, model, prompt_tokens, completion_tokens)`` or a :class:`_Fault`."""
        extra = {} if self.max_tokens is None else {"max_tokens": self.max_tokens}
        try:
            response = self._client.chat.completions.create(
                model=self.model, messages=messages, temperature=self.temperature, **extra
            )
            return _parse(response, self.model)
        except _Fault:
            raise
        except openai.OpenAIError as exc:
            raise _classify(exc) from None
        except (ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
            # JSON decoding or response-model construction failed: the body is not a completion.
            raise _Fault("malformed", f"{type(exc).__name__}: {exc}") from None

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.backoff_max_s)
        base = min(self.backoff_max_s, self.backoff_s * 2 ** (attempt - 1))
        return base * self._jitter.uniform(0.5, 1.0)


def _parse(response: Any, requested_model: str) -> tuple[str, str, int, int]:
    choices = getattr(response, "choices", None)
    if not choices:
        raise _Fault("malformed", f"response has no choices: {str(response)[:200]!r}")
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    if content is not None and not isinstance(content, str):
        raise _Fault("malformed", f"message content is {type(content).__name__}, not text")
    if content is None or not content.strip():
        finish = getattr(choices[0], "finish_reason", None)
        raise _Fault("empty", f"message content is {content!r} (finish_reason={finish!r})")
    usage = getattr(response, "usage", None)
    p_tok = getattr(usage, "prompt_tokens", None) or 0
    c_tok = getattr(usage, "completion_tokens", None) or 0
    model = getattr(response, "model", None) or requested_model
    return content, str(model), int(p_tok), int(c_tok)


def _classify(exc: Exception) -> _Fault:
    message = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, openai.APITimeoutError):  # before APIConnectionError, its base class
        return _Fault("timeout", message)
    if isinstance(exc, openai.APIConnectionError):
        return _Fault("connection", message)
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        retry_after = _retry_after(exc.response.headers)
        if code == 429:
            return _Fault("rate_limited", message, retry_after)
        if code == 408:
            return _Fault("timeout", message, retry_after)
        if code >= 500:
            return _Fault("server_error", message, retry_after)
        if code in (401, 403):
            return _Fault("auth", message)
        return _Fault("bad_request", message)
    if isinstance(exc, openai.APIResponseValidationError):
        return _Fault("malformed", message)
    # Any other SDK error is a request the SDK itself refused; repeating it cannot help.
    return _Fault("bad_request", message)


def _retry_after(headers: Any) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms``, ``retry-after`` seconds or HTTP date)."""
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return float(ms) / 1000.0
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return float(value)
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return when.timestamp() - time.time()
    except (TypeError, ValueError, OverflowError):
        return None  # an unreadable header falls back to our own back-off


def _cached_completion(entry: dict[str, Any] | None) -> tuple[str, str, int, int] | None:
    if entry is None:
        return None
    text, model = entry.get("text"), entry.get("model")
    p_tok, c_tok = entry.get("prompt_tokens"), entry.get("completion_tokens")
    if not (isinstance(text, str) and text.strip() and isinstance(model, str) and _is_int(p_tok) and _is_int(c_tok)):
        return None  # an entry we cannot use is a miss; the fresh answer overwrites it
    return text, model, p_tok, c_tok


def _cached_failure(entry: dict[str, Any] | None) -> tuple[str, str] | None:
    """``(reason, message)`` of a recorded failure, or None (no entry, an answer, or unusable)."""
    failed = entry.get("failed") if isinstance(entry, dict) else None
    if not isinstance(failed, dict) or failed.get("reason") not in FAILURE_REASONS:
        return None
    return failed["reason"], str(failed.get("message", ""))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check(ok: bool, name: str, value: Any, allowed: str) -> None:
    if not ok:
        raise InvalidConfig(f"OpenAIClient {name} must be {allowed}; got {value!r}")

