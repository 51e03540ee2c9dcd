"""A reference solver run over a benchmark's canonical test splits, and its cached results.

Every optimum or best-found reference (CP-SAT for MAPP, MAS, FJAGV and MRCPS, OR-Tools
routing for HMTSP and FSTSP) solves each test instance once, keeps one array per result
field per test size, and stores them with :func:`relic_envs.core.references.save_results`
under ``relic_envs/data/<name>/``. What differs per benchmark is the solver, its fields
and its settings (``meta``); the loop and the cache's reading are here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from tqdm import tqdm


def by_size(regimes) -> list[str]:
    """Test regimes in increasing size (``test50`` before ``test80``, ``test100`` before ``test200``)."""
    return sorted(regimes, key=lambda r: int(r[4:]))


def solve_test_splits(benchmark: str, solve: Callable[[Any], Any], fields: Sequence[str], desc: str,
                      progress: bool = True) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, list]]:
    """``solve`` on every canonical test instance, in split order.

    Returns ``(results, solved)``: ``results[regime][field]`` one array over the instances
    of each of ``fields`` (attributes of ``solve``'s result), and the results themselves
    per regime, for fields a caller packs its own way (routes).
    """
    from relic_envs.core.splits import splits

    results, solved = {}, {}
    for regime, instances in splits(benchmark).test.items():
        solved[regime] = [solve(inst) for inst in tqdm(instances, desc=f"{desc} {benchmark} {regime}", disable=not progress)]
        results[regime] = {f: np.array([getattr(r, f) for r in solved[regime]]) for f in fields}
    return results, solved


@dataclasses.dataclass(frozen=True)
class TestSplitCache:
    """A reference's results on a benchmark's test splits: ``results[regime][field]``, instances in split order."""

    results: dict[str, dict[str, np.ndarray]]
    meta: dict  # the solver's settings: time limit, workers, OR-Tools version, hint, scales

    def field(self, name: str) -> np.ndarray:
        """One field over every test instance, smallest size first (scalar fields only)."""
        return np.concatenate([self.results[r][name] for r in by_size(self.results)])

    def status_counts(self, regime: str, statuses: Sequence[str] | None = None) -> dict[str, int]:
        """How many instances of ``regime`` ended in each status (every status seen, or ``statuses``)."""
        status = self.results[regime]["status"]
        names = statuses if statuses is not None else sorted(set(status.tolist()))
        return {s: int((status == s).sum()) for s in names}
