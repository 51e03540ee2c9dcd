"""One results table per DCOP benchmark: every row beside the CP-SAT optimum reference.

``relic-baselines table`` prints it; ``relic-baselines table --plot docs/results`` also saves a
cost-per-sweep plot per benchmark. Rows, all on the canonical 50-instance test split:

- ``random assignment``: the instances' initial assignment ``x0`` (uniform at random);
- ``seeds``: the seed programs as a team in the env;
- each classical algorithm at its default settings and ``:tuned`` (train split only);
- the paper readings ``dsa-b:paper`` and ``lsga-dsa:paper``;
- CP-SAT's best solution and its proven lower bound (cached, ``relic_envs/data``);
- the paper's own Table 2 rows, copied from ``relic.tex`` (not measured here, and on
  the paper's own test instances, which are not ours).

Gap to bound = ``(mean - mean CP-SAT bound) / mean bound`` (how far from optimal a row
is at most); gap to best = the same against CP-SAT's best solution (how far behind the
best assignment known). Where the reference is 0 (SensorDCSP, whose optimum is 0 on
every test instance) the absolute gap ``mean - reference`` is shown instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from baselines.dcop.configs import DEFAULTS, PAPER_READINGS, describe, load_tuned, make_solver
from baselines.dcop.cpsat import INSTALL_HINT, load_cache
from baselines.dcop.sweep import dcop_benchmark, run_sweeps
from relic_envs.core.splits import splits
from relic_envs.dcop._sweep import SWEEPS
from relic_envs.paper_numbers import PAPER_TABLE2

ALGORITHMS = ("dsa-a", "dsa-b", "dsa-c", "mgm", "mgm2", "maxsum", "lsga-dsa")
PAIRWISE_ONLY = {"maxsum"}


@dataclasses.dataclass
class Row:
    name: str
    settings: str
    costs: np.ndarray | None  # (50,) per test instance, None for copied paper rows
    mean: float
    std: float
    trace: np.ndarray | None = None  # (51,) mean cost per sweep
    source: str = "measured"


def _row(name: str, settings: str, costs, trace=None) -> Row:
    costs = np.asarray(costs, dtype=float)
    return Row(name, settings, costs, float(costs.mean()), float(costs.std()), trace)


def team_traces(benchmark: str, team, instances) -> np.ndarray:
    """``(instances, 51)`` cost before and after every sweep of a team played in the env."""
    bench = dcop_benchmark(benchmark)
    out = np.empty((len(instances), SWEEPS + 1))
    for k, inst in enumerate(instances):
        if hasattr(team, "reset"):
            team.reset(inst)
        episode = bench.new_episode(inst)
        out[k, 0] = episode.objective()
        while not episode.done:
            invalid = episode.step({r: team[r](episode.observe(r)) for r in bench.roles})
            if invalid is not None:
                raise RuntimeError(f"team invalid on {benchmark} instance {k}: {invalid}")
            out[k, episode.step_count] = episode.objective()
    return out


def configurations(benchmark: str) -> list[str]:
    """The algorithm rows of a benchmark's table, in order."""
    tuned = load_tuned().get(benchmark, {})
    specs = []
    for algorithm in ALGORITHMS:
        if algorithm in PAIRWISE_ONLY and benchmark != "dgc":
            continue
        specs.append(algorithm)
        if algorithm in tuned and tuned[algorithm]["chosen"] != tuned[algorithm]["default"]:
            specs.append(f"{algorithm}:tuned")
    for algorithm, readings in PAPER_READINGS.items():
        if benchmark in readings:
            specs.append(f"{algorithm}:paper")
    return specs


def build_rows(benchmark: str, *, progress: bool = False, specs: Sequence[str] | None = None) -> list[Row]:
    """Measure every row of a benchmark's table (module doc)."""
    from relic_envs.seeds import seed_team

    instances = splits(benchmark).test_instances()
    problem = dcop_benchmark(benchmark).problem
    initial = [problem.cost(inst, inst.x0) for inst in instances]
    rows = [_row("random assignment", "x0", initial, np.full(SWEEPS + 1, np.mean(initial)))]
    seeds = team_traces(benchmark, seed_team(benchmark), instances)
    rows.append(_row("seeds", "seed programs", seeds[:, -1], seeds.mean(axis=0)))
    from relic_envs.case_studies import case_study_names, case_study_team

    if benchmark in case_study_names():  # the paper's printed learned programs, run on our simulator
        case = team_traces(benchmark, case_study_team(benchmark), instances)
        rows.append(_row("case-study", "the paper's printed RELIC programs", case[:, -1], case.mean(axis=0)))
    specs_run = list(specs) if specs is not None else configurations(benchmark)
    for spec in specs_run:
        traces = run_sweeps(benchmark, make_solver(spec, benchmark), instances, progress=progress)
        costs = np.array([t.costs for t in traces])
        settings = describe(spec, benchmark)
        if ":" not in spec and spec in load_tuned().get(benchmark, {}) and f"{spec}:tuned" not in specs_run:
            settings += " (= train-tuned)"
        rows.append(_row(spec, settings, costs[:, -1], costs.mean(axis=0)))
    return rows


def best_label(counts: dict[str, int]) -> str:
    """The CP-SAT best row's name: a proven optimum where every instance is optimal, else a best
    found with how many instances are proven (the rest heuristic, not proven)."""
    total = counts["optimal"] + counts["feasible"]
    if counts["feasible"] == 0:
        return f"CP-SAT best (proven optimum, {total} of {total})"
    return f"CP-SAT best found (proven optimum {counts['optimal']}, heuristic {counts['feasible']})"


def optimum_rows(benchmark: str) -> list[Row]:
    cache = load_cache(benchmark)
    if cache is None:
        return []
    counts = {s: int((cache.status == s).sum()) for s in ("optimal", "feasible")}
    limit = f"{cache.meta['time_limit_s']:g}s/inst, hint {cache.meta.get('hint') or '-'}"
    best = _row(best_label(counts), limit, cache.objective)
    bound = _row("CP-SAT bound (proven)", f"{counts['optimal']} optimal, {counts['feasible']} feasible", cache.bound)
    best.source = bound.source = "cached (relic_envs/data)"
    return [best, bound]


def paper_rows(benchmark: str) -> list[Row]:
    return [
        Row(f"paper: {name}", "paper's Table 2", None, mean, std, source="copied")
        for name, (mean, std) in PAPER_TABLE2.get(benchmark, {}).items()
    ]


def gap(mean: float, bound: float) -> str:
    if bound > 1e-9:
        return f"{100 * (mean - bound) / bound:+.1f}%"
    return f"+{mean - bound:.2f} (abs)"


def format_table(benchmark: str, rows: Sequence[Row], optimum: Sequence[Row], paper: Sequence[Row]) -> str:
    bound = next((r for r in optimum if r.name.startswith("CP-SAT bound")), None)
    best = next((r for r in optimum if r.name.startswith("CP-SAT best")), None)
    head = f"{benchmark} (test split, 50 instances, raw cost, mean ± std over instances)"
    lines = [head, f"  {'row':<33} {'settings':<34} {'mean ± std':>22}  {'gap to bound':>14}  {'gap to best':>14}"]
    for r in [*rows, *optimum, *paper]:
        g = gap(r.mean, bound.mean) if bound is not None else "-"
        b = gap(r.mean, best.mean) if best is not None else "-"
        lines.append(f"  {r.name:<33} {r.settings[:34]:<34} {f'{r.mean:.2f} ± {r.std:.2f}':>22}  {g:>14}  {b:>14}")
    if bound is None:
        lines.append(f"  (no CP-SAT optimum reference cached; to get one: {INSTALL_HINT})")
    return "\n".join(lines)


def plot(benchmark: str, rows: Sequence[Row], optimum: Sequence[Row], path: Path) -> Path:
    """Mean cost per sweep of every measured row, with the CP-SAT bound and best as lines."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover
        from relic_envs.errors import MissingExtra

        raise MissingExtra("matplotlib", "docs") from exc
    fig, ax = plt.subplots(figsize=(9, 5.5))
    ax.set_prop_cycle(color=plt.cm.tab20(np.linspace(0, 1, 20)))
    for r in rows:
        if r.trace is not None and r.name != "random assignment":
            ax.plot(np.arange(SWEEPS + 1), r.trace, label=r.name, linestyle="--" if ":" in r.name else "-")
    for r, style in zip(optimum, ("k:", "k-")):
        ax.axhline(r.mean, color="k", linestyle=style[1:], linewidth=1.2, label=f"{r.name} ({r.mean:.1f})")
    if min(r.mean for r in [*rows, *optimum]) <= 0:
        ax.set_yscale("symlog", linthresh=1.0)
        ax.set_ylim(bottom=0)
    else:
        ax.set_yscale("log")
    ax.set_xlabel("sweep")
    ax.set_ylabel("mean cost over the 50 test instances")
    ax.set_title(f"{benchmark}: cost per sweep (test split)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def default_settings_note() -> str:
    return "; ".join(f"{a}: {src}" for a, (_, _, src) in DEFAULTS.items())
