"""Teams of role programs shipped as package data: ``<package>/<benchmark>/<interface>/<role>.py``.

The seed programs (``relic_envs.seeds``) and the paper's case-study programs
(``relic_envs.case_studies``) are both laid out this way; :class:`ProgramFolder` finds,
reads and loads them as :class:`ProgramPolicy` teams.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from relic_envs.core.program import ProgramPolicy
from relic_envs.core.registry import get_benchmark


@dataclass(frozen=True)
class ProgramFolder:
    """One package of program files.

    ``package`` is the importable package that holds them; ``kind`` names them in
    error messages and policy names (``"seed"``, ``"case-study"``).
    """

    package: str
    kind: str

    def root(self) -> Path:
        return Path(str(resources.files(self.package)))

    def path(self, name: str, role: str, interface: str = "paper") -> Path:
        """Path of one role's program file (whether or not it exists)."""
        return self.root() / name / interface / f"{role}.py"

    def available(self, interface: str = "paper") -> list[str]:
        """Benchmarks with a program folder for ``interface``, sorted."""
        return sorted(p.name for p in self.root().iterdir() if (p / interface).is_dir())

    def source(self, name: str, role: str, interface: str = "paper") -> str:
        """Source text of one role's program."""
        path = self.path(name, role, interface)
        if not path.exists():
            raise FileNotFoundError(f"no {self.kind} program for {name} role {role} ({interface} interface): {path}; "
                                    + self._have(interface))
        return path.read_text()

    def _have(self, interface: str) -> str:
        return f"benchmarks with {self.kind} programs on this interface: {', '.join(self.available(interface)) or 'none'}"

    def team(self, name: str, interface: str = "paper") -> dict[str, ProgramPolicy]:
        """The programs of a benchmark as a team of policies, one per role."""
        bench = get_benchmark(name)
        bench.check_interface(interface)
        if not (self.root() / name / interface).is_dir():
            raise FileNotFoundError(f"no {self.kind} programs for {name!r} ({interface} interface); " + self._have(interface))
        signatures = bench.signatures(interface)
        return {
            role: ProgramPolicy(self.source(name, role, interface), signatures[role], name=f"{self.kind}:{name}/{role}")
            for role in bench.roles
        }
