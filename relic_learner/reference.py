"""Reflect's credit map: the full team against the reference team (Appendix C.2).

For role ``i``, the trusted orchestrator plays the full team and a reference team in
which ``i``'s learned program is replaced by the benchmark's fixed reference policy
(:meth:`relic_envs.core.benchmark.Benchmark.reference_policy`: absent where resources
are substitutable, a fixed fallback where the stage is mandatory). The per-instance
gaps stay here; only a summary text of dominant, redundant and harmful cases, and the
situations (instance features, :mod:`relic_learner.situations`) that separate them,
goes into the Reflect prompt, never teammate code or the raw score vector.
:func:`scalar_summary` is the "single scalar signal" the paper's NoPeer condition
compares it with (Section 6, Figure 3): the mean gap and nothing else.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence

import numpy as np

from relic_envs.core.registry import spec
from relic_learner import situations
from relic_learner.batches import Batch
from relic_learner.evaluate import Team, TeamEvaluation, TeamEvaluator

REDUNDANT_REL_TOL = 0.01  # |gap| within 1% of the reference's |score| counts as "no difference"


@dataclasses.dataclass(frozen=True)
class Credit:
    """A role's contextual credit on a batch.

    ``gaps[k]`` = full score - reference score on instance ``k`` (higher-is-better
    units); ``classes[k]`` is ``"dominant"``, ``"redundant"`` or ``"harmful"``.
    ``summary`` is the only part that reaches a prompt.
    """

    role: str
    gaps: tuple[float, ...]
    classes: tuple[str, ...]
    summary: str
    full: TeamEvaluation
    reference: TeamEvaluation


def classify_gaps(gaps: Sequence[float], reference_scores: Sequence[float], rel_tol: float = REDUNDANT_REL_TOL) -> list[str]:
    """Dominant (the role clearly helps), redundant (no clear difference) or harmful.

    >>> classify_gaps([5.0, 0.1, -3.0], [-100.0, -100.0, -100.0])
    ['dominant', 'redundant', 'harmful']
    """
    out = []
    for gap, ref in zip(gaps, reference_scores, strict=True):
        tol = rel_tol * max(abs(ref), 1e-9)
        out.append("dominant" if gap > tol else "harmful" if gap < -tol else "redundant")
    return out


def credit(evaluator: TeamEvaluator, team: Team, role: str, batch: Batch) -> Credit | None:
    """The credit map of ``role`` in ``team`` on ``batch``; ``None`` if either team is invalid."""
    if role not in evaluator.bench.roles:
        raise ValueError(f"role must be one of {list(evaluator.bench.roles)}, got {role!r}")
    full, reference = evaluator.evaluate_many([team, {**team, role: None}], batch)
    if not (full.ok and reference.ok):
        return None
    ref_scores = [r.score for r in reference.results]
    gaps = tuple(f.score - r for f, r in zip(full.results, ref_scores))
    classes = tuple(classify_gaps(gaps, ref_scores))
    text = summarize(evaluator, role, batch, gaps, classes)
    return Credit(role, gaps, classes, text, full, reference)


def summarize(evaluator: TeamEvaluator, role: str, batch: Batch, gaps: Sequence[float], classes: Sequence[str]) -> str:
    """Domain-specific text: counts, mean effects in the objective's units, where they occur, and in which situations."""
    bench = evaluator.bench
    objective = spec(bench.name).objective
    direction = "lower" if bench.minimize else "higher"
    n = len(gaps)
    lines = [
        f"Compared with {bench.reference_text(role)}, on {n} instances of this batch "
        f"(objective: {objective}; {direction} is better):"
    ]
    meaning = {
        "dominant": "your skill clearly improves the team's result; keep what you do there",
        "redundant": "the team's result barely changes: teammates already cover these cases",
        "harmful": "the team does worse with your skill than with the reference",
    }
    current = max(p[0] for p in batch.provenance)
    for kind in ("dominant", "redundant", "harmful"):
        idx = [k for k, c in enumerate(classes) if c == kind]
        if not idx:
            lines.append(f"- {kind}: none.")
            continue
        effect = float(np.mean([abs(gaps[k]) for k in idx]))
        where = Counter(batch.provenance[k][0] for k in idx)
        origin = ", ".join(
            f"{count} from {'the current batch' if b == current else f'batch {b}'}" for b, count in sorted(where.items())
        )
        size = "" if kind == "redundant" else f"; mean {'gain' if kind == 'dominant' else 'loss'} {effect:.3g} objective units"
        lines.append(f"- {kind}: {len(idx)} of {n} ({origin}){size}: {meaning[kind]}.")
    lines += situations.describe(bench.name, batch.instances, classes)
    return "\n".join(lines)


def scalar_summary(evaluator: TeamEvaluator, gaps: Sequence[float]) -> str:
    """The scalar-only Reflect signal: one number, the mean gap, with no cases or situations."""
    direction = "lower" if evaluator.bench.minimize else "higher"
    return (f"Your skill changes the team's mean score by {float(np.mean(gaps)):+.6g} relative to the reference "
            f"behavior (score units; higher is better; the objective itself is {direction}-is-better).")
