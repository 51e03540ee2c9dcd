"""The cache file layout shared by the per-size solver references (MAS and FJAGV/MRCPS CP-SAT).

One compressed ``.npz`` per benchmark: ``meta`` (a JSON string: solver, settings, machine)
and one array per ``"<test size>.<field>"`` (``objective``, ``bound``, ``status`` ...).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

Results = dict[str, dict[str, np.ndarray]]  # test size -> field -> (instances, ...) array


def save_results(path: Path, results: Results, meta: dict[str, Any]) -> None:
    """Write ``results`` and ``meta`` to ``path`` (its directory is created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {f"{regime}.{f}": v for regime, fields in results.items() for f, v in fields.items()}
    np.savez_compressed(path, meta=np.array(json.dumps(meta, sort_keys=True)), **arrays)


def load_results(path: Path) -> tuple[Results, dict[str, Any]] | None:
    """``(results, meta)`` read back from ``path``, or ``None`` when there is no such file."""
    if not path.exists():
        return None
    results: Results = {}
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(str(data["meta"]))
        for key in data.files:
            if key != "meta":
                regime, field = key.split(".")
                results.setdefault(regime, {})[field] = data[key]
    return results, meta
