"""Teams among the CO rows: a scheduling row (or its ``+ls`` local search) as a team of the
env (FJAGV, MRCPS), and the rows of the teams every CO results table starts with."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from baselines.co._rows import Row, team_row
from baselines.co.sched_play import PlanTeam
from relic_envs.errors import InvalidConfig


def with_ls(method: str, bases: Collection[str]) -> bool:
    """Whether ``method`` is one of ``bases``, alone or as ``<base>+ls``."""
    base, _, ls = method.partition("+")
    return base in bases and ls in ("", "ls")


def row_team(method: str, valid: bool, run: Callable[[Any, str], tuple[float, Any]], rows: str) -> PlanTeam:
    """Row ``method`` as a team of the env, replaying the choices ``run(instance, method)`` records;
    ``InvalidConfig`` naming the valid ``rows`` unless ``valid``."""
    if not valid:
        raise InvalidConfig(f"{rows}, got {method!r}")
    return PlanTeam(lambda inst: run(inst, method)[1])


def team_rows(name: str, instances: Sequence[Any]) -> list[Row]:
    """The seed team's row and, where the paper printed one, the case-study team's, played in the episode."""
    from relic_envs.case_studies import case_study_names, case_study_team
    from relic_envs.seeds import seed_team

    rows = [team_row(name, "seed team", "seed programs, episode", seed_team(name), instances)]
    if name in case_study_names():
        rows.append(team_row(name, "case-study team", "paper's printed RELIC programs", case_study_team(name), instances))
    return rows
