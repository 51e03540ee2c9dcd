"""On-disk response cache keyed by the request.

A request (model, messages, sampling parameters and a caller's salt) is hashed from
its canonical JSON; the answer is stored as one small JSON file per key. Re-running
or resuming a run then replays the same answers without calling the endpoint, and
the salt (e.g. run seed and proposal index) keeps two identical prompts at different
points of a run apart when they should be independent draws.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

ENTRY_VERSION = 1


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal requests give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


class ResponseCache:
    """A directory of cached responses, one JSON file per request key.

    Entries live in ``<directory>/<key[:2]>/<key>.json``; writes are atomic (temporary
    file in the same directory, then ``os.replace``), so a crash never leaves half an
    entry. An entry that cannot be read, does not parse, or was stored for another
    request is logged and ignored, never raised.

    Parameters
    ----------
    directory:
        Where entries live; created if missing.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> cache = ResponseCache(tmp.name)
    >>> request = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "salt": 0}
    >>> cache.get(request) is None
    True
    >>> cache.put(request, {"text": "hello"})
    >>> cache.get(request)["text"]
    'hello'
    >>> tmp.cleanup()
    """

    def __init__(self, directory: str | os.PathLike[str]):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def key(request: Mapping[str, Any]) -> str:
        """The sha256 hex digest of the request's canonical JSON."""
        return hashlib.sha256(canonical_json(dict(request)).encode("utf-8")).hexdigest()

    def path(self, request: Mapping[str, Any]) -> Path:
        """The file that holds (or would hold) the entry for ``request``."""
        key = self.key(request)
        return self.directory / key[:2] / f"{key}.json"

    def get(self, request: Mapping[str, Any]) -> dict[str, Any] | None:
        """The stored response for ``request``, or ``None`` (missing or unusable entry)."""
        path = self.path(request)
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            logger.warning("ignoring unreadable cache entry %s: %s", path, exc)
            return None
        try:
            entry = json.loads(raw)
        except ValueError as exc:
            logger.warning("ignoring corrupt cache entry %s: %s", path, exc)
            return None
        # The stored request guards against a foreign or hand-edited file under this name.
        if (
            not isinstance(entry, dict)
            or entry.get("version") != ENTRY_VERSION
            or entry.get("request") != json.loads(canonical_json(dict(request)))
            or not isinstance(entry.get("response"), dict)
        ):
            logger.warning("ignoring cache entry %s: not an entry for this request", path)
            return None
        return entry["response"]

    def put(self, request: Mapping[str, Any], response: Mapping[str, Any]) -> None:
        """Store ``response`` for ``request`` atomically (a failed write is logged, not raised)."""
        path = self.path(request)
        entry = {"version": ENTRY_VERSION, "request": dict(request), "response": dict(response)}
        text = json.dumps(entry, sort_keys=True, ensure_ascii=False, indent=1)
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", dir=path.parent, prefix=f".{path.stem[:8]}-", suffix=".tmp", delete=False
            ) as fh:
                tmp = fh.name
                fh.write(text)
            os.replace(tmp, path)
        except OSError as exc:
            # A cache is an optimisation: losing one entry must not lose the answer.
            logger.warning("could not write cache entry %s: %s", path, exc)
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("??/*.json"))

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.directory)!r})"
