"""What the CO results tables share: a row, rows from a team played in the env, the paper's rows.

``PAPER_GENERALIZATION`` is relic.tex's Table tab:generalization (mean, std over the
paper's runs), copied for side-by-side reports; nothing in it is measured here.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from relic_envs.core.rollout import repair_counts
from relic_envs.paper_numbers import DISPLAY, PAPER

# relic.tex, Table tab:generalization (mean, std over runs), from the one module of the paper's figures.
PAPER_GENERALIZATION: dict[str, dict[str, dict[str, tuple[float, float]]]] = {
    env: {size: {DISPLAY[m]: v for m, v in PAPER["paper"][f"{env}/{size}"].items()} for size in ("test100", "test200")}
    for env in ("hmtsp", "fstsp", "fjagv", "mrcps")
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


def row(name: str, settings: str, costs, seconds: float | None = None, note: str = "") -> Row:
    costs = np.asarray(costs, dtype=float)
    return Row(name, settings, costs, float(costs.mean()), float(costs.std()), seconds, note)


def team_row(name: str, label: str, settings: str, team, instances) -> Row:
    import relic_envs

    start = time.perf_counter()
    results = relic_envs.rollout(name, team, instances)
    seconds = (time.perf_counter() - start) / len(instances)
    counts = repair_counts(results)
    note = "repaired A/B/C " + "/".join(f"{rep} of {n}" for rep, n in (counts[r] for r in "ABC"))
    return row(label, settings, [res.objective for res in results], seconds, note)


def paper_rows(name: str, regime: str) -> list[Row]:
    return [
        Row(f"paper: {method}", "paper: generalization table", None, mean, std, note="copied; paper's instances, ± over runs")
        for method, (mean, std) in PAPER_GENERALIZATION[name][regime].items()
    ]
