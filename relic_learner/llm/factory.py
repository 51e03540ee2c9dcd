"""Build a client from a short spec string (the CLI's ``--llm`` value)."""

from __future__ import annotations

from typing import Any

from relic_learner.llm.client import LLMClient
from relic_learner.llm.offline import OfflineClient
from relic_learner.llm.openai_backend import OpenAIClient

SPEC_FORMS = ("offline", "openai:MODEL")


def make_client(spec: str, **kw: Any) -> LLMClient:
    """A client for ``spec``: ``"offline"`` or ``"openai:MODEL"``.

    Keyword arguments go to the backend's constructor
    (:class:`~relic_learner.llm.offline.OfflineClient` or
    :class:`~relic_learner.llm.openai_backend.OpenAIClient`), which rejects unknown ones.

    Raises
    ------
    ValueError
        ``spec`` is not one of the allowed forms (or names no model).
    """
    if not isinstance(spec, str):
        raise TypeError(f"spec must be a str such as {' or '.join(map(repr, SPEC_FORMS))}; got {type(spec).__name__}")
    if spec == "offline":
        return OfflineClient(**kw)
    backend, sep, model = spec.partition(":")
    if backend == "openai" and sep and model.strip():
        return OpenAIClient(model.strip(), **kw)
    raise ValueError(f"unknown LLM spec {spec!r}; allowed forms: {', '.join(map(repr, SPEC_FORMS))}")
