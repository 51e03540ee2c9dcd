"""A reference solver run over a benchmark's canonical test splits, and its cached results.

Every optimum or best-found reference (CP-SAT for MAPP, MAS, FJAGV and MRCPS, OR-Tools
routing for HMTSP and FSTSP) solves each test instance once, keeps one array per result
field per test size, and stores them with :func:`relic_envs.core.references.save_results`
under ``relic_envs/data/<name>/``. What differs per benchmark is the solver, its fields
and its settings (``meta``); the loop, the settings every cache records, the cache's
reading, the CP-SAT summary lines and the modules' ``__main__`` command line are here.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from tqdm import tqdm

from relic_envs.core.references import load_results, save_results


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
        results[regime] = stack_fields(solved[regime], fields)
    return results, solved


def write_test_cache(cls: type[Cache], path: Path, benchmark: str, solve: Callable[[Any], Any],
                     fields: Sequence[str], meta: dict[str, Any], progress: bool = True) -> Cache:
    """``solve`` every canonical test instance, store ``fields`` with ``meta`` at ``path``, and return them as ``cls``
    (a :class:`TestSplitCache`); for a solver whose results are all plain fields (no routes to pad)."""
    results, _ = solve_test_splits(benchmark, solve, fields, "cp-sat", progress)
    save_results(path, results, meta)
    return cls(results, meta)


def stack_fields(solved: Sequence[Any], fields: Sequence[str]) -> dict[str, np.ndarray]:
    """One array per field (an attribute of each result), instances in order."""
    return {f: np.array([getattr(r, f) for r in solved]) for f in fields}


def write_meta(benchmark: str, time_limit: float, workers: int, hint: Any, **extra: Any) -> dict[str, Any]:
    """The settings every reference cache records, then the solver's own (``extra``: scales, model)."""
    import ortools  # every reference here is an OR-Tools solver; its version is part of the result

    return {"benchmark": benchmark, "split": "test", "time_limit_s": time_limit, "workers": workers,
            "ortools": ortools.__version__, "hint": hint, **extra}


def machine_note() -> str:
    """The machine and its load now (call it before solving): a wall-clock limit reaches less on a busy one."""
    return f"{os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f} at the start (shared)"


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

    def status_text(self, regime: str) -> str:
        """``<status> <count>, ...`` over every status seen in ``regime`` (a table's note)."""
        return ", ".join(f"{s} {n}" for s, n in self.status_counts(regime).items())


Cache = TypeVar("Cache", bound=TestSplitCache)


def load_cache_as(cls: type[Cache], path: Path) -> Cache | None:
    """The cache at ``path`` as ``cls``, or ``None`` when there is no such file."""
    loaded = load_results(path)
    return None if loaded is None else cls(*loaded)


# -- the CP-SAT references' summary lines ------------------------------------------------
def optimal_feasible(counts: dict[str, int]) -> str:
    """``<n> optimal, <n> feasible``: how a test size's solves ended."""
    return f"{counts['optimal']} optimal, {counts['feasible']} feasible"


def cpsat_summary(name: str, cache: TestSplitCache, *, note: str = "", statuses: Sequence[str] = ("optimal", "feasible"),
                  counted: Callable[[dict[str, int]], str] = optimal_feasible) -> str:
    """One line per test size: mean best and bound (``note`` inside their parentheses), how
    the solves ended (``counted`` of the ``statuses`` counts), the settings."""
    lines = []
    for regime in by_size(cache.results):
        res, meta = cache.results[regime], cache.meta
        lines.append(
            f"{name} {regime}: best {res['objective'].mean():.2f}, bound {res['bound'].mean():.2f} "
            f"(means over {res['objective'].size} instances{note}); {counted(cache.status_counts(regime, statuses))}; "
            f"{meta['time_limit_s']:g}s/instance, {meta['workers']} workers, OR-Tools {meta['ortools']}, "
            f"hint {meta.get('hint')}"
        )
    return "\n".join(lines)


def cached_summary(name: str, load: Callable[[str], Any], summarise: Callable[[str, Any], str], install_hint: str) -> str:
    """``summarise(name, cache)`` of what ``load(name)`` reads, or how to write a missing cache."""
    cache = load(name)
    return summarise(name, cache) if cache is not None else f"{name}: no cached CP-SAT results; {install_hint} {name}"


# -- the command line of a reference module ----------------------------------------------
def reference_main(description: str, names: Sequence[str], write: Callable[..., Any], show: Callable[[str], str], *,
                   time_limit: float, workers: int, hint: bool = False, argv: Sequence[str] | None = None) -> None:
    """``python -m <module> [--write NAME ...] [--time-limit S] [--workers N] [--hint ROW]``:
    writes the caches named, then prints ``show`` of those (of every one of ``names`` without ``--write``)."""
    import argparse

    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--write", nargs="+", choices=list(names), default=[])
    ap.add_argument("--time-limit", type=float, default=time_limit)
    ap.add_argument("--workers", type=int, default=workers)
    if hint:
        ap.add_argument("--hint")
    args = ap.parse_args(argv)
    settings = {"hint": args.hint} if hint else {}  # without the option, write's own default hint
    for name in args.write:
        write(name, time_limit=args.time_limit, workers=args.workers, **settings)
    for name in args.write or names:
        print(show(name))
