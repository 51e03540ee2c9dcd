"""Run directories (DESIGN §11): config, append-only events, atomic checkpoint, outputs.

Layout of a run directory::

    config.json        the RelicConfig, as given
    events.jsonl       one JSON object per line, ``seq`` = line number (0-based)
    checkpoint.pkl     the search state after the last completed step (atomic replace)
    llm_cache/         responses of the openai backend, so a resumed run replays them
    provenance.json    package version, git commit, splits digest (artifacts.py)
    transcripts/       every LLM call's messages and reply, gzip-compressed JSON (artifacts.py)
    invalid/           the source of candidates that failed evaluation (artifacts.py)
    team/{A,B,C}.py    the final incumbent team
    public_tree.json   the public principle tree
    trees.json         the private trees (each node's gain at creation and its current Q)
    operators.md       operator statistics in the paper's format (Table 5)
    curve.png          the learning curve (mixed-batch score per batch)
"""

from __future__ import annotations

import json
import os
import pickle
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from relic_learner import killpoints


class RunDir:
    """A run's directory and its append-only event log."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.events_path = self.path / "events.jsonl"
        self.checkpoint_path = self.path / "checkpoint.pkl"
        self.config_path = self.path / "config.json"
        self._seq = self._count_events()

    def _count_events(self) -> int:
        if not self.events_path.exists():
            return 0
        with open(self.events_path, "rb") as f:
            return sum(1 for line in f if line.endswith(b"\n"))

    @property
    def seq(self) -> int:
        """Events written so far."""
        return self._seq

    def event(self, kind: str, **fields: Any) -> None:
        record = {"seq": self._seq, "time": round(time.time(), 3), "kind": kind, **fields}
        with open(self.events_path, "a") as f:
            f.write(json.dumps(record, default=_jsonable) + "\n")
            f.flush()
        self._seq += 1
        killpoints.reached("event")

    def truncate_events(self, count: int) -> None:
        """Keep the first ``count`` events: those after a checkpoint are replayed on resume."""
        if not self.events_path.exists():
            self._seq = 0
            return
        with open(self.events_path, "rb") as f:
            lines = [line for line in f if line.endswith(b"\n")][:count]
        tmp = self.events_path.with_suffix(".tmp")
        tmp.write_bytes(b"".join(lines))
        os.replace(tmp, self.events_path)
        self._seq = len(lines)

    def events(self) -> list[dict[str, Any]]:
        if not self.events_path.exists():
            return []
        with open(self.events_path) as f:
            return [json.loads(line) for line in f if line.strip()]

    def proposals(self) -> list[dict[str, Any]]:
        """The proposal events: the operator statistics are derived from them."""
        return [e for e in self.events() if e["kind"] == "proposal"]

    def write_json(self, name: str, data: Any) -> None:
        atomic_write(self.path / name, json.dumps(data, indent=2, default=_jsonable).encode())

    def save_checkpoint(self, state: Any) -> None:
        data = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
        atomic_write(self.checkpoint_path, data, before_replace=lambda: killpoints.reached("checkpoint"))

    def load_checkpoint(self) -> Any:
        with open(self.checkpoint_path, "rb") as f:
            return pickle.load(f)


def atomic_write(path: Path, data: bytes, before_replace: Callable[[], None] | None = None) -> None:
    """Write to a temporary file in the same directory, fsync, then rename over ``path``.

    ``before_replace`` runs between the two (the kill tests' hook).
    """
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    if before_replace is not None:
        before_replace()
    os.replace(tmp, path)


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    return str(value)
