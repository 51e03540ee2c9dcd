"""The FJAGV and MRCPS results tables: every row beside CP-SAT's best and proven bound.

``relic-baselines table --env fjagv --env mrcps`` (or ``python -m baselines.co.sched_table``)
prints them (Markdown). Rows, on each canonical test split (20 instances at 100 and at
200 jobs / tasks), raw cost (lower is better), mean and standard deviation over the
instances:

- ``seed team`` and (MRCPS) ``case-study team`` (the paper's printed RELIC programs),
  played in the benchmark's episode (``relic_envs.rollout``), with their repair counts;
- the classical rows of :mod:`baselines.co.sched_fjagv` / :mod:`baselines.co.sched_mrcps`
  (rules and local search played in the episode; MRCPS serial rows scored by
  ``simulator.cost``);
- CP-SAT (:mod:`baselines.co.sched_cpsat`, from the cache): its best schedule's cost and
  its proven lower bound;
- the paper's rows, copied from ``relic.tex`` (Table ``tab:generalization``, lines
  1000-1012): EoH, ReEvo, MCTS-AHD, HiFo, MOTIF, RELIC. They are **not measured here**,
  on the paper's own test instances (not ours), and their ``±`` is over runs.

``gap to bound`` = ``(mean - mean bound) / mean bound``, an instance's bound being the best
of the lower-bound rows (CP-SAT's proven bound; for FJAGV also the combinatorial bound of
``sched_cpsat.fjagv_lower_bound``, much tighter than a 15 s CP-SAT bound at this size);
``gap to best`` the same to the mean of the per-instance least cost any measured row
reached (best-known, not a proven optimum).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from baselines.co import sched_fjagv as F
from baselines.co import sched_mrcps as M
from baselines.co._rows import Row, paper_rows, row
from baselines.co._teams import team_rows
from baselines.co.sched_cpsat import INSTALL_HINT, load_cache


def _method_row(module, method: str, settings: str, instances, note: str = "") -> Row:
    start = time.perf_counter()
    costs = [module.run(inst, method)[0] for inst in instances]
    return row(method, settings, costs, (time.perf_counter() - start) / len(instances), note)


def cpsat_label(res: dict, hint_costs=None) -> str:
    """The CP-SAT row's label: of the instances, how many are a ``proven optimum`` (status
    optimal of an exact model, ``res["exact"]``), ``hint kept`` (not proven, and the cost of
    the hint row's schedule: CP-SAT found nothing better) and ``heuristic`` (better than the
    hint, not proven)."""
    exact = np.asarray(res.get("exact", np.ones(res["objective"].shape, bool)), bool)
    proven = (np.asarray(res["status"]) == "optimal") & exact
    kept = np.zeros_like(proven) if hint_costs is None else ~proven & np.isclose(
        res["objective"], np.asarray(hint_costs, np.float64), rtol=1e-9, atol=1e-9)
    counts = (("proven optimum", int(proven.sum())), ("heuristic", int((~proven & ~kept).sum())),
              ("hint kept", int(kept.sum())))
    return f"CP-SAT best found ({', '.join(f'{k} {c}' for k, c in counts if c)} of {proven.size})"


def build_rows(name: str, regime: str) -> tuple[list[Row], list[Row]]:
    """Every measured row of one benchmark and test size, and its lower-bound rows (FJAGV: CP-SAT's
    and the combinatorial bound of ``sched_cpsat.fjagv_lower_bound``; MRCPS: CP-SAT's)."""
    from relic_envs.core.splits import splits

    instances = splits(name).test[regime]
    rows = team_rows(name, instances)
    if name == "fjagv":
        rows += [_method_row(F, m, "dispatch rules, episode", instances) for m in F.METHODS]
        rows.append(_method_row(F, F.LS_BASE + "+ls", f"problem-space LS, {F.LS_BUDGET} episodes", instances))
    else:
        rows += [_method_row(M, m, "parallel SGS, episode", instances) for m in M.PARALLEL]
        rows += [_method_row(M, m, "serial SGS, simulator.cost", instances) for m in M.SERIAL]
        rows.append(_method_row(M, M.LS_BASE + "+ls", f"priority-list LS, {M.LS_BUDGET} episodes", instances))
    bounds = []
    if name == "fjagv":
        from baselines.co.sched_cpsat import fjagv_lower_bound

        bounds.append(row("combinatorial bound (proven)", "fjagv_lower_bound (machine-speed relaxation)",
                           [fjagv_lower_bound(inst) for inst in instances], note="valid for every schedule"))
    cache = load_cache(name)
    if cache is None or regime not in cache.results:
        return rows, bounds
    res, meta, statuses = cache.results[regime], cache.meta, cache.status_text(regime)
    how = "relaxed model, solution replayed in the episode" if name == "fjagv" else "exact model, simulator.cost"
    hint = next((r for r in rows if r.name == meta.get("hint")), None)
    rows.append(row(cpsat_label(res, None if hint is None else hint.costs),
                    f"{meta['time_limit_s']:g} s/inst, {meta['workers']} thread, hint {meta['hint']}",
                    res["objective"], float(res["wall_time"].mean()), f"{how}; {statuses}"))
    model = "relaxed model (no deadhead)" if name == "fjagv" else "exact model"
    bounds.append(row("CP-SAT bound (proven)", f"proven, {model}", res["bound"], note="valid for every schedule"))
    return rows, bounds


def format_table(name: str, regime: str, rows: Sequence[Row], bounds: Sequence[Row], paper: Sequence[Row]) -> str:
    best = np.stack([r.costs for r in rows]).min(axis=0)
    ref_best = float(best.mean())
    bound = np.stack([b.costs for b in bounds]).max(axis=0) if bounds else None  # per instance, the best bound
    ref_bound = float(bound.mean()) if bound is not None else None
    bound_text = f"bound = per-instance best of the lower-bound rows, mean {ref_bound:.2f}" if bounds else "no bound"
    lines = [
        f"**{name.upper()} {regime[4:]}** ({len(best)} test instances; best-known = per-instance minimum over the "
        f"measured rows, mean {ref_best:.2f}; {bound_text}). Command: `relic-baselines table --env {name}` (both sizes)",
        "",
        "| row | settings | mean ± std | gap to bound | gap to best-known | s/inst | notes |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in [*rows, *paper]:
        sec = f"{r.seconds:.2f}" if r.seconds is not None else "-"
        gap_bound = f"{100 * (r.mean - ref_bound) / ref_bound:+.1f}%" if ref_bound else "-"
        lines.append(f"| {r.name} | {r.settings} | {r.mean:.2f} ± {r.std:.2f} | {gap_bound} | "
                     f"{100 * (r.mean - ref_best) / ref_best:+.2f}% | {sec} | {r.note} |")
    for b in bounds:
        lines.append(f"| {b.name} | {b.settings} | {b.mean:.2f} ± {b.std:.2f} | {100 * (b.mean - ref_bound) / ref_bound:+.1f}% | "
                     f"{100 * (b.mean - ref_best) / ref_best:+.2f}% | - | {b.note} |")
    if load_cache(name) is None:
        lines.append(f"\n(no CP-SAT reference cached; {INSTALL_HINT} {name})")
    return "\n".join(lines)


def tables(names: Sequence[str] = ("fjagv", "mrcps")) -> str:
    out = []
    for name in names:
        for regime in ("test100", "test200"):
            rows, bounds = build_rows(name, regime)
            out.append(format_table(name, regime, rows, bounds, paper_rows(name, regime)))
    return "\n\n".join(out)


if __name__ == "__main__":  # python -m baselines.co.sched_table [fjagv] [mrcps]
    import sys

    print(tables(sys.argv[1:] or ("fjagv", "mrcps")))
