"""Situations for Reflect: which instance features separate where a role's skill matters from where it does not.

Appendix C.2 has the orchestrator "summarize which situations the role's skill
dominates, is redundant, or harms". Counts per class (``reference.summarize``) say how
often; this module says *where*: each benchmark names a few features of an instance that
a domain expert would look at first (:data:`FEATURES`: sizes, budgets, tightness,
density), computed from the instance alone, and a one-feature threshold rule (a decision
stump) is fitted to the batch's classes. The rule is reported only when it beats the
majority guess by :data:`MIN_MARGIN` instances, is right on at least :data:`MIN_ACCURACY`
of them and leaves :data:`MIN_SIDE` on each side: a stump searched over every feature and
threshold fits small batches by chance, and the text must not invent a pattern.

Nothing here reads teammate code or raw score vectors: only instance features and the
per-instance classes the credit map already has, which is what the prompt may carry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

from relic_envs.core.instance import Instance

MIN_ACCURACY = 0.75  # a rule is reported when right on 75% of the instances ...
MIN_MARGIN = 2  # ... and on at least 2 more than always guessing the larger class
MIN_SIDE = 2  # ... with at least 2 instances on each side of its threshold


def _depot_distance(coords: np.ndarray) -> float:
    return float(np.linalg.norm(coords[1:] - coords[0], axis=1).mean())


def _spread(points: np.ndarray) -> float:
    return float(np.linalg.norm(points - points.mean(axis=0), axis=1).mean())


#: benchmark -> instance -> {feature text: value}; the feature text is what the prompt says.
FEATURES: dict[str, Callable[[Instance], dict[str, float]]] = {
    "mapp_pc": lambda i: {"nodes": len(i.coords), "travel budget": i.budget, "total prize": float(i.prizes.sum()),
                          "mean distance from the depot": _depot_distance(i.coords)},
    "mapp_ar": lambda i: {"nodes": len(i.coords), "travel budget": i.budget, "arrival spread sigma": i.sigma,
                          "mean distance from the depot": _depot_distance(i.coords)},
    "mapp_ds": lambda i: {"nodes": len(i.coords), "travel budget": i.budget,
                          "mean request rate": float(i.rates.mean()), "mean value rate": float(i.value_rates.mean()),
                          "mean distance from the depot": _depot_distance(i.coords)},
    "mas_jd": lambda i: {"jobs": len(i.release), "mean processing time": float(i.proc.mean()),
                         "mean due-date slack": float((i.due - i.release - i.proc).mean()),
                         "release span": float(np.ptp(i.release))},
    "mas_st": lambda i: {"tasks": len(i.release), "mean duration": float(i.duration.mean()),
                         "mean deadline slack": float((i.deadline - i.release - i.duration).mean()),
                         "mean task value": float(i.value.mean()), "release span": float(np.ptp(i.release))},
    "mas_fs": lambda i: {"jobs": len(i.release), "mean total processing time": float(i.proc.sum(axis=1).mean()),
                         "release span": float(np.ptp(i.release)), "mean job weight": float(i.weight.mean())},
    "hmtsp": lambda i: {"customers": len(i.customers), "tightest budget": float(i.budget.min()),
                        "customer spread": _spread(i.customers)},
    "fstsp": lambda i: {"customers": len(i.customers), "drone-eligible share": float(i.eligible.mean()),
                        "drone endurance": i.endurance, "drone speed": i.drone_speed,
                        "customer spread": _spread(i.customers)},
    "fjagv": lambda i: {"jobs": len(i.due), "AGVs": i.n_agvs, "mean due date": float(i.due.mean()),
                        "mean processing time": float(i.proc[i.proc > 0].mean())},
    "mrcps": lambda i: {"tasks": len(i.duration), "precedence arcs per task": float(i.pred.sum() / len(i.duration)),
                        "mean duration": float(i.duration.mean()), "mean project due date": float(i.due.mean())},
    "dgc": lambda i: {"variables": len(i.x0), "mean degree": 2 * len(i.edges) / len(i.x0),
                      "mean edge weight": float(i.weights.mean())},
    "dimes": lambda i: {"meetings": len(i.x0), "mean travel time": float(i.travel.mean()),
                        "mean preference": float(i.pref.mean())},
    "sensor_dcsp": lambda i: {"sensors": len(i.x0), "targets": len(i.target_value),
                              "incompatibility density": float(i.incompatible.mean()),
                              "mean target value": float(i.target_value.mean())},
    "shds": lambda i: {"devices": len(i.x0), "mean power": float(i.power.mean()),
                       "mean capacity": float(i.capacity.mean()), "price spread": float(i.price.std())},
}


def features(benchmark: str, instance: Instance) -> dict[str, float]:
    """The named features of one instance (every value a finite float)."""
    if benchmark not in FEATURES:
        raise KeyError(f"no situation features for {benchmark!r}; known: {sorted(FEATURES)}")
    return {name: float(v) for name, v in FEATURES[benchmark](instance).items()}


@dataclasses.dataclass(frozen=True)
class Split:
    """``feature side threshold`` marks the instances predicted in the class."""

    feature: str
    side: str  # ">" or "<="
    threshold: float
    inside: int  # instances on the rule's side
    hits_inside: int  # of them, in the class
    hits_outside: int  # in the class, elsewhere
    correct: int

    def text(self, kind: str, n: int) -> str:
        return (f"{kind} cases concentrate where {self.feature} {self.side} {self.threshold:.3g}: "
                f"{self.hits_inside} of {self.inside} such instances, {self.hits_outside} of {n - self.inside} elsewhere")


def best_split(rows: Sequence[dict[str, float]], target: Sequence[bool]) -> Split | None:
    """The one-feature threshold rule that classifies ``target`` best, or ``None`` if none is informative.

    >>> rows = [{"size": s} for s in (10, 20, 30, 40)]
    >>> best_split(rows, [False, False, True, True]).text("dominant", 4)
    'dominant cases concentrate where size > 25: 2 of 2 such instances, 0 of 2 elsewhere'
    >>> best_split(rows, [True, False, True, False]) is None   # no threshold explains it
    True
    """
    y = np.asarray(target, dtype=bool)
    n = len(y)
    if n < 2 or y.all() or not y.any():
        return None
    baseline = max(int(y.sum()), n - int(y.sum()))
    best: Split | None = None
    for name in rows[0]:
        x = np.array([r[name] for r in rows], dtype=float)
        values = np.unique(x)
        for lo, hi in zip(values[:-1], values[1:]):
            t = (lo + hi) / 2
            for side, pred in ((">", x > t), ("<=", x <= t)):
                if min(int(pred.sum()), n - int(pred.sum())) < MIN_SIDE:
                    continue
                correct = int((pred == y).sum())
                if best is None or correct > best.correct:
                    best = Split(name, side, float(t), int(pred.sum()), int((pred & y).sum()),
                                 int((~pred & y).sum()), correct)
    if best is None or best.correct < baseline + MIN_MARGIN or best.correct < MIN_ACCURACY * n:
        return None
    return best


def describe(benchmark: str, instances: Sequence[Instance], classes: Sequence[str]) -> list[str]:
    """Lines for the Reflect summary: where the dominant and harmful cases lie, when a feature says so."""
    rows = [features(benchmark, inst) for inst in instances]
    n = len(classes)
    lines = []
    for kind in ("dominant", "harmful"):
        split = best_split(rows, [c == kind for c in classes])
        if split is not None:
            lines.append(f"- situations: {split.text(kind, n)}.")
    if not lines:
        counts = {c: list(classes).count(c) for c in set(classes)}
        if len(counts) == 1:
            lines.append(f"- situations: every instance is {classes[0]}; no instance feature "
                         f"({', '.join(rows[0])}) changes that on this batch.")
        else:
            lines.append(f"- situations: no single instance feature ({', '.join(rows[0])}) separates the cases "
                         "on this batch; look at the decisions themselves.")
    return lines
