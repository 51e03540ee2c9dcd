"""The solver references of the shipped test splits: where they live and their file layout.

Every benchmark's references (CP-SAT, OR-Tools routing, the best-found local searches)
are files beside its splits, ``relic_envs/data/<benchmark>/<solver>_test.npz``, one place
for all four families. ``baselines`` computes and writes them (``relic-baselines optimum
--write`` and the family modules' ``--write``); ``baselines``, ``relic_experiments``,
``relic eval`` and the docs read them from here. None of them is recomputed on install.

Two layouts, both one compressed ``.npz`` with ``meta`` (a JSON string: solver, settings,
machine):

* per test size (MAPP, MAS, CO): one array per ``"<test size>.<field>"`` (``objective``,
  ``bound``, ``status`` ...), read and written by :func:`load_results` / :func:`save_results`;
* one test split (DCOP): one array per field, by :func:`load_fields` / :func:`save_fields`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from relic_envs.core.splits import DATA_DIR, check_reference, pin_reference

Results = dict[str, dict[str, np.ndarray]]  # test size -> field -> (instances, ...) array


def reference_path(benchmark: str, file_name: str) -> Path:
    """``relic_envs/data/<benchmark>/<file_name>`` (e.g. ``cpsat_test.npz``)."""
    return DATA_DIR / benchmark / file_name


def _shipped(path: Path) -> Path | None:
    """``path`` as one of the package's references (under ``DATA_DIR``, which the manifest pins), else ``None``."""
    resolved, root = Path(path).resolve(), DATA_DIR.resolve()
    return DATA_DIR / resolved.relative_to(root) if resolved.is_relative_to(root) else None


def _save(path: Path, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, meta=np.array(json.dumps(meta, sort_keys=True)), **arrays)
    if (shipped := _shipped(path)) is not None:
        pin_reference(shipped)


def save_results(path: Path, results: Results, meta: dict[str, Any]) -> None:
    """Write per-test-size ``results`` and ``meta`` to ``path`` (its directory is created)."""
    _save(path, meta, {f"{regime}.{f}": v for regime, fields in results.items() for f, v in fields.items()})


def load_results(path: Path) -> tuple[Results, dict[str, Any]] | None:
    """``(results, meta)`` read back from ``path``, or ``None`` when there is no such file."""
    loaded = load_fields(path)
    if loaded is None:
        return None
    fields, meta = loaded
    results: Results = {}
    for key, value in fields.items():
        regime, field = key.split(".")
        results.setdefault(regime, {})[field] = value
    return results, meta


def save_fields(path: Path, fields: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """Write one split's ``fields`` and ``meta`` to ``path`` (its directory is created)."""
    _save(path, meta, fields)


def load_fields(path: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
    """``(fields, meta)`` read back from ``path``, or ``None`` when there is no such file."""
    if not path.exists():
        return None
    if (shipped := _shipped(path)) is not None:  # a shipped reference is read only as the manifest pinned it
        check_reference(shipped)
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files if k != "meta"}, json.loads(str(data["meta"]))
