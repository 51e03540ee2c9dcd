"""JAX twins of the MRCPS seed programs (``relic_envs/seeds/mrcps/paper/<role>.py``).

Same formulas and tie-breaking: each numpy seed takes ``ids[np.lexsort(...)[0]]`` over
the candidate arrays (ascending ids, stable sort), which is
:func:`~relic_envs.co._jax_decisions.lex_first` over the full-length masked arrays.
"""

from __future__ import annotations

from collections.abc import Callable

from relic_envs.co._jax_decisions import lex_first
from relic_envs.core.jax_policy import as_policy


def select_next_A(project_ids, due_dates, remaining_task_counts, t_now):
    """Twin of ``A.py``: earliest due date first (ties: the project with more tasks left)."""
    return lex_first(project_ids > 0, due_dates["value"], -remaining_task_counts["value"])


def select_next_B(project_id, task_ids, durations, successor_counts):
    """Twin of ``B.py``: most successors first (ties: shortest duration)."""
    return lex_first(task_ids > 0, -successor_counts["value"], durations["value"])


def select_next_C(task_id, worker_ids, skill_levels, worker_costs):
    """Twin of ``C.py``: fastest worker (highest skill level; ties: the cheaper one)."""
    return lex_first(worker_ids > 0, -skill_levels["value"], worker_costs["value"])


def seed_policies() -> dict[str, Callable]:
    return {"A": as_policy(select_next_A), "B": as_policy(select_next_B), "C": as_policy(select_next_C)}
