"""The results table of docs/results/mas.md: every team, the CP-SAT references and each
row's gap to CP-SAT's proven bound (``python -m baselines.mas.table``).

Gap to the bound, per benchmark and test size, on the means over the 20 instances:
``(mean - mean bound) / mean bound`` for the costs (MAS-JD, MAS-FS) and
``(mean bound - mean) / mean bound`` for the MAS-ST value, in percent; blank when the
bound is 0 (a relative gap to 0 is undefined). The bound is CP-SAT's proven bound; for
MAS-FS, per instance, the larger of it and the one-machine mean-busy-time bound
(``baselines.mas.cpsat.fs_lower_bound``). Both are offline (clairvoyant) references, so
a gap to them is an upper bound on the gap to the best online policy.
"""

from __future__ import annotations

import numpy as np

from baselines.mas import cpsat
from baselines.mas.rules import measure

NAMES = ("mas_jd", "mas_st", "mas_fs")
REGIMES = ("test50", "test80")
LABELS = {
    "seeds": "seed programs, paper interface",
    "seeds-alt": "seed programs, alternative interface",
    "fifo": "FIFO",
    "edd": "EDD (earliest deadline)",
    "wspt": "WSPT (per stage in FS)",
    "spt": "SPT (per stage)",
    "atc": "ATC, k = 2",
    "value_density": "value density `v / p_eff`",
}


def _gap(name: str, mean: float, bound: float) -> str:
    if not bound > 0:
        return ""
    gap = (mean - bound) / bound if name != "mas_st" else (bound - mean) / bound
    return f"{100 * gap:.1f}%"


def build() -> str:
    rows = measure(NAMES)
    stats = {(n, t, r): (m, s) for n, t, r, m, s in rows}
    import relic_envs

    bounds, best, solver_bounds, fs_bounds = {}, {}, {}, {}
    for name in NAMES:
        cache = cpsat.load_cache(name)
        for regime in REGIMES:
            bound = None
            if name == "mas_fs":
                lp = np.array([cpsat.fs_lower_bound(i) for i in relic_envs.splits(name).test[regime]])
                fs_bounds[name, regime] = (float(lp.mean()), float(lp.std()))
                bound = lp
            if cache is not None:
                res = cache.results[regime]
                best[name, regime] = (float(res["objective"].mean()), float(res["objective"].std()))
                solver_bounds[name, regime] = (float(res["bound"].mean()), float(res["bound"].std()))
                bound = res["bound"] if bound is None else np.maximum(bound, res["bound"])
            if bound is not None:
                bounds[name, regime] = (float(bound.mean()), float(bound.std()))
    head = "| team | " + " | ".join(f"{n[4:].upper()} {r[4:]} {'↑' if n == 'mas_st' else '↓'} | gap" for n in NAMES for r in REGIMES)
    lines = [head + " |", "|---|" + "---|---|" * (len(NAMES) * len(REGIMES))]
    teams = list(dict.fromkeys(t for _, t, _, _, _ in rows))
    for team in teams:
        cells = []
        for name in NAMES:
            for regime in REGIMES:
                if (name, team, regime) not in stats:
                    cells += ["", ""]
                    continue
                mean, std = stats[name, team, regime]
                bound = bounds.get((name, regime), (np.nan,))[0]
                cells += [f"{mean:.2f} ± {std:.2f}", _gap(name, mean, bound)]
        lines.append(f"| {LABELS.get(team, team)} | " + " | ".join(cells) + " |")
    extra = (
        ("CP-SAT best (offline)", best),
        ("CP-SAT proven bound", solver_bounds),
        ("one-machine mean-busy-time bound (FS)", fs_bounds),
        ("bound used for the gaps", bounds),
    )
    for label, table in extra:
        cells = []
        for name in NAMES:
            for regime in REGIMES:
                if (name, regime) not in table:
                    cells += ["", ""]
                    continue
                mean, std = table[name, regime]
                gap = _gap(name, mean, bounds[name, regime][0]) if label.startswith("CP-SAT best") else ""
                cells += [f"{mean:.2f} ± {std:.2f}", gap]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    status = []
    for name in NAMES:
        cache = cpsat.load_cache(name)
        if cache is not None:
            status.append(cpsat.summary(name, cache))
    return "\n".join(lines) + "\n\n" + "\n".join(status)


if __name__ == "__main__":
    print(build())
