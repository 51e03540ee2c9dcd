"""LLM access for the RELIC search (DESIGN contract 10).

One interface, :meth:`LLMClient.complete(messages, purpose) <LLMClient.complete>`, with
logical-call accounting by purpose (proposal vs auxiliary, Appendix D.4) in a
:class:`CallLedger`. Backends:

- :class:`OpenAIClient`: any OpenAI-compatible endpoint, key from the environment,
  bounded and logged retries, optional on-disk :class:`ResponseCache` and a
  :class:`RateLimiter` shared by many clients (a grid's cells);
- :class:`OfflineClient`: no endpoint; AST mutation of the parent program. It is not
  an LLM and says so.

:func:`make_client` builds either from ``"offline"`` or ``"openai:MODEL"``.
"""

from relic_learner.llm.base import (
    AUXILIARY,
    FAILURE_REASONS,
    PROPOSAL,
    PURPOSES,
    Completion,
    LLMCallFailed,
)
from relic_learner.llm.cache import ResponseCache
from relic_learner.llm.client import LLMClient
from relic_learner.llm.factory import make_client
from relic_learner.llm.ledger import CallLedger
from relic_learner.llm.offline import OfflineClient
from relic_learner.llm.openai_backend import OpenAIClient
from relic_learner.llm.ratelimit import RateLimiter

__all__ = [
    "AUXILIARY",
    "FAILURE_REASONS",
    "PROPOSAL",
    "PURPOSES",
    "CallLedger",
    "Completion",
    "LLMCallFailed",
    "LLMClient",
    "OfflineClient",
    "OpenAIClient",
    "RateLimiter",
    "ResponseCache",
    "make_client",
]
