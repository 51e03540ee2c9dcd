"""JAX twins of the FJAGV seed programs (``relic_envs/seeds/fjagv/paper/<role>.py``).

Same formulas and tie-breaking: each numpy seed takes ``ids[np.lexsort(...)[0]]`` over
the candidate arrays (ascending ids, stable sort), which is
:func:`~relic_envs.co._jax_decisions.lex_first` over the full-length masked arrays.
"""

from __future__ import annotations

from collections.abc import Callable

from relic_envs.co._jax_decisions import lex_first
from relic_envs.core.jax_policy import as_policy


def select_next_A(operation_id, machine_ids, processing_times, machine_ready_times):
    """Twin of ``A.py``: earliest finish (ties: shorter processing)."""
    proc = processing_times["value"]
    return lex_first(machine_ids > 0, machine_ready_times["value"] + proc, proc)


def select_next_B(machine_id, operation_ids, processing_times, due_dates):
    """Twin of ``B.py``: earliest due date first (ties: shortest processing time)."""
    return lex_first(operation_ids > 0, due_dates["value"], processing_times["value"])


def select_next_C(agv_id, request_ids, travel_times, ready_times):
    """Twin of ``C.py``: nearest request first (ties: the one waiting longest)."""
    return lex_first(request_ids > 0, travel_times["value"], ready_times["value"])


def seed_policies() -> dict[str, Callable]:
    return {"A": as_policy(select_next_A), "B": as_policy(select_next_B), "C": as_policy(select_next_C)}
