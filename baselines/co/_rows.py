"""What the CO results tables share: a row, rows from a team played in the env, the paper's rows.

``PAPER_GENERALIZATION`` is relic.tex's Table tab:generalization (mean, std over the
paper's runs), copied for side-by-side reports; nothing in it is measured here.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

# relic.tex, Table tab:generalization (lines 971-982 and 1000-1012): mean, std over runs.
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
    "fjagv": {
        "test100": {"EoH": (20707, 723), "ReEvo": (21557, 117), "MCTS-AHD": (20437, 1289), "HiFo": (21551, 77),
                    "MOTIF": (20272, 2252), "RELIC": (18078, 241)},
        "test200": {"EoH": (90134, 3084), "ReEvo": (93435, 159), "MCTS-AHD": (88912, 5089), "HiFo": (92775, 503),
                    "MOTIF": (87476, 8857), "RELIC": (78110, 767)},
    },
    "mrcps": {
        "test100": {"EoH": (933.95, 14.56), "ReEvo": (928.95, 14.74), "MCTS-AHD": (927.40, 1.51),
                    "HiFo": (934.08, 23.03), "MOTIF": (933.36, 13.90), "RELIC": (929.28, 5.46)},
        "test200": {"EoH": (1983.25, 44.28), "ReEvo": (1968.96, 46.76), "MCTS-AHD": (1946.11, 4.17),
                    "HiFo": (1974.40, 54.48), "MOTIF": (1972.68, 51.35), "RELIC": (1969.82, 19.63)},
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


def row(name: str, settings: str, costs, seconds: float | None = None, note: str = "") -> Row:
    costs = np.asarray(costs, dtype=float)
    return Row(name, settings, costs, float(costs.mean()), float(costs.std()), seconds, note)


def team_row(name: str, label: str, settings: str, team, instances) -> Row:
    import relic_envs

    start = time.perf_counter()
    results = relic_envs.rollout(name, team, instances)
    seconds = (time.perf_counter() - start) / len(instances)
    repairs = {r: sum(res.info["repairs"][r] for res in results) for r in "ABC"}
    note = "repairs A/B/C " + "/".join(str(repairs[r]) for r in "ABC")
    return row(label, settings, [res.objective for res in results], seconds, note)


def paper_rows(name: str, regime: str) -> list[Row]:
    return [
        Row(f"paper: {method}", "relic.tex tab:generalization", None, mean, std, note="copied; paper's instances, ± over runs")
        for method, (mean, std) in PAPER_GENERALIZATION[name][regime].items()
    ]
