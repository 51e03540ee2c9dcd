"""The classical rows and references of docs/results/mapp.md (``python -m baselines.mapp.table``).

One table per benchmark, test50 and test80 (20 instances each), mean ± std over the
instances of the episode objective (higher is better), every team played through the
benchmark's own episode with ``relic_envs.rollout``:

- MAPP-PC: seed teams, greedy insertion, ILS, OR-Tools routing (cached); CP-SAT (ILS hint,
  time-limited) best found and the proven bound (the smaller of CP-SAT's bound and the sum
  of all prizes);
  **gap = (mean bound - mean) / mean bound**, an upper bound on the gap to the optimum.
- MAPP-AR: seed teams, the paper's case-study programs, greedy insertion, ILS; the best
  plan found (``baselines.mapp.reference``) and the only bound we have, ``U_0 = N - 1``;
  **gap = (mean best found - mean) / mean best found**, a gap to a plan, not to the optimum.
- MAPP-DS: seed teams, the online insertion policy; the offline full-information
  reference; **gap = (mean reference - mean) / mean reference**, to a clairvoyant plan.

The references come from caches (``python -m baselines.mapp.cpsat --write mapp_pc``,
``python -m baselines.mapp.reference --write mapp_ar mapp_ds``); the team rows are
recomputed (about two minutes on two cores).
"""

from __future__ import annotations

import numpy as np

NAMES = ("mapp_pc", "mapp_ar", "mapp_ds")
REGIMES = ("test50", "test80")
TITLES = {"mapp_pc": "MAPP-PC", "mapp_ar": "MAPP-AR", "mapp_ds": "MAPP-DS"}
LABELS = {
    "seeds": "seed team, paper interface",
    "seeds-alt": "seed team, alternative interface",
    "case-study": "paper's case-study programs (RELIC output, Appendix)",
    "greedy": "greedy insertion (prize / added distance)",
    "greedy-ar": "greedy insertion (uncertainty removed / added distance)",
    "ils": "ILS (Vansteenwegen et al. 2009; insertion + 2-opt + shake)",
    "online": "online insertion, rolling horizon (released requests only)",
}


METHODS = {"mapp_pc": ("greedy", "ils"), "mapp_ar": ("greedy", "ils"), "mapp_ds": ("online",)}


def team(name: str, method: str):
    """A classical row as a team for ``relic_envs.rollout`` (``relic-baselines eval --env mapp_pc --team ils``)."""
    from baselines.mapp.dynamic import OnlineTeam
    from baselines.mapp.plans import PlanTeam

    if method not in METHODS.get(name, ()):
        raise ValueError(f"{name} has no classical row {method!r}; rows: {METHODS.get(name, ())}")
    return OnlineTeam() if method == "online" else PlanTeam.of(name, method)


def teams(name: str) -> dict:
    """``label -> (team, interface)`` of the rows played as teams."""
    from baselines.mapp.dynamic import OnlineTeam
    from baselines.mapp.plans import PlanTeam
    from relic_envs.seeds import seed_team

    out = {"seeds": (seed_team(name), "paper"), "seeds-alt": (seed_team(name, "alt"), "alt")}
    if name == "mapp_ar":
        from relic_envs.case_studies import case_study_team

        out["case-study"] = (case_study_team(name), "paper")
    if name in ("mapp_pc", "mapp_ar"):
        out["greedy-ar" if name == "mapp_ar" else "greedy"] = (PlanTeam.of(name, "greedy"), "paper")
        out["ils"] = (PlanTeam.of(name, "ils"), "paper")
    else:
        out["online"] = (OnlineTeam(), "paper")
    return out


def measure(name: str) -> dict[tuple[str, str], np.ndarray]:
    """Per-instance episode objectives of every team row: ``(label, regime) -> (20,)``."""
    import relic_envs
    from relic_envs.core.rollout import rollout

    out = {}
    for label, (team, interface) in teams(name).items():
        for regime in REGIMES:
            res = rollout(name, team, relic_envs.splits(name).test[regime], interface=interface)
            if not all(r.valid for r in res):
                raise RuntimeError(f"{name} {label}: invalid rollouts")
            out[label, regime] = np.array([r.objective for r in res])
    return out


def cpsat_kinds(results: dict) -> dict[str, dict[str, int]]:
    """Per test size, what the cached MAPP-PC CP-SAT row is on each instance: ``proven optimum``
    (CP-SAT proved it, or it reaches the bound, e.g. every prize), ``hint kept`` (not proven, and
    its objective is the ILS hint's: CP-SAT found nothing better, or nothing at all in the
    limit), ``heuristic`` (better than the hint, not proven); ``no solution``: instances where
    CP-SAT found no solution (status unknown), a subset of the others."""
    out = {}
    for r in REGIMES:
        res = results[r]
        proven = (res["status"] == "optimal") | (res["objective"] >= res["bound"] - 1e-6)
        kept = ~proven & np.isclose(res["objective"], res["hint_objective"], rtol=1e-9, atol=1e-9)
        out[r] = {"proven optimum": int(proven.sum()), "heuristic": int((~proven & ~kept).sum()),
                  "hint kept": int(kept.sum()), "no solution": int((res["status"] == "unknown").sum())}
    return out


def cpsat_label(results: dict, limit: str) -> str:
    """The MAPP-PC CP-SAT row's label: per test size, how many instances are each kind (``cpsat_kinds``)."""
    parts = []
    for r, counts in cpsat_kinds(results).items():
        n = results[r]["objective"].size
        kinds = ", ".join(f"{k} {counts[k]}" for k in ("proven optimum", "heuristic", "hint kept") if counts[k])
        if counts["no solution"] == n:
            kinds = f"no CP-SAT solution on any, the row is the ILS hint: {kinds}"
        elif counts["no solution"]:
            kinds += f"; {counts['no solution']} without any CP-SAT solution"
        parts.append(f"N = {r[4:]}: {kinds}")
    return f"CP-SAT best found (ILS hint, {limit}; of 20 instances, " + "; ".join(parts) + ")"


def references(name: str) -> tuple[dict, dict, dict, str]:
    """``(rows, gap_to, notes)``: reference rows ``label -> regime -> (20,)``, the row the gaps
    are taken to, and a line on how the references were made."""
    import relic_envs

    rows: dict[str, dict[str, np.ndarray]] = {}
    if name == "mapp_pc":
        from baselines.mapp import cpsat

        loaded = cpsat.load_cache(name)
        if loaded is None:
            return rows, None, cpsat.summary(name)
        res, meta = loaded
        lim = f"{meta['time_limit_s']:g} s/instance, {meta['workers']} workers"
        from baselines.mapp import ortools_routing

        ort = ortools_routing.load_cache()
        if ort is not None:
            rows[f"OR-Tools routing, GLS ({ort[1]['time_limit_s']:g} s/instance; heuristic, best found, not proven)"] = {
                r: ort[0][r]["objective"] for r in REGIMES}
        rows[cpsat_label(res, lim)] = {r: res[r]["objective"] for r in REGIMES}
        bound = "bound: min(CP-SAT's proven bound, sum of all prizes)"
        rows[bound] = {r: res[r]["bound"] for r in REGIMES}  # cpsat.solve stores the smaller of the two
        return rows, bound, cpsat.summary(name)
    from baselines.mapp import reference

    loaded = reference.load_cache(name)
    if loaded is None:
        return rows, None, f"{name}: no cached reference; python -m baselines.mapp.reference --write {name}"
    res, meta = loaded
    label = reference.LABEL[name] + "; heuristic, not proven"
    rows[label] = {r: res[r]["objective"] for r in REGIMES}
    if name == "mapp_ar":
        rows["U_0 = N - 1 (the only bound we have)"] = {r: np.full(20, int(r[4:]) - 1.0) for r in REGIMES}
    else:
        from relic_envs.mapp.ds.generator import stream

        rows["value of every request (a bound, not used)"] = {
            r: np.array([float(stream(i).value.sum()) for i in relic_envs.splits(name).test[r]]) for r in REGIMES}
    wall = ", ".join(f"{r} {res[r]['wall_time'].mean():.1f} s/instance" for r in REGIMES)
    return rows, label, f"{name}: {label}, settings {meta['settings']}; {wall}"


def _cell(values: np.ndarray) -> str:
    return f"{values.mean():.2f} ± {values.std():.2f}"


def _gap(values: np.ndarray, ref: np.ndarray | None) -> str:
    if ref is None:
        return ""
    return f"{100 * (ref.mean() - values.mean()) / ref.mean():.1f}%"


def build(name: str, measured: dict | None = None) -> str:
    measured = measure(name) if measured is None else measured
    refs, gap_to, note = references(name)
    ref = refs.get(gap_to) if gap_to else None
    head = "| row | " + " | ".join(f"N = {r[4:]} | gap" for r in REGIMES) + " |"
    lines = [f"{TITLES[name]}", "", head, "|---|" + "---|---|" * len(REGIMES)]
    labels = list(dict.fromkeys(label for label, _ in measured))
    for label in labels:
        cells = []
        for r in REGIMES:
            cells += [_cell(measured[label, r]), _gap(measured[label, r], None if ref is None else ref[r])]
        lines.append(f"| {LABELS.get(label, label)} | " + " | ".join(cells) + " |")
    for label, by_regime in refs.items():
        cells = []
        for r in REGIMES:
            is_bound = any(w in label for w in ("bound", "sum of all", "value of every", "U_0"))
            gap = "" if ref is None or is_bound else _gap(by_regime[r], ref[r])
            cells += [_cell(by_regime[r]), gap]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n" + note


if __name__ == "__main__":
    import sys

    chosen = [a for a in sys.argv[1:] if a in NAMES] or list(NAMES)
    print("\n\n".join(build(n) for n in chosen))
