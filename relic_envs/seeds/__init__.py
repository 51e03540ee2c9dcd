"""Human seed programs for every role, as plain source files.

``seeds/<benchmark>/<interface>/<role>.py`` holds one function with the paper's exact
signature. They are honest, simple heuristics: the starting point of RELIC's search
and a reference team. Randomised choices draw on the evaluator's ``u`` tensor, never
on ``np.random``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from relic_envs.core.program import ProgramPolicy
from relic_envs.core.registry import get_benchmark


def seed_path(name: str, role: str, interface: str = "paper") -> Path:
    """Path of a seed program file."""
    return Path(str(resources.files("relic_envs.seeds") / name / interface / f"{role}.py"))


def seed_source(name: str, role: str, interface: str = "paper") -> str:
    """Source text of a seed program."""
    path = seed_path(name, role, interface)
    if not path.exists():
        raise FileNotFoundError(f"no seed program for {name} role {role} ({interface} interface): {path}")
    return path.read_text()


def seed_team(name: str, interface: str = "paper") -> dict[str, ProgramPolicy]:
    """The seed programs of a benchmark as a team of policies."""
    bench = get_benchmark(name)
    signatures = bench.signatures(interface)
    return {
        role: ProgramPolicy(seed_source(name, role, interface), signatures[role], name=f"seed:{name}/{role}")
        for role in bench.roles
    }
