"""The results table of docs/results/mas.md: every team, the CP-SAT references and each
row's gap to the best proven lower bound (``python -m baselines.mas.table [--ls] [--choices]``).

Gap to the bound, per benchmark and test size, on the means over the 20 instances:
``(mean - mean bound) / mean bound`` for the costs (MAS-JD, MAS-FS) and
``(mean bound - mean) / mean bound`` for the MAS-ST value, in percent; blank when the
bound is 0 (a relative gap to 0 is undefined). The bound is CP-SAT's proven bound; for
MAS-FS, per instance, the larger of it and the one-machine mean-busy-time bound
(``baselines.mas.cpsat.fs_lower_bound``); for MAS-JD the larger of it and the
fast-single-machine bound (``baselines.mas.cpsat.jd_lower_bound``). Both are proven
bounds on the offline (clairvoyant) optimum, so a gap to them is an upper bound on the
gap to the best online policy.

Every reference row says what it is: a **bound** (proven), a **proven optimum**, a
**heuristic** (best found, not proven: a team can beat it and a gap to it bounds
nothing) or a **hint kept** (a solver returned the schedule of the team it was hinted
with, or one no better). The "CP-SAT best found" cells count their instances of each kind
(``cpsat_kinds``); the offline iterated greedy (``baselines.mas.offline_ls``, MAS-JD and
MAS-FS, per instance the best of it and every earlier reference) is the heuristic
reference a team is compared with for "how far from the best schedule known"; the row of
the issue-38 MAS-JD list-schedule local search keeps the old figures beside it.
"""

from __future__ import annotations

import numpy as np

from baselines.mas import cpsat
from baselines.mas.rules import RULES, measure
from relic_envs.core.benchmark import ROLES

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
    "atc:tuned": "ATC, k = 0.25 (tuned on training)",
    "mslack": "minimum slack",
    "fifo+skip": "FIFO + skip hopeless",
    "edd+skip": "EDD + skip hopeless",
    "value_density+skip": "value density + skip hopeless",
    "ls": "local search (best rule start, 100 decodes)",
    "value_density": "value density `v / p_eff`",
}


CPSAT_LABEL = "CP-SAT best found (offline; per cell, of the 20 instances: proven optimum / heuristic, not proven / hint kept)"
OLD_LS_LABEL = "offline list-schedule local search of issue 38 (offline; heuristic, not proven; the old MAS-JD reference)"
REFERENCE_LABEL = ("offline iterated greedy, per instance the best of it and every earlier reference (offline; "
                   "heuristic, not proven; the reference)")


def cpsat_kinds() -> dict[tuple[str, str], str]:
    """Per benchmark and test size, what the cached CP-SAT "best found" is on each instance:
    ``proven optimum`` (status optimal), ``hint kept`` (not optimal, and its objective is
    the hint team's own objective on that instance: CP-SAT returned the schedule it was
    given, or one no better) or ``heuristic`` (better than the hint, not proven)."""
    import relic_envs

    out = {}
    for name in NAMES:
        cache = cpsat.load_cache(name)
        if cache is None:
            continue
        hint = cache.meta.get("hint")
        for regime in REGIMES:
            res = cache.results[regime]
            instances = relic_envs.splits(name).test[regime]
            optimal = res["status"] == "optimal"
            if hint:
                hinted = np.array([cpsat._hint_from_team(name, inst, hint).objective() for inst in instances])
                kept = ~optimal & np.isclose(res["objective"], hinted, rtol=1e-9, atol=1e-9)
            else:
                kept = np.zeros_like(optimal)
            counts = (("proven optimum", int(optimal.sum())), ("heuristic", int((~optimal & ~kept).sum())),
                      ("hint kept", int(kept.sum())))
            out[name, regime] = ", ".join(f"{k} {c}" for k, c in counts if c)
    return out


def _gap(name: str, mean: float, bound: float) -> str:
    if not bound > 0:
        return ""
    gap = (mean - bound) / bound if name != "mas_st" else (bound - mean) / bound
    return f"{100 * gap:.1f}%"


def build(with_ls: bool = False) -> str:
    rows = measure(NAMES)
    if with_ls:
        from baselines.mas.local_search import measure as ls_measure

        rows += ls_measure(NAMES)
    stats = {(n, t, r): (m, s) for n, t, r, m, s in rows}
    import relic_envs

    bounds, best, solver_bounds, fs_bounds = {}, {}, {}, {}
    for name in NAMES:
        cache = cpsat.load_cache(name)
        for regime in REGIMES:
            bound = None
            if name in ("mas_fs", "mas_jd"):
                relax = cpsat.fs_lower_bound if name == "mas_fs" else cpsat.jd_lower_bound
                lp = np.array([relax(i) for i in relic_envs.splits(name).test[regime]])
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
    from baselines.mas import offline_ls

    ols, old_ls = {}, {}
    for name in offline_ls.NAMES:
        loaded = offline_ls.load_cache(name)
        if loaded is None:
            continue
        for regime, res in loaded[0].items():
            ols[name, regime] = (float(res["objective"].mean()), float(res["objective"].std()))
            if name == "mas_jd" and "old_objective" in res:
                old_ls[name, regime] = (float(res["old_objective"].mean()), float(res["old_objective"].std()))
    kinds = cpsat_kinds()
    extra = (
        (CPSAT_LABEL, best),
        (OLD_LS_LABEL, old_ls),
        (REFERENCE_LABEL, ols),
        ("bound: CP-SAT's proven bound", solver_bounds),
        ("bound: relaxation (JD: fast single machine, FS: one-machine mean busy time)", fs_bounds),
        ("bound used for the gaps (per instance the larger proven bound)", bounds),
    )
    for label, table in extra:
        cells = []
        for name in NAMES:
            for regime in REGIMES:
                if (name, regime) not in table:
                    cells += ["", ""]
                    continue
                mean, std = table[name, regime]
                gap = "" if label.startswith("bound") else _gap(name, mean, bounds[name, regime][0])
                note = f" ({kinds[name, regime]})" if label == CPSAT_LABEL and (name, regime) in kinds else ""
                cells += [f"{mean:.2f} ± {std:.2f}{note}", gap]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    status = []
    for name in NAMES:
        cache = cpsat.load_cache(name)
        if cache is not None:
            status.append(cpsat.summary(name, cache))
    for name in offline_ls.NAMES:
        if offline_ls.load_cache(name) is not None:
            status.append(offline_ls.summary(name))
    return "\n".join(lines) + "\n\n" + "\n".join(status)


def best_rule(name: str, rows) -> str:
    """The rule with the best mean over both test sizes (``rows`` from ``measure``)."""
    sign = -1.0 if name == "mas_st" else 1.0
    means: dict[str, list[float]] = {}
    for n, team, _regime, mean, _std in rows:
        if n == name and team in RULES:
            means.setdefault(team, []).append(mean)
    return min(means, key=lambda t: sign * float(np.mean(means[t])))


def choice_shares(name: str, team: str) -> dict[str, dict[str, float]]:
    """Per test size and role, the share of the role's acting calls whose pool held two or
    more jobs (``DispatchEpisode.choices / decisions``, summed over the 20 instances)."""
    import relic_envs

    out = {}
    for regime, instances in relic_envs.splits(name).test.items():
        decisions = dict.fromkeys(ROLES, 0)
        choices = dict.fromkeys(ROLES, 0)
        for inst in instances:
            ep = cpsat._hint_from_team(name, inst, team)  # the finished episode of the team
            for r in ROLES:
                decisions[r] += ep.decisions[r]
                choices[r] += ep.choices[r]
        out[regime] = {r: choices[r] / max(decisions[r], 1) for r in ROLES} | {f"n{r}": decisions[r] for r in ROLES}
    return out


def choice_table() -> str:
    rows = measure(NAMES)
    lines = ["| benchmark | team | size | A | B | C |", "|---|---|---|---|---|---|"]
    for name in NAMES:
        for team in ("seeds", best_rule(name, rows)):
            for regime, share in choice_shares(name, team).items():
                cells = [f"{100 * share[r]:.0f}% of {share['n' + r]}" for r in ROLES]
                lines.append(f"| {name} | {LABELS.get(team, team)} | {regime} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    print(choice_table() if "--choices" in sys.argv else build(with_ls="--ls" in sys.argv))
