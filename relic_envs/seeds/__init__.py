"""Human seed programs for every role, as plain source files.

``seeds/<benchmark>/<interface>/<role>.py`` holds one function with the paper's exact
signature. They are honest, simple heuristics: the starting point of RELIC's search
("a human-written seed program satisfying sigma_i", Appendix C.1) and a reference team.
Randomised choices draw on the evaluator's ``u`` tensor, never on ``np.random``.
The paper's printed learned programs are elsewhere: ``relic_envs.case_studies``.
"""

from __future__ import annotations

from pathlib import Path

from relic_envs.core.program import ProgramPolicy
from relic_envs.core.program_files import ProgramFolder

SEEDS = ProgramFolder("relic_envs.seeds", "seed")


def seed_path(name: str, role: str, interface: str = "paper") -> Path:
    """Path of a seed program file."""
    return SEEDS.path(name, role, interface)


def seed_source(name: str, role: str, interface: str = "paper") -> str:
    """Source text of a seed program."""
    return SEEDS.source(name, role, interface)


def seed_team(name: str, interface: str = "paper") -> dict[str, ProgramPolicy]:
    """The seed programs of a benchmark as a team of policies."""
    return SEEDS.team(name, interface)
