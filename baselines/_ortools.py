"""OR-Tools, imported on first use: it is the ``solvers`` extra, and a missing extra is a clear error."""

from __future__ import annotations

from typing import Any

from relic_envs.errors import MissingExtra


def cp_model() -> Any:
    """``ortools.sat.python.cp_model`` (CP-SAT)."""
    try:
        from ortools.sat.python import cp_model as module
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise MissingExtra("ortools", "solvers") from exc
    return module


def routing() -> tuple[Any, Any]:
    """``(pywrapcp, routing_enums_pb2)``, OR-Tools' vehicle routing solver."""
    try:
        from ortools.constraint_solver import pywrapcp, routing_enums_pb2
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise MissingExtra("ortools", "solvers") from exc
    return pywrapcp, routing_enums_pb2
