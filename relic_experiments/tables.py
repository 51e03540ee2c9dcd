"""The paper's tables from a grid's finished cells: mean ± std over run seeds, gap to the best per column.

Appendix D ("Run-level aggregation", "Relative gap"): a run's result is its final team's
mean raw objective over a test set; a table cell is the mean ± standard deviation over
the independent runs (numpy ``std``, ``ddof=0``, over the run means); the gap of a row is
``100 (m - m*) / (|m*| + eps)`` for a minimised column and ``100 (m* - m) / (|m*| + eps)``
for a maximised one, ``m*`` the best mean of the column; the best is in bold. Columns are
``<env>/<test size>`` (the interface is added when a grid has more than one).

Reference rows (:mod:`relic_experiments.references`: classical, solver, the paper's) are
printed after the grid's rows; they never count as the column's best, and their gap is
to the best of the grid's rows (negative when they beat it).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

import relic_envs
from relic_experiments.cell import CellResult
from relic_experiments.references import Reference

EPS = 1e-12


@dataclasses.dataclass(frozen=True)
class Entry:
    mean: float
    std: float
    runs: int
    gap: float = float("nan")
    best: bool = False
    reference: bool = False


def aggregate(results: list[CellResult], references: Sequence[Reference] = ()) -> tuple[
        list[str], list[str], dict[tuple[str, str], Entry]]:
    """``(rows, columns, entries)``: rows are methods (then references), columns env/size, entries keyed (row, column)."""
    interfaces = {r.cell.interface for r in results}

    def column_of(env: str, size: str, interface: str) -> str:
        return f"{env}/{size}" + (f"/{interface}" if len(interfaces) > 1 else "")

    runs: dict[tuple[str, str], list[float]] = defaultdict(list)
    minimize: dict[str, bool] = {}
    for r in results:
        for size, value in r.objective.items():
            column = column_of(r.cell.env, size, r.cell.interface)
            runs[(r.cell.method, column)].append(value)
            minimize[column] = relic_envs.get_benchmark(r.cell.env).minimize
    rows = list(dict.fromkeys(r.cell.method for r in results))
    columns = list(dict.fromkeys(c for _, c in runs))
    entries = {}
    best: dict[str, float] = {}
    for column in columns:
        means = {row: float(np.mean(runs[(row, column)])) for row in rows if (row, column) in runs}
        best[column] = (min if minimize[column] else max)(means.values())
        for row, mean in means.items():
            entries[(row, column)] = Entry(mean, float(np.std(runs[(row, column)])), len(runs[(row, column)]),
                                           _gap(mean, best[column], minimize[column]), mean == best[column])
    for ref in references:
        shown = {column_of(*key): value for key, value in ref.values.items() if column_of(*key) in best}
        if not shown:
            continue
        rows.append(ref.label)
        for column, (mean, std, n) in shown.items():
            entries[(ref.label, column)] = Entry(mean, std, n, _gap(mean, best[column], minimize[column]), False, True)
    return rows, columns, entries


def _gap(mean: float, best: float, minimize: bool) -> float:
    return (mean - best if minimize else best - mean) / (abs(best) + EPS) * 100


def _cells(row: str, columns: list[str], entries: dict, spread: str, gap: str, best: str) -> list[str]:
    """A row's (result, gap) cells: ``spread`` formats mean and std, ``gap`` the gap, ``best`` wraps the column's best."""
    cells = []
    for c in columns:
        e = entries.get((row, c))
        if e is None:
            cells += ["-", "-"]
            continue
        text = spread.format(f"{e.mean:.6g}", f"{e.std:.3g}") if e.runs > 1 or not e.reference else f"{e.mean:.6g}"
        pair = [text, gap.format(e.gap)]
        cells += [best.format(x) for x in pair] if e.best else pair
    return cells


def markdown(results: list[CellResult], references: Sequence[Reference] = ()) -> str:
    rows, columns, entries = aggregate(results, references)
    arrows = {c: "↓" if relic_envs.get_benchmark(c.split("/")[0]).minimize else "↑" for c in columns}
    lines = ["| method | " + " | ".join(f"{c} {arrows[c]} | gap" for c in columns) + " |",
             "|---|" + "---|---|" * len(columns)]
    for row in rows:
        cells = _cells(row, columns, entries, "{} ± {}", "{:.2f}%", "**{}**")
        label = f"*{row}*" if any(entries.get((row, c), Entry(0, 0, 0)).reference for c in columns) else row
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def csv(results: list[CellResult], references: Sequence[Reference] = ()) -> str:
    rows, columns, entries = aggregate(results, references)
    lines = ["method,column,mean,std,runs,gap_percent,best,reference"]
    for row in rows:
        for c in columns:
            if (e := entries.get((row, c))) is not None:
                label = f'"{row}"' if "," in row else row
                lines.append(f"{label},{c},{e.mean!r},{e.std!r},{e.runs},{e.gap!r},{int(e.best)},{int(e.reference)}")
    return "\n".join(lines) + "\n"


def latex(results: list[CellResult], references: Sequence[Reference] = ()) -> str:
    rows, columns, entries = aggregate(results, references)
    heads = [c.replace("_", r"\_") for c in columns]
    out = [r"\begin{tabular}{|l|" + "ll|" * len(columns) + "}", r"\hline",
           "Method & " + " & ".join(rf"\multicolumn{{2}}{{l|}}{{{h}}}" for h in heads) + r" \\", r"\hline"]
    for row in rows:
        cells = _cells(row, columns, entries, r"{} $\pm$ {}", r"{:.2f}\%", r"\textbf{{{}}}")
        out.append(row.replace("_", r"\_") + " & " + " & ".join(cells) + r" \\")
    out += [r"\hline", r"\end{tabular}"]
    return "\n".join(out) + "\n"


FORMATS = {"md": markdown, "csv": csv, "tex": latex}


def bar_chart(results: list[CellResult], path, references: Sequence[Reference] = ()) -> None:
    """One panel per column: each method's mean with its std over runs as an error bar (needs matplotlib);
    reference rows in grey."""
    from matplotlib.figure import Figure

    rows, columns, entries = aggregate(results, references)
    fig = Figure(figsize=(max(4.0, 3.2 * len(columns)), 3.4))
    axes = fig.subplots(1, len(columns), squeeze=False)[0]
    for ax, column in zip(axes, columns):
        present = [r for r in rows if (r, column) in entries]
        means = [entries[(r, column)].mean for r in present]
        stds = [entries[(r, column)].std for r in present]
        colors = ["#d62728" if entries[(r, column)].best else "#999999" if entries[(r, column)].reference
                  else "#1f77b4" for r in present]
        ax.bar(range(len(present)), means, yerr=stds, color=colors, capsize=3)
        ax.set_xticks(range(len(present)), present, rotation=45, ha="right", fontsize=7)
        arrow = "lower is better" if relic_envs.get_benchmark(column.split("/")[0]).minimize else "higher is better"
        ax.set_title(f"{column} ({arrow})", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
