"""EoH-ind.: Evolution of Heuristics (Liu et al., ICML 2024), one population per role.

What it keeps, per role: a population of at most 10 programs, each with its
"thought" (the one-sentence description EoH asks for, in braces) and its contextual
team score. What it asks the model: EoH's five prompt strategies, worded after the
original prompts (our own text) on top of RELIC's shared system message and target
block (the task description every method gets):

- **E1** (exploration): two parents shown with their thoughts and code; "a new
  algorithm with a totally different form from the given ones";
- **E2** (exploration): two parents; identify their common backbone idea, then a new
  algorithm motivated by it but different in form;
- **M1** (modification): one parent; a modified version with a different form;
- **M2** (modification): one parent; the same structure with different settings of
  its parameters;
- **M3** (modification): one parent's code; find components that could overfit the
  training instances and simplify them.

Selection and survival as EoH's defaults: parents drawn *with replacement* with
probability proportional to ``1 / (rank + 1 + |P|)`` (rank 0 = best; EoH's
``parent_selection`` uses ``random.choices``, so E1/E2 may show one program twice),
``m = 2`` parents for E1 and E2; after each offspring the population keeps its best 10 programs with distinct
scores (EoH's greedy management drops exact objective duplicates).

**Adaptation to the shared protocol (ours, documented in docs/baselines/ahd.md).**
EoH runs generations in which every operator makes ``N`` offspring; here each role
gets ten proposals per batch, so the operators are applied in EoH's order E1, E2, M1,
M2, M3, cycling (two generations of one offspring per operator per batch). EoH's
initialisation I1 (programs from scratch) would spend the budget on unguided code, so
the population starts from the role's seed, as EoH's "use seed" option does; E1/E2
with a one-program population show that program twice (the draw is with replacement). Population scores are the
contextual team scores of the current batch (re-scored at each batch start, see
:mod:`baselines.ahd._search`). The final team is the incumbents after batch 5.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from baselines.ahd._search import Candidate, IsolatedSearch, Offer
from relic_learner import prompts

POPULATION = 10  # Appendix D, Table "Method-specific hyperparameters"
PARENTS = 2  # EoH's default m for E1 and E2
OPERATORS = ("e1", "e2", "m1", "m2", "m3")

_DESCRIBE = "describe your new algorithm and its main steps in one sentence, inside braces { }"
_IMPLEMENT = ("implement it as the target function: the complete function, starting with the exact target "
              "signature, and nothing after it.")
_FORMAT = f"First, {_DESCRIBE}. Next, {_IMPLEMENT}"


def _shown(programs: list[Candidate]) -> str:
    return "\n".join(
        f"No. {k + 1} algorithm: {c.thought or '(no description)'}\nCode:\n```python\n{c.source.rstrip()}\n```"
        for k, c in enumerate(programs)
    )


def _messages(target: str, payload: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": prompts.SYSTEM}, {"role": "user", "content": f"{target}\n\n{payload}"}]


def e1(target: str, parents: list[Candidate]) -> list[dict[str, str]]:
    return _messages(target, "\n".join([
        f"I have {len(parents)} existing algorithms with their code:", _shown(parents), "",
        "Create a new algorithm whose form is totally different from the given ones. " + _FORMAT,
    ]))


def e2(target: str, parents: list[Candidate]) -> list[dict[str, str]]:
    return _messages(target, "\n".join([
        f"I have {len(parents)} existing algorithms with their code:", _shown(parents), "",
        "Create a new algorithm whose form is totally different from the given ones but which is motivated by "
        f"them. First, identify the backbone idea the given algorithms share. Second, based on that backbone, "
        f"{_DESCRIBE}. Third, {_IMPLEMENT}",
    ]))


def m1(target: str, parent: Candidate) -> list[dict[str, str]]:
    return _messages(target, "\n".join([
        "I have one algorithm with its code:", _shown([parent]), "",
        "Create a new algorithm that has a different form but can be a modified version of this one. " + _FORMAT,
    ]))


def m2(target: str, parent: Candidate) -> list[dict[str, str]]:
    return _messages(target, "\n".join([
        "I have one algorithm with its code:", _shown([parent]), "",
        "Identify the main parameters of its scoring and create a new algorithm with different settings of "
        "those parameters. " + _FORMAT,
    ]))


def m3(target: str, parent: Candidate) -> list[dict[str, str]]:
    return _messages(target, "\n".join([
        "Identify the main components of the function below. Then analyse whether any of them could be "
        "overfitted to the training instances, and simplify those components so that the function generalises "
        "to unseen instances. Keep the function name, inputs and outputs unchanged.",
        f"```python\n{parent.source.rstrip()}\n```", "", prompts.RETURN_ONLY,
    ]))


@dataclasses.dataclass
class Population:
    """One role's EoH population, best first."""

    members: list[Candidate] = dataclasses.field(default_factory=list)

    def rank(self) -> None:
        self.members.sort(key=lambda c: (-c.score, c.id))

    def manage(self, size: int = POPULATION) -> None:
        """EoH's greedy management: distinct scores only, the best ``size`` kept."""
        self.rank()
        kept, seen = [], set()
        for c in self.members:
            if c.score not in seen:
                kept.append(c)
                seen.add(c.score)
        self.members = kept[:size]

    def select(self, k: int, rng: np.random.Generator, replace: bool = False) -> list[Candidate]:
        """``k`` parents drawn with probability proportional to ``1 / (rank + 1 + |P|)`` (EoH's prob_rank).

        ``replace=True`` is EoH's own draw (``random.choices``: with replacement, so a parent can
        appear twice, and ``k`` parents even from a smaller population); ``False`` draws at most
        ``|P|`` distinct programs (MCTS-AHD-ind.'s use).
        """
        self.rank()
        n = len(self.members)
        weights = np.array([1.0 / (r + 1 + n) for r in range(n)])
        picks = rng.choice(n, size=k if replace else min(k, n), replace=replace, p=weights / weights.sum())
        return [self.members[int(i)] for i in picks]


class EoHInd(IsolatedSearch):
    """EoH-ind.: EoH's population search, one population per role (see the module docstring)."""

    name = "eoh"

    def new_role_state(self, role: str) -> Population:
        return Population()

    def programs(self, role: str) -> list[Candidate]:
        return self.state.roles[role].members

    def prompt(self, role: str, h: int, rng: np.random.Generator) -> Offer:
        pop: Population = self.state.roles[role]
        op = OPERATORS[h % len(OPERATORS)]
        target = self.targets[role]
        if op in ("e1", "e2"):
            parents = pop.select(PARENTS, rng, replace=True)
            messages = (e1 if op == "e1" else e2)(target, parents)
        else:
            parents = pop.select(1, rng, replace=True)
            messages = {"m1": m1, "m2": m2, "m3": m3}[op](target, parents[0])
        return Offer(messages, op, tuple(p.id for p in parents))

    def accept(self, role: str, offer: Offer, child: Candidate | None, rng: np.random.Generator) -> None:
        if child is None:  # an invalid offspring never enters the population (EoH discards it)
            return
        pop: Population = self.state.roles[role]
        pop.members.append(child)
        pop.manage()

    def _rescore(self, role, batch, reason="batch_start") -> None:
        super()._rescore(role, batch, reason)
        self.state.roles[role].manage()
