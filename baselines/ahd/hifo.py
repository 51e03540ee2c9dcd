"""HiFo-ind.: HiFo-Prompt, prompting with hindsight and foresight (Chen et al., ICLR 2026), per role.

HiFo-Prompt is EoH's population search with two additions, both kept role-local here:

- **Hindsight, the insight pool** (at most 30 short design principles): three are shown
  in every proposal prompt, chosen by the reference's "adaptive" rule (effectiveness,
  minus ``0.1 ln(uses + 1)``, plus 0.2 when used in the last two generations); after
  each offspring every shown insight's effectiveness moves toward how the offspring
  ranked in the population (smoothing 0.3, clipped to ``[-1, 1]``); a new insight
  similar to a kept one (word overlap above 0.7) is dropped; a full pool evicts its
  least effective insight among those used at least three times (the oldest when none
  is); the pool starts from the reference's five generic principles.
- **Foresight, the evolutionary navigator**: after three generations without
  improvement of the best score, or when fewer than 30 % of program pairs have
  different descriptions, it switches to *exploration*; after two improving
  generations to *exploitation*; otherwise it draws exploration, exploitation or
  balanced (0.25, 0.25, 0.5). Each regime adds its sentence and a design directive
  drawn from its list to the prompt. Progress is what an offspring did to the
  population's best, both scores measured in one context; a re-score of the retained
  programs (batch start, team changed) moves the scores but is no generation.

One **insight distillation** per role and batch is the only auxiliary call (Appendix
D: 15 per run): the descriptions (or code) of the top 30 % of the role's population,
and a request for one or two generic, performance-positive design principles as
``-`` lines, which enter the pool.

Adaptation (ours, docs/baselines/ahd.md): population 8 (Appendix D); EoH's operators
E1, E2, M1, M2, M3 cycle, one offspring each, as in EoH-ind.; a "generation" of the
navigator and of insight statistics is one proposal (the reference's is one operator
round of ``pop_size`` offspring; here each round has one), and the re-scores the
reference never makes (its scores are fixed) are not read as progress; the reference distils with
probability 0.8 after every operator round, the paper's accounting fixes one call per
role and batch, made at the batch end whatever the population size. An invalid
offspring credits nothing, as in the reference: there a failed generation or evaluation
raises inside ``get_offspring``, whose handler replaces the offspring by one without
insight metadata, so neither its ``-0.8`` nor ``calculate_insight_effectiveness``'s
``-0.5`` for a missing objective is ever applied (the shown insights' use counts stay).
Scores are higher-is-better, so "best" is the largest.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from baselines.ahd import eoh
from baselines.ahd._search import Candidate, IsolatedSearch, Offer
from baselines.ahd.eoh import Population

POPULATION = 8  # Appendix D: population size 8
POOL = 30  # Appendix D: insight pool 30
SHOWN = 3  # insights per prompt (the reference's k)
SIMILAR = 0.7  # word-overlap threshold for a duplicate insight
PROBATION = 3  # uses before an insight can be evicted
SMOOTHING = 0.3

INITIAL_INSIGHTS = (
    "Adapt the decision rule to the situation: combine several criteria and tune their weights to the state "
    "of the problem.",
    "Look for structure in the problem and in good solutions, and bias choices toward what that structure "
    "makes promising.",
    "Reshape the objective the rule optimises with auxiliary terms or changing weights when a plain greedy "
    "criterion gets stuck.",
    "Represent the situation in the form that makes the key comparison cheap and exact, and build the rule "
    "around that representation.",
    "Spread choices over regions that are not yet covered instead of concentrating on the currently best one.",
)

DIRECTIVES = {
    "general": (
        "the criteria used to score options", "the long-term effect of the current decision",
        "the balance between local gain and global coverage", "robustness across different instances",
        "computational cost",
    ),
    "exploitation": (
        "refining the core scoring function", "fine-tuning critical parameters and thresholds",
        "strengthening the strategies that already work", "removing redundant computation",
        "the precision of the existing rules",
    ),
    "exploration": (
        "a new way of constructing the decision", "a different decomposition of the problem",
        "new adaptive mechanisms", "a completely different algorithmic idea", "combinations of strategies",
    ),
}
REGIME_NOTE = {
    "exploration": "Try an approach that differs significantly from the given programs and from conventional ones.",
    "exploitation": "Focus on refining and optimising the most effective patterns while keeping the structure.",
    "balanced": "Balance novel ideas with the techniques that have proven effective.",
}


@dataclasses.dataclass
class Insight:
    text: str
    uses: int = 0
    effectiveness: float = 0.0
    last_used: int = 0


@dataclasses.dataclass
class InsightPool:
    """One role's insight pool (hindsight)."""

    insights: list[Insight] = dataclasses.field(default_factory=list)
    generation: int = 0

    @staticmethod
    def similarity(a: str, b: str) -> float:
        wa, wb = set(a.lower().split()), set(b.lower().split())
        return len(wa & wb) / max(len(wa), len(wb)) if wa and wb else 0.0

    def add(self, text: str) -> bool:
        if any(self.similarity(text, i.text) > SIMILAR for i in self.insights):
            return False
        if len(self.insights) >= POOL:
            self._evict()
        self.insights.append(Insight(text, last_used=self.generation))
        return True

    def _evict(self) -> None:
        mature = [i for i in self.insights if i.uses >= PROBATION]
        if mature:  # lowest effectiveness, minus 0.01 per generation unused
            worst = min(mature, key=lambda i: i.effectiveness - 0.01 * (self.generation - i.last_used))
        else:
            worst = min(self.insights, key=lambda i: i.last_used)
        self.insights.remove(worst)

    def pick(self, k: int = SHOWN) -> list[Insight]:
        """The reference's "adaptive" choice: effectiveness, a usage penalty, a recency bonus."""
        def score(i: Insight) -> float:
            recent = 0.2 if self.generation - i.last_used <= 2 else 0.0
            return i.effectiveness - 0.1 * math.log(i.uses + 1) + recent

        chosen = self.insights if len(self.insights) <= k else sorted(self.insights, key=score, reverse=True)[:k]
        for i in chosen:
            i.uses += 1
            i.last_used = self.generation
        return list(chosen)

    def credit(self, texts: list[str], effectiveness: float) -> None:
        for i in self.insights:
            if i.text in texts:
                i.effectiveness = max(-1.0, min(1.0, (1 - SMOOTHING) * i.effectiveness + SMOOTHING * effectiveness))
                i.last_used = self.generation


def effectiveness(score: float | None, population: list[float]) -> float:
    """How well an offspring ranked in the population, in ``[-1, 1]`` (higher scores are better)."""
    if score is None:
        return -0.5
    if not population:
        return 0.0
    best, worst, avg = max(population), min(population), sum(population) / len(population)
    if best == worst:
        return 0.1
    n = (score - worst) / (best - worst)
    if score >= best:
        value = 0.8 + 0.2 * n
    elif score >= avg:
        value = 0.2 + 0.6 * n
    else:
        value = -0.3 + 0.5 * n
    return max(-1.0, min(1.0, value))


@dataclasses.dataclass
class Navigator:
    """One role's evolutionary navigator (foresight).

    Its state is the run of stagnant and of improving generations, a generation being one
    proposal: :meth:`record` reads how the offspring changed the population's best score,
    both measured in one team on one batch. A re-score (batch start, team changed) is not a
    generation: it moves every score but improves no program, so the navigator never sees
    it (the reference's scores never move; comparing the best across a re-score would read
    an easier batch as progress and a harder one as stagnation).
    """

    stagnation: int = 0
    improvement: int = 0

    def record(self, before: float, after: float) -> None:
        """One generation: the population's best score before and after its offspring (the same scores)."""
        if after - before > 1e-4:  # the reference's threshold (on costs: last best - current best > 1e-4)
            self.stagnation, self.improvement = 0, self.improvement + 1
        else:  # (also when every score is -inf: no progress)
            self.stagnation, self.improvement = self.stagnation + 1, 0

    def guide(self, diversity: float | None, rng: np.random.Generator) -> tuple[str, str]:
        if self.stagnation >= 3 or (diversity is not None and diversity < 0.3):
            regime = "exploration"
        elif self.improvement >= 2:
            regime = "exploitation"
        else:
            regime = ("exploration", "exploitation", "balanced")[int(rng.choice(3, p=[0.25, 0.25, 0.5]))]
        pool = DIRECTIVES[regime] if regime != "balanced" else sum(DIRECTIVES.values(), ())
        return regime, pool[int(rng.integers(len(pool)))]


@dataclasses.dataclass
class HiFoState:
    population: Population = dataclasses.field(default_factory=Population)
    pool: InsightPool = dataclasses.field(default_factory=InsightPool)
    navigator: Navigator = dataclasses.field(default_factory=Navigator)
    shown: dict[int, list[str]] = dataclasses.field(default_factory=dict)  # proposal h -> insights shown


def diversity(members: list[Candidate]) -> float | None:
    """Share of program pairs whose descriptions differ (the reference's diversity)."""
    n = len(members)
    if n < 2:
        return None
    differ = sum(members[i].thought != members[j].thought for i in range(n) for j in range(i + 1, n))
    return differ / (n * (n - 1) / 2)


def distill_prompt(top: list[Candidate]) -> list[dict[str, str]]:
    lines = ["The following are high-performing versions of one decision function, evolved recently:"]
    for k, c in enumerate(top):
        text = c.thought if len(c.thought) > 8 else c.source[:800]
        lines.append(f"{k + 1}. {text}")
    lines += [
        "", "Extract one or two concise, generic, performance-positive design principles from them, drawing on both "
        "the descriptions and the code ideas; principles that would apply to other decision problems, not "
        "implementation details. Write each as one sentence on its own line starting with '- '.",
    ]
    return [{"role": "user", "content": "\n".join(lines)}]


class HiFoInd(IsolatedSearch):
    """HiFo-ind.: HiFo-Prompt's insight pool and navigator over EoH's search, per role."""

    name = "hifo"

    def new_role_state(self, role: str) -> HiFoState:
        state = HiFoState()
        for text in INITIAL_INSIGHTS:
            state.pool.add(text)
        return state

    def programs(self, role: str) -> list[Candidate]:
        return self.state.roles[role].population.members

    def _rescore(self, role, batch, reason="batch_start") -> None:
        super()._rescore(role, batch, reason)
        self.state.roles[role].population.manage(POPULATION)

    def prompt(self, role: str, h: int, rng: np.random.Generator) -> Offer:
        st: HiFoState = self.state.roles[role]
        pop = st.population
        st.pool.generation += 1
        regime, directive = st.navigator.guide(diversity(pop.members), rng)
        shown = st.pool.pick()
        st.shown[h] = [i.text for i in shown]
        op = eoh.OPERATORS[h % len(eoh.OPERATORS)]
        target = self.targets[role]
        parents = pop.select(eoh.PARENTS if op in ("e1", "e2") else 1, rng, replace=True)  # EoH's draw
        builder = {"e1": eoh.e1, "e2": eoh.e2}.get(op)
        messages = builder(target, parents) if builder else {"m1": eoh.m1, "m2": eoh.m2, "m3": eoh.m3}[op](
            target, parents[0])
        guidance = "\n".join([
            "", "Consider these successful design principles observed recently:", *(f"- {t}" for t in st.shown[h]),
            f"Pay special attention to: {directive}.", REGIME_NOTE[regime],
        ])
        messages[-1] = {**messages[-1], "content": messages[-1]["content"] + "\n" + guidance}
        return Offer(messages, op, tuple(p.id for p in parents))

    def accept(self, role: str, offer: Offer, child: Candidate | None, rng: np.random.Generator) -> None:
        st: HiFoState = self.state.roles[role]
        before = max(c.score for c in st.population.members) if st.population.members else None
        if offer.operator != "seed":
            shown = st.shown.pop(self.state.h, [])
            if child is not None:  # a failed offspring credits nothing (the reference's exception path)
                scores = [c.score for c in st.population.members if np.isfinite(c.score)]
                st.pool.credit(shown, effectiveness(child.score, scores))
        if child is not None:
            st.population.members.append(child)
            st.population.manage(POPULATION)
        if offer.operator != "seed":  # one generation; a failed offspring leaves the best as it was
            st.navigator.record(before, max(c.score for c in st.population.members))

    def end_of_batch(self, role: str) -> None:
        st: HiFoState = self.state.roles[role]
        ranked = sorted(st.population.members, key=lambda c: -c.score)
        top = ranked[:max(1, int(len(ranked) * 0.3))]
        text = self.auxiliary(distill_prompt(top), "insight", [self.state.b, self.roles.index(role)])
        added = [line.strip()[2:].strip() for line in (text or "").splitlines() if line.strip().startswith("- ")]
        kept = [t for t in added if len(t) > 10 and st.pool.add(t)]
        self.run.event("insight", b=self.state.b, role=role, proposed=len(added), kept=len(kept), texts=kept)
