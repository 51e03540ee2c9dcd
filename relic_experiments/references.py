"""Rows printed beside a grid's own: classical algorithms, solver references, and the paper's numbers.

A grid's table answers "which method is best"; these rows answer "best compared with
what". Three kinds, each opt-in on ``relic-grid table``:

``--classical``
    The classical algorithms of each family (``baselines``), played on the same test
    instances as the cells: one run each (they are deterministic given the instance),
    cached in ``OUT/references/`` so a table is computed once. The rows chosen per
    benchmark are :data:`CLASSICAL`: the field's standard rules and the strongest
    classical rows of our results pages that run in seconds (MAPP: greedy insertion and ILS
    for PC/AR, online insertion for DS, ``baselines.mapp``).
``--solver``
    The cached solver references shipped with ``baselines`` (:data:`SOLVER`): CP-SAT's
    best found assignment (DCOP, MRCPS; MAS: the best offline, clairvoyant schedule CP-SAT
    found in 10 s, a heuristic reference, neither an optimum nor a bound: online teams
    can beat it, as the MAS-FS alternative-interface seeds do), OR-Tools' routing solver
    (HMTSP), CP-SAT's lower bound of a relaxation (FJAGV, whose exact model does not solve
    at the test sizes). FSTSP's cached reference is a truck-only tour, not a reference for
    the objective. MAPP: CP-SAT's best found (PC), the best ILS plan found (AR), the
    offline full-information plan (DS, clairvoyant: an upper reference, not a bound).
``--learned DIR``
    Trained IPPO / MAPPO teams (``baselines.rl``): every checkpoint ``DIR/<env>_<algo>``
    (``DIR/<env>_alt_<algo>`` for the alternative interface) is played greedily on the
    same test instances, once, and cached in ``OUT/references/`` like the classical rows.
    The repository's checkpoints are in ``docs/images/rl/checkpoints``.
``--paper``
    The paper's own means and standard deviations (:mod:`relic_envs.paper_numbers`; DCOP:
    its Table 2, the GPT-4o-mini rows), labelled as theirs.

Reference rows never take part in "best of the column": the gap of every row, references
included, is to the best of the grid's own rows (the paper's definition), so a reference
that beats the grid shows a negative gap.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

import relic_envs
from relic_envs.paper_numbers import PAPER

_DCOPS = ("dgc", "dimes", "sensor_dcsp", "shds")

#: benchmark -> classical teams (names ``relic-baselines eval --team`` takes).
CLASSICAL: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(_DCOPS, ("dsa-b", "mgm2")),
    "mas_jd": ("fifo", "atc:tuned"),
    "mas_st": ("fifo", "value_density+skip"),
    "mas_fs": ("fifo", "wspt"),
    "hmtsp": ("nn", "ci+2opt+relocate"),
    "fstsp": ("truck", "truck+split"),
    "fjagv": ("ef-spt-fcfs", "spt-atc-nearest"),
    "mrcps": ("par-lft-speed", "par-mslk-speed"),
    "mapp_pc": ("greedy", "ils"),
    "mapp_ar": ("greedy", "ils"),
    "mapp_ds": ("online",),
}

#: benchmark -> (row label, which cache, which field).
SOLVER: dict[str, tuple[str, str, str]] = {
    **dict.fromkeys(_DCOPS, ("CP-SAT best found", "dcop", "objective")),
    "mas_st": ("CP-SAT best found (offline, clairvoyant; heuristic, not proven)", "mas", "objective"),
    # MAS-JD, MAS-FS: the offline local search, never worse than CP-SAT on any instance (baselines.mas.offline_ls)
    **dict.fromkeys(("mas_jd", "mas_fs"), ("offline local search (clairvoyant; heuristic, not proven)", "mas_ls",
                                           "objective")),
    "hmtsp": ("OR-Tools routing best found", "routing", "objective"),
    "mrcps": ("CP-SAT best found", "sched", "objective"),
    "fjagv": ("CP-SAT lower bound (relaxation)", "sched", "bound"),
    "mapp_pc": ("CP-SAT best found (ILS hint)", "mapp", "objective"),
    "mapp_ar": ("best ILS plan found", "mapp_ref", "objective"),
    "mapp_ds": ("offline full-information plan (clairvoyant)", "mapp_ref", "objective"),
}

_DCOP_PAPER_NAMES = {"EoH": "eoh", "ReEvo": "reevo", "MCTS-AHD": "mcts_ahd", "HiFo": "hifo", "MOTIF": "motif",
                     "RELIC (GPT-4o-mini)": "relic"}


@dataclasses.dataclass(frozen=True)
class Reference:
    """One row beside the grid's: per (env, test size, interface), ``(mean, std, runs)``."""

    label: str
    values: dict[tuple[str, str, str], tuple[float, float, int]]


def classical(envs: Iterable[tuple[str, str]], out: str | Path, *, progress: bool = False) -> list[Reference]:
    """Each benchmark's :data:`CLASSICAL` rows on its test sizes, for the ``(env, interface)`` pairs given."""
    from baselines.cli import evaluate

    rows: dict[str, dict] = {}
    for env, interface in envs:
        for team in CLASSICAL.get(env, ()):
            for size in relic_envs.splits(env).test:
                values = _cached(Path(out) / "references" / f"{env}-{interface}" / f"{team.replace(':', '_')}.json",
                                 lambda env=env, team=team, interface=interface: _play(evaluate, env, team, interface))
                per_instance = values[size]
                rows.setdefault(f"classical: {team}", {})[(env, size, interface)] = (
                    float(np.mean(per_instance)), 0.0, 1)
    return [Reference(label, values) for label, values in rows.items()]


def learned(envs: Iterable[tuple[str, str]], out: str | Path, checkpoints: str | Path) -> list[Reference]:
    """``learned: IPPO`` / ``learned: MAPPO`` rows from the checkpoints under ``checkpoints`` (module doc)."""
    from baselines.cli import evaluate

    rows: dict[str, dict] = {}
    for env, interface in envs:
        for algo in ("ippo", "mappo"):
            path = Path(checkpoints) / (f"{env}_{algo}" if interface == "paper" else f"{env}_{interface}_{algo}")
            if not (path / "config.json").exists():
                continue
            values = _cached(Path(out) / "references" / f"{env}-{interface}" / f"{algo}.json",
                             lambda env=env, team=f"{algo}:{path}", interface=interface: _play(evaluate, env, team, interface))
            for size, per_instance in values.items():
                rows.setdefault(f"learned: {algo.upper()}", {})[(env, size, interface)] = (float(np.mean(per_instance)), 0.0, 1)
    return [Reference(label, values) for label, values in rows.items()]


def _play(evaluate, env: str, team: str, interface: str) -> dict[str, list[float]]:
    results = evaluate(env, team, "test", progress=False, interface=interface)
    sizes = relic_envs.splits(env).test
    out, k = {}, 0
    for size, instances in sizes.items():  # ``evaluate(..., "test")`` plays every size in split order
        out[size] = [float(r.objective) for r in results[k:k + len(instances)]]
        k += len(instances)
    return out


def _cached(path: Path, compute) -> dict[str, list[float]]:
    if path.exists():
        return json.loads(path.read_text())
    values = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(values))
    return values


def solver(envs: Iterable[tuple[str, str]]) -> list[Reference]:
    """The cached solver reference of each benchmark that has one (:data:`SOLVER`); absent caches are skipped."""
    rows: dict[str, dict] = {}
    for env, interface in envs:
        if env not in SOLVER:
            continue
        label, kind, field = SOLVER[env]
        per_size = _solver_values(env, kind, field)
        for size, values in (per_size or {}).items():
            rows.setdefault(label, {})[(env, size, interface)] = (float(np.mean(values)), 0.0, 1)
    return [Reference(label, values) for label, values in rows.items()]


def _solver_values(env: str, kind: str, field: str) -> dict[str, np.ndarray] | None:
    if kind == "dcop":
        from baselines.dcop import cpsat

        cache = cpsat.load_cache(env)
        return None if cache is None else {"test": getattr(cache, field)}
    if kind in ("mapp", "mapp_ref"):
        from baselines.mapp import cpsat as mapp_cpsat
        from baselines.mapp import reference as mapp_reference

        loaded = (mapp_cpsat if kind == "mapp" else mapp_reference).load_cache(env)
        return None if loaded is None else {size: loaded[0][size][field] for size in loaded[0]}
    if kind == "mas_ls":
        from baselines.mas import offline_ls

        loaded = offline_ls.load_cache(env)
        return None if loaded is None else {size: loaded[0][size][field] for size in loaded[0]}
    if kind == "mas":
        from baselines.mas import cpsat as module
    elif kind == "routing":
        from baselines.co import routing as module
    else:
        from baselines.co import sched_cpsat as module
    cache = module.load_cache(env)
    return None if cache is None else {size: cache.results[size][field] for size in cache.results}


def paper(envs: Iterable[tuple[str, str]]) -> list[Reference]:
    """The paper's rows for the grid's ``(env, interface)`` pairs, labelled ``<method> (paper)``."""
    from relic_envs.paper_numbers import PAPER_TABLE2

    rows: dict[str, dict] = {}
    for env, interface in envs:
        if env in _DCOPS and interface == "paper":
            for name, (mean, std) in PAPER_TABLE2[env].items():
                if name in _DCOP_PAPER_NAMES:
                    rows.setdefault(f"{_DCOP_PAPER_NAMES[name]} (paper)", {})[(env, "test", interface)] = (mean, std, 3)
            continue
        for column, methods in PAPER.get(interface, {}).items():
            column_env, size = column.split("/")
            if column_env == env:
                for method, (mean, std) in methods.items():
                    rows.setdefault(f"{method} (paper)", {})[(env, size, interface)] = (mean, std, 3)
    return [Reference(label, values) for label, values in rows.items()]
