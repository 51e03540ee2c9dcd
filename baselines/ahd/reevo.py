"""ReEvo-ind.: Reflective Evolution (Ye et al., NeurIPS 2024), one population and one reflection memory per role.

What it keeps, per role: the latest generation (at most 10 valid programs, ReEvo's
population), the elitist (the role's incumbent), and its long-term reflection text.
What it asks the model, worded after ReEvo's prompts (``ai4co/reevo`` ``prompts/common``;
our own text) on top of RELIC's shared system message and target block:

- **initialisation**: the seed shown as "a trivial design"; write a better version;
- **short-term reflection** (auxiliary, ReEvo's reflector system message): the task and
  the function's contract (the role's target block: signature, contract, seed
  description, hint; ReEvo's ``user_reflector_st.txt`` opens with the problem and the
  function description), then two programs of the role, the worse and the better (by
  contextual team score); hints for better designs in under 20 words;
- **crossover**: worse and better code plus that reflection; an improved function;
- **long-term reflection** (auxiliary): the task and contract (ReEvo's
  ``user_reflector_lt.txt`` opens with the problem description), the prior long-term
  reflection and the new short-term ones; constructive hints in under 50 words;
- **elitist mutation**: the long-term reflection and the elitist's code; a mutated,
  improved function.

Reflections never leave the role: no teammate's code, reflection or score enters them.

**Two schedules** (``SearchConfig.schedule``). Per role, proposal ``n = 10 (b - 1) + h``
of the run (0-based) is, under either, ReEvo's initial-population prompt for ``n < 4``
(four warm-up proposals that also give the first reflection its two distinct parents),
then:

- ``"paper"`` (the default; 46 auxiliary calls per role at the paper's budget, 138 per
  run, Appendix D's table): ``(n - 4) % 3`` is 0 or 1: short-term reflection, then
  crossover; 2: long-term reflection over the short-term reflections since the last
  one, then elitist mutation. 138 auxiliary calls for 150 candidates with 4 warm-ups
  force one auxiliary call per reflective proposal (crossovers + long-term reflections
  = 46 = crossovers + mutations), hence one long-term reflection per mutation; within
  that, the 2:1 crossover-to-mutation ratio is ReEvo's own (``pop_size`` crossovers
  and ``pop_size * 0.5`` mutations per iteration), interleaved so every long-term
  reflection has new short-term ones to absorb.
- ``"reference"``: ReEvo's own iteration with ``pop_size = 10``: 10 short-term
  reflections and crossovers, then one long-term reflection over those 10 and 5
  elitist mutations under it (``(n - 4) % 15``: 0-9 crossover, 10 long-term reflection
  and mutation, 11-14 mutation without a call): 11 auxiliary calls per 15 candidates,
  34 per role and 102 per run at the paper's budget (3 iterations and one crossover),
  not the paper's 138.

When fewer than two programs with distinct scores exist, the reference's
``random_select`` returns ``None`` and ``evolve`` raises ("Selection failed"); a run here
cannot stop, so (ours) a crossover slot then becomes a long-term reflection and an
elitist mutation: still one auxiliary call, so both counts above are exact. A failed
auxiliary call leaves its text empty; the proposal is still made and charged.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from baselines.ahd._search import Candidate, IsolatedSearch, Offer
from relic_learner import prompts

POPULATION = 10  # Appendix D, Table "Method-specific hyperparameters"
WARMUP = 4  # proposals per role before reflection starts: 150 - 138 = 12 = 3 roles x 4 (see the module docstring)
GENERATION = 15  # "reference" schedule: pop_size crossovers, then pop_size * 0.5 mutations (ReEvo's iteration)
CROSSOVERS = 10

REFLECTOR = "You are an expert in the domain of optimization heuristics. Your task is to give hints to design better ones."


def _code(source: str) -> str:
    return f"```python\n{source.rstrip()}\n```"


def _generator(target: str, payload: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": prompts.SYSTEM}, {"role": "user", "content": f"{target}\n\n{payload}"}]


def _reflector(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": REFLECTOR}, {"role": "user", "content": text}]


def initial(target: str, seed: Candidate) -> list[dict[str, str]]:
    return _generator(target, "\n".join([
        "[A trivial design]", _code(seed.source), "",
        "Take the design above as a reference for the format. Be creative and write a better version. "
        + prompts.RETURN_ONLY,
    ]))


def short_term(target: str, function: str, worse: Candidate, better: Candidate) -> list[dict[str, str]]:
    return _reflector("\n".join([
        f"Below are two versions of the function {function} for the following task.", target, "",
        "You are given the two versions below; the second one gives the team a better score than the first.",
        "[Worse code]", _code(worse.source), "[Better code]", _code(better.source), "",
        "Give hints for designing a better function, based on the two versions, in fewer than 20 words.",
    ]))


def long_term(target: str, function: str, prior: str, new: list[str]) -> list[dict[str, str]]:
    return _reflector("\n".join([
        f"Below is your prior long-term reflection on designing the function {function} for the following task.",
        target, "", "[Prior reflection]", prior or "(none yet)", "",
        "Below are newly gained insights:", "\n".join(new) or "(none)", "",
        "Write constructive hints for designing a better function, based on the prior reflection and the new "
        "insights, in fewer than 50 words.",
    ]))


def crossover(target: str, worse: Candidate, better: Candidate, reflection: str) -> list[dict[str, str]]:
    return _generator(target, "\n".join([
        "[Worse code]", _code(worse.source), "[Better code]", _code(better.source), "",
        "[Reflection]", reflection or "(none)", "",
        "Write an improved function according to the reflection. " + prompts.RETURN_ONLY,
    ]))


def mutation(target: str, elitist: Candidate, reflection: str) -> list[dict[str, str]]:
    return _generator(target, "\n".join([
        "[Prior reflection]", reflection or "(none)", "", "[Code]", _code(elitist.source), "",
        "Write a mutated function that improves on the code above, following the reflection. "
        + prompts.RETURN_ONLY,
    ]))


@dataclasses.dataclass
class ReflectiveState:
    """One role's ReEvo state: the latest generation, the reflections, the proposal counter."""

    generation: list[Candidate] = dataclasses.field(default_factory=list)
    long_term: str = ""
    pending: list[str] = dataclasses.field(default_factory=list)  # short-term reflections since the last long-term
    made: int = 0  # proposals made by this role so far (the schedule's n)


def schedule(n: int, kind: str = "paper") -> str:
    """The kind of the role's ``n``-th proposal (0-based) under a schedule (see the module docstring).

    ``init``; ``crossover`` (after a short-term reflection); ``mutation`` (after a long-term
    reflection); ``reuse`` (``"reference"`` only: a mutation under the current long-term
    reflection, no call).
    """
    if n < WARMUP:
        return "init"
    if kind == "reference":
        k = (n - WARMUP) % GENERATION
        return "crossover" if k < CROSSOVERS else "mutation" if k == CROSSOVERS else "reuse"
    return "mutation" if (n - WARMUP) % 3 == 2 else "crossover"


class ReEvoInd(IsolatedSearch):
    """ReEvo-ind.: ReEvo's reflective evolution, one state per role (see the module docstring)."""

    name = "reevo"
    schedules = ("paper", "reference")

    def new_role_state(self, role: str) -> ReflectiveState:
        return ReflectiveState()

    def programs(self, role: str) -> list[Candidate]:
        st = self.state.roles[role]
        incumbent = self.state.incumbent.get(role)
        pool = list(st.generation)
        if incumbent is not None and all(c.id != incumbent.id for c in pool):
            pool.append(incumbent)
        return pool

    def _pair(self, role: str, rng: np.random.Generator) -> tuple[Candidate, Candidate] | None:
        """ReEvo's random selection: two programs (generation plus elitist) with different scores."""
        pool = [c for c in self.programs(role) if np.isfinite(c.score)]
        if len({c.score for c in pool}) < 2:
            return None
        for _ in range(1000):
            i, j = rng.choice(len(pool), size=2, replace=False)
            a, b = pool[int(i)], pool[int(j)]
            if a.score != b.score:
                return (a, b) if a.score < b.score else (b, a)  # (worse, better)
        return None

    def prompt(self, role: str, h: int, rng: np.random.Generator) -> Offer:
        st: ReflectiveState = self.state.roles[role]
        target, function = self.targets[role], self.signatures[role].function
        kind = schedule(st.made, self.config.schedule)
        st.made += 1
        key = [self.state.b, self.roles.index(role), h]
        elitist = self.state.incumbent[role]
        if kind == "init":
            return Offer(initial(target, elitist), "init", (elitist.id,))
        pair = self._pair(role, rng) if kind == "crossover" else None
        if pair is not None:
            worse, better = pair
            text = self.auxiliary(short_term(target, function, worse, better), "short_term", key) or ""
            if text:
                st.pending.append(" ".join(text.split()))
            return Offer(crossover(target, worse, better, text), "crossover", (worse.id, better.id))
        if kind == "reuse":
            return Offer(mutation(target, elitist, st.long_term), "mutation", (elitist.id,))
        text = self.auxiliary(long_term(target, function, st.long_term, st.pending), "long_term", key)
        if text:
            st.long_term, st.pending = " ".join(text.split()), []
        return Offer(mutation(target, elitist, st.long_term), "mutation", (elitist.id,))

    def accept(self, role: str, offer: Offer, child: Candidate | None, rng: np.random.Generator) -> None:
        if child is None:
            return
        st: ReflectiveState = self.state.roles[role]
        st.generation = (st.generation + [child])[-POPULATION:]  # the latest generation replaces the older
