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

import time
from collections.abc import Sequence

import numpy as np

from baselines.co import routing_fstsp as FS
from baselines.co import routing_hmtsp as HM
from baselines.co._rows import Row, paper_rows, row
from baselines.co._teams import team_rows
from baselines.co.routing import INSTALL_HINT, load_cache
from relic_envs.co.fstsp import simulator as fsim
from relic_envs.co.hmtsp import simulator as hsim


def _timed(fn, instances) -> tuple[list[float], float]:
    start = time.perf_counter()
    out = [fn(inst) for inst in instances]
    return out, (time.perf_counter() - start) / len(instances)


def ortools_label(name: str, hinted: bool, objective, hint_costs=None) -> str:
    """The OR-Tools row's label: a heuristic (guided local search proves nothing), and, for the
    hinted run, on how many instances it kept its hint (returned the hint row's cost)."""
    label = "OR-Tools routing" if name == "hmtsp" else "OR-Tools truck TSP, drone unused"
    kind = "heuristic, best found, not proven"
    if hint_costs is not None:
        kept = int(np.sum(np.isclose(np.asarray(objective, np.float64), np.asarray(hint_costs, np.float64),
                                     rtol=1e-9, atol=1e-9)))
        kind += f"; hint kept on {kept} of {len(hint_costs)}" if kept else ""
    return label + (f" (hinted; {kind})" if hinted else f" ({kind})")


def build_rows(name: str, regime: str) -> list[Row]:
    """Every measured row of one benchmark and test size (module doc)."""
    from relic_envs.core.splits import splits

    instances = splits(name).test[regime]
    rows = team_rows(name, instances)
    cache = load_cache(name)
    if name == "hmtsp":
        for method in HM.METHODS:
            costs, sec = _timed(lambda inst, m=method: hsim.cost(inst, HM.solve(inst, m)), instances)
            rows.append(row(method, "baselines.co.routing_hmtsp", costs, sec))
    else:
        for method in FS.METHODS:
            costs, sec = _timed(lambda inst, m=method: fsim.cost(inst, FS.solve(inst, m)), instances)
            label = {"truck": "truck NN+2opt (drone unused)", "truck+split": "truck NN+2opt + optimal split"}[method]
            rows.append(row(label, "baselines.co.routing_fstsp", costs, sec))
    for hinted in (False, True):
        ref = load_cache(name, hinted=hinted)
        if ref is None or regime not in ref.results:
            continue
        res, meta, statuses = ref.results[regime], ref.meta, ref.status_text(regime)
        settings = f"GLS, {meta['time_limit_s']:g} s wall/inst" + (f", started from {meta['hint']}" if hinted else "")
        note = f"best found, not proven; cpu {res['cpu_time'].mean():.1f} s/inst; {statuses}"
        hint = next((r for r in rows if hinted and r.name == meta.get("hint")), None)
        label = ortools_label(name, hinted, res["objective"], None if hint is None else hint.costs)
        rows.append(row(label, settings, res["objective"], float(res["wall_time"].mean()), note))
        if name == "fstsp":
            start = time.perf_counter()
            costs = [FS.split(inst, cache.routes(regime, i)[0])[0] for i, inst in enumerate(instances)]
            sec = (time.perf_counter() - start) / len(instances)
            rows.append(row("OR-Tools truck TSP + optimal split (heuristic: optimal split of a heuristic tour)",
                            "split of the cached tour", costs, sec, "split time only"))
    return rows


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
