"""The HMTSP and FSTSP results tables: every row beside the best-known solutions.

``python -m baselines.co.routing --table`` prints them (Markdown). Rows, on each canonical
test split (20 instances at 100 and at 200 customers), raw cost (lower is better), mean
and standard deviation over the instances:

- ``seed team`` and (FSTSP) ``case-study team`` (the paper's printed RELIC programs),
  played in the benchmark's episode (``relic_envs.rollout``), with their repair counts;
- the classical rows of :mod:`baselines.co.routing_hmtsp` / :mod:`baselines.co.routing_fstsp`,
  their objective computed by the benchmark's simulator (``simulator.cost``; the tests
  replay every row through the episode and get the same value);
- the OR-Tools references from the cache (:mod:`baselines.co.routing`), and for FSTSP the
  optimal drone split of OR-Tools' truck tour;
- the paper's rows, copied from ``relic.tex`` (Table ``tab:generalization``, lines
  971-982): EoH, ReEvo, MCTS-AHD, HiFo, MOTIF, RELIC. They are **not measured here**, on
  the paper's own test instances (not ours), and their ``±`` is over runs, not instances.

``gap`` = ``(mean - mean best-known) / mean best-known``, where an instance's best-known
value is the least cost any measured row reached on it (none is a proven optimum).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

import numpy as np

from baselines.co import routing_fstsp as FS
from baselines.co import routing_hmtsp as HM
from baselines.co.routing import INSTALL_HINT, load_cache
from relic_envs.co.fstsp import simulator as fsim
from relic_envs.co.hmtsp import simulator as hsim

# relic.tex, Table tab:generalization (lines 971-982): mean, std over runs.
PAPER_GENERALIZATION: dict[str, dict[str, dict[str, tuple[float, float]]]] = {
    "hmtsp": {
        "test100": {"EoH": (75.28, 0.32), "ReEvo": (74.82, 0.16), "MCTS-AHD": (75.13, 0.38), "HiFo": (74.81, 0.18),
                    "MOTIF": (75.13, 0.38), "RELIC": (74.90, 0.03)},
        "test200": {"EoH": (135.08, 1.48), "ReEvo": (133.30, 0.11), "MCTS-AHD": (134.26, 1.54), "HiFo": (133.35, 0.04),
                    "MOTIF": (134.26, 1.54), "RELIC": (133.43, 0.11)},
    },
    "fstsp": {
        "test100": {"EoH": (15.40, 0.73), "ReEvo": (15.58, 4.70), "MCTS-AHD": (11.68, 3.78), "HiFo": (15.85, 0.06),
                    "MOTIF": (9.65, 0.79), "RELIC": (8.54, 0.12)},
        "test200": {"EoH": (26.21, 3.05), "ReEvo": (27.93, 10.39), "MCTS-AHD": (19.29, 8.35), "HiFo": (28.25, 0.33),
                    "MOTIF": (13.27, 1.16), "RELIC": (12.06, 0.12)},
    },
}


@dataclasses.dataclass
class Row:
    name: str
    settings: str
    costs: np.ndarray | None  # per test instance; None for copied paper rows
    mean: float
    std: float
    seconds: float | None = None  # mean wall seconds per instance
    note: str = ""


def _row(name: str, settings: str, costs, seconds: float | None = None, note: str = "") -> Row:
    costs = np.asarray(costs, dtype=float)
    return Row(name, settings, costs, float(costs.mean()), float(costs.std()), seconds, note)


def _team_row(name: str, label: str, settings: str, team, instances) -> Row:
    import relic_envs

    start = time.perf_counter()
    results = relic_envs.rollout(name, team, instances)
    seconds = (time.perf_counter() - start) / len(instances)
    repairs = {r: sum(res.info["repairs"][r] for res in results) for r in "ABC"}
    note = "repairs A/B/C " + "/".join(str(repairs[r]) for r in "ABC")
    return _row(label, settings, [res.objective for res in results], seconds, note)


def _timed(fn, instances) -> tuple[list[float], float]:
    start = time.perf_counter()
    out = [fn(inst) for inst in instances]
    return out, (time.perf_counter() - start) / len(instances)


def build_rows(name: str, regime: str) -> list[Row]:
    """Every measured row of one benchmark and test size (module doc)."""
    from relic_envs.case_studies import case_study_names, case_study_team
    from relic_envs.core.splits import splits
    from relic_envs.seeds import seed_team

    instances = splits(name).test[regime]
    rows = [_team_row(name, "seed team", "seed programs, episode", seed_team(name), instances)]
    if name in case_study_names():
        rows.append(_team_row(name, "case-study team", "paper's printed RELIC programs", case_study_team(name), instances))
    cache = load_cache(name)
    if name == "hmtsp":
        for method in HM.METHODS:
            costs, sec = _timed(lambda inst, m=method: hsim.cost(inst, HM.solve(inst, m)), instances)
            rows.append(_row(method, "baselines.co.routing_hmtsp", costs, sec))
    else:
        for method in FS.METHODS:
            costs, sec = _timed(lambda inst, m=method: fsim.cost(inst, FS.solve(inst, m)), instances)
            label = {"truck": "truck NN+2opt (drone unused)", "truck+split": "truck NN+2opt + optimal split"}[method]
            rows.append(_row(label, "baselines.co.routing_fstsp", costs, sec))
    for hinted in (False, True):
        ref = load_cache(name, hinted=hinted)
        if ref is None or regime not in ref.results:
            continue
        res, meta = ref.results[regime], ref.meta
        statuses = ", ".join(f"{s} {int((res['status'] == s).sum())}" for s in sorted(set(res["status"].tolist())))
        settings = f"GLS, {meta['time_limit_s']:g} s wall/inst" + (f", started from {meta['hint']}" if hinted else "")
        note = f"best found, not proven; cpu {res['cpu_time'].mean():.1f} s/inst; {statuses}"
        label = "OR-Tools routing" if name == "hmtsp" else "OR-Tools truck TSP (drone unused)"
        rows.append(_row(label + (" (hinted)" if hinted else ""), settings, res["objective"], float(res["wall_time"].mean()), note))
        if name == "fstsp":
            start = time.perf_counter()
            costs = [FS.split(inst, cache.routes(regime, i)[0])[0] for i, inst in enumerate(instances)]
            sec = (time.perf_counter() - start) / len(instances)
            rows.append(_row("OR-Tools truck TSP + optimal split", "split of the cached tour", costs, sec,
                             "split time only"))
    return rows


def paper_rows(name: str, regime: str) -> list[Row]:
    return [
        Row(f"paper: {method}", "relic.tex tab:generalization", None, mean, std, note="copied; paper's instances, ± over runs")
        for method, (mean, std) in PAPER_GENERALIZATION[name][regime].items()
    ]


def format_table(name: str, regime: str, rows: Sequence[Row], paper: Sequence[Row]) -> str:
    measured = np.stack([r.costs for r in rows])
    best = measured.min(axis=0)
    ref = float(best.mean())
    winners = [r.name for r in rows if np.any(np.isclose(r.costs, best, rtol=0, atol=1e-9))]
    lines = [
        f"**{name.upper()} {regime[4:]} customers** ({len(best)} test instances; best-known = per-instance minimum over "
        f"the measured rows, mean {ref:.2f}; reached by: {', '.join(winners)}). "
        f"Command: `python -m baselines.co.routing --table --env {name}` (both sizes)",
        "",
        "| row | settings | mean ± std | gap to best-known | s/inst | notes |",
        "|---|---|---|---|---|---|",
    ]
    for r in [*rows, *paper]:
        sec = f"{r.seconds:.2f}" if r.seconds is not None else "-"
        lines.append(f"| {r.name} | {r.settings} | {r.mean:.2f} ± {r.std:.2f} | {100 * (r.mean - ref) / ref:+.2f}% | {sec} | {r.note} |")
    if load_cache(name) is None:
        lines.append(f"\n(no OR-Tools reference cached; {INSTALL_HINT} {name})")
    return "\n".join(lines)


def tables(names: Sequence[str] = ("hmtsp", "fstsp")) -> str:
    out = []
    for name in names:
        for regime in ("test100", "test200"):
            out.append(format_table(name, regime, build_rows(name, regime), paper_rows(name, regime)))
    return "\n\n".join(out)
