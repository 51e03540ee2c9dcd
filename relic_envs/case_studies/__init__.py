"""The paper's case-study programs: RELIC's learned teams as printed in relic.tex.

The paper's "Case Study" appendices print the final program RELIC learned for each
role of MAPP-AR, MAS-FS, FSTSP, MRCPS and DGC (Listings ``lst:case-<benchmark>-<role>``).
Those whose benchmark is built here ship verbatim as
``case_studies/<benchmark>/<interface>/<role>.py`` (a two-line header naming the
listing, then the listing's code unchanged), so they can be run on our simulators
beside the seeds: ``relic-envs eval --env dgc --team case-study``.

They are RELIC's *output*, not seeds; the search starts from ``relic_envs.seeds``.
"""

from __future__ import annotations

from pathlib import Path

from relic_envs.core.program import ProgramPolicy
from relic_envs.core.program_files import ProgramFolder

CASE_STUDIES = ProgramFolder("relic_envs.case_studies", "case-study")


def case_study_names(interface: str = "paper") -> list[str]:
    """Benchmarks with shipped case-study programs on ``interface``."""
    return CASE_STUDIES.available(interface)


def case_study_path(name: str, role: str, interface: str = "paper") -> Path:
    """Path of a case-study program file."""
    return CASE_STUDIES.path(name, role, interface)


def case_study_source(name: str, role: str, interface: str = "paper") -> str:
    """Source text of a case-study program, header comment included."""
    return CASE_STUDIES.source(name, role, interface)


def case_study_team(name: str, interface: str = "paper") -> dict[str, ProgramPolicy]:
    """The paper's printed learned programs of a benchmark as a team of policies."""
    return CASE_STUDIES.team(name, interface)
