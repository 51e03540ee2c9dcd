"""Build a client from a short spec string (the CLI's ``--llm`` value)."""

from __future__ import annotations

from typing import Any

from relic_envs.errors import InvalidConfig
from relic_learner.llm.client import LLMClient
from relic_learner.llm.offline import OfflineClient
from relic_learner.llm.openai_backend import OpenAIClient

SPEC_FORMS = ("offline", "openai:MODEL")


def check_spec(spec: object, name: str = "llm") -> None:
    """:class:`InvalidConfig` unless ``spec`` has one of :data:`SPEC_FORMS` (nothing is imported or built).

    A bare model name (``"gpt-4o"``) is answered with the spec that names it (``"openai:gpt-4o"``);
    ``name`` is what the message calls the setting (the CLI's ``--llm``).
    """
    if not isinstance(spec, str):
        raise InvalidConfig(f"{name} must be a str such as {' or '.join(map(repr, SPEC_FORMS))}; got {type(spec).__name__}")
    if spec == "offline":
        return
    backend, sep, model = spec.partition(":")
    if backend == "openai" and sep and model.strip():
        return
    hint = f"; did you mean 'openai:{spec.strip()}'?" if spec.strip() and not sep else ""
    raise InvalidConfig(f"unknown {name} {spec!r}: allowed forms are {', '.join(map(repr, SPEC_FORMS))}{hint}")


def make_client(spec: str, **kw: Any) -> LLMClient:
    """A client for ``spec``: ``"offline"`` or ``"openai:MODEL"``.

    Keyword arguments go to the backend's constructor
    (:class:`~relic_learner.llm.offline.OfflineClient` or
    :class:`~relic_learner.llm.openai_backend.OpenAIClient`), which rejects unknown ones.

    Raises
    ------
    InvalidConfig
        ``spec`` is not one of the allowed forms (or names no model); a ``ValueError``.
    TypeError
        ``spec`` is not a str.
    """
    if not isinstance(spec, str):
        raise TypeError(f"spec must be a str such as {' or '.join(map(repr, SPEC_FORMS))}; got {type(spec).__name__}")
    check_spec(spec)
    if spec == "offline":
        return OfflineClient(**kw)
    return OpenAIClient(spec.partition(":")[2].strip(), **kw)
