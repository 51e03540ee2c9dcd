"""The MOTIF control: same-role competitive tree search (Kiet et al., AAAI 2026), system-aware round off.

MOTIF optimises several interacting functions with two LLM agents, P1 and P2, taking
turns on one function at a time. Appendix D keeps its *same-role competitive step*
and disables its *system-aware cross-role round*, so no agent ever sees another role's
code. What it keeps, per role: one competitive tree whose root holds the role's seed
for both players; a node records both players' current programs, whose turn it is,
its visits and value, and the operators already tried from it. What it asks the model
(our wording of the reference's context; ``HaiAu2501/MOTIF``, read, not copied): the
task, the *baseline* (the role's incumbent as of the last baseline update and the team
score it had then: code and score move together, see below), the active player's
program, its score and its improvement over the baseline, the opponent's best program
of the *same role* and its improvement, the summaries along the search path, the last
four evaluated attempts, the *last challenger's* code (the
last attempt in the role's tree, valid or not) with the request to compare it with the
better of the baseline and the opponent, one of three operators, and the goal: beat the
baseline's score and the opponent, one decision rule at a time, and return to the
baseline or the best positive idea when the feedback is negative. The operators:

- **counter**: target one weakness of the opponent with a distinct, stable formula;
- **learning**: keep one useful pattern of the opponent and change or combine it;
- **innovation**: try a compact formula family not used by the baseline, the opponent
  or the recent attempts.

Search, as the reference: descending from the root, a node with an untried operator is
expanded with one drawn at random; otherwise the child with the best
``Q + c sqrt(ln N_parent / N_child)`` (unvisited children first) is followed, with the
paper's inner exploration ``c = 0.01`` (the reference's current code has 1.414; we keep the
paper's constants, with which its MOTIF numbers were reported); a leaf whose operators are all tried is
expanded again with a random one. The expanding player gets the new program, the
opponent keeps its own; the child's value for a player with improvement ``I`` (relative
to the baseline score's magnitude; -1 for an invalid program, the reference's -100 %)
against an opponent with ``I'`` is ``0.7 sigmoid(10 I) + 0.3 sigmoid(10 (I - I'))``
(the paper's reward mix 0.7 and reward scale 10; the reference's current code applies
scale 1 to percentages, i.e. 100 on fractions; scale 10 on percentages would make every
gain above about half a percent worth the same); every node on the path is credited with the value of the player who
created it. The baseline is dynamic and shared, as the reference controller's: when a
role's block (the reference's outer iteration) ends with a better team score, that
score becomes the baseline of *every* role's arena, each with its role's incumbent as
the baseline program (``_propagate``: improvements are recomputed and visit statistics
reset); the other roles' programs are then re-scored in the new team before their next
proposal (:mod:`baselines.ahd._search`). Within a block the baseline program, its
score and the goal's threshold stay as they were at the block's start, even after a
proposal improved the team: the reference's prompt shows
``Controller.get_current_best_implementation`` and the tree's ``baseline_cost``, and
``Controller._check_and_update_baseline`` changes both, together, only after the outer
iteration.

Adaptation (ours, docs/baselines/ahd.md): one proposal is one MCTS iteration; the
reference's outer UCB over which function to optimise is replaced by the shared
schedule (ten iterations per role and batch, roles A, B, C); the reference's
contrastive-reflection call (an extra LLM call per turn in its current code) is not
made, as the paper counts no auxiliary call for MOTIF, so the prompt has no
"accumulated design insights" section (the reference fills it from those reflections);
the baseline is propagated to every arena at the end of a role's block that improved
the team, and reset to the re-scored incumbent and its team score at each batch start
and after a within-batch re-score.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from baselines.ahd._search import Candidate, IsolatedSearch, Offer
from relic_learner import prompts

OPERATORS = ("counter", "learning", "innovation")
EXPLORATION = 0.01  # Appendix D: inner exploration
MIX = 0.7  # Appendix D: reward mix
SCALE = 10.0  # Appendix D: reward scale
INVALID = -1.0  # improvement of an invalid program (the reference's -100 %)
RECENT = 4
CHALLENGER_CHARS = 6000  # a failed reply shown as the last challenger is cut to this length

INSTRUCTIONS = {
    "counter": "Counter: target one weakness of the opponent's program or of its score with a distinct, stable "
               "formula.",
    "learning": "Learning: keep one useful pattern of the opponent's program, then change or combine it using the "
                "evaluator's feedback.",
    "innovation": "Innovation: try a compact formula family used neither by the baseline, nor by the opponent, nor "
                  "by the recent attempts.",
}


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(float(np.clip(-x, -50, 50))))


def value(mine: float, theirs: float) -> float:
    """A player's reward: ``MIX sigmoid(SCALE I) + (1 - MIX) sigmoid(SCALE (I - I_opponent))``."""
    return MIX * sigmoid(SCALE * mine) + (1 - MIX) * sigmoid(SCALE * (mine - theirs))


@dataclasses.dataclass
class Node:
    programs: dict[str, Candidate]  # "P1"/"P2" -> that player's current program
    active: str  # the player who moves from this node
    parent: int | None = None
    operator: str = ""
    summary: str = ""
    visits: int = 0
    total: float = 0.0
    tried: list[str] = dataclasses.field(default_factory=list)
    children: list[int] = dataclasses.field(default_factory=list)

    @property
    def q(self) -> float:
        return self.total / self.visits if self.visits else 0.0


def other(player: str) -> str:
    return "P2" if player == "P1" else "P1"


@dataclasses.dataclass
class Arena:
    """One role's competitive tree, the two players' best programs and the dynamic baseline."""

    nodes: list[Node] = dataclasses.field(default_factory=list)
    best: dict[str, Candidate] = dataclasses.field(default_factory=dict)
    baseline: float = 0.0  # the baseline's team score: the goal to beat and the zero of every improvement
    # the program shown as the baseline; it changes only with ``baseline`` (``rebase``)
    baseline_program: Candidate | None = None
    attempts: list[dict] = dataclasses.field(default_factory=list)
    pending: tuple[int, str] | None = None  # (node, player) of the proposal in flight

    def improvement(self, program: Candidate | None) -> float:
        if program is None or not np.isfinite(program.score):  # an invalid program
            return INVALID
        return (program.score - self.baseline) / max(abs(self.baseline), 1e-12)

    def select(self, rng: np.random.Generator) -> tuple[int, str]:
        i = 0
        while True:
            node = self.nodes[i]
            untried = [op for op in OPERATORS if op not in node.tried]
            if untried:
                return i, untried[int(rng.integers(len(untried)))]
            if not node.children:
                return i, OPERATORS[int(rng.integers(len(OPERATORS)))]
            fresh = [c for c in node.children if self.nodes[c].visits == 0]
            if fresh:
                i = fresh[0]
                continue
            n = max(node.visits, 1)
            i = max(node.children, key=lambda c: self.nodes[c].q
                    + EXPLORATION * math.sqrt(math.log(n) / self.nodes[c].visits))

    def expand(self, i: int, operator: str, child: Candidate | None, summary: str, code: str = "") -> None:
        node = self.nodes[i]
        if operator not in node.tried:
            node.tried.append(operator)
        player = node.active
        programs = dict(node.programs)
        if child is not None:
            programs[player] = child
        k = len(self.nodes)
        self.nodes.append(Node(programs, other(player), i, operator, summary))
        node.children.append(k)
        mine = self.improvement(child)
        theirs = self.improvement(programs[other(player)])
        values = {player: value(mine, theirs), other(player): value(theirs, mine)}
        j: int | None = k
        while j is not None:  # each node holds the value of the player who created it
            n = self.nodes[j]
            creator = self.nodes[n.parent].active if n.parent is not None else n.active
            n.visits += 1
            n.total += values[creator]
            j = n.parent
        if child is not None and (player not in self.best or child.score > self.best[player].score):
            self.best[player] = child
        self.attempts.append({"player": player, "operator": operator, "summary": summary,
                              "improvement": mine, "valid": child is not None,
                              "code": child.source if child is not None else code})

    def rebase(self, program: Candidate, baseline: float) -> None:
        """A new baseline, its program and its team score together (the reference's controller
        updates the shown implementation and every tree's baseline cost in one step): improvements
        follow from the stored scores; visit statistics restart."""
        self.baseline_program, self.baseline = program, baseline
        for n in self.nodes:
            n.visits, n.total = 0, 0.0


def _code(c: Candidate) -> str:
    return f"```python\n{c.source.rstrip()}\n```"


class MotifControl(IsolatedSearch):
    """The MOTIF control: same-role P1/P2 competitive MCTS per role, no cross-role round."""

    name = "motif"

    def new_role_state(self, role: str) -> Arena:
        return Arena()

    def programs(self, role: str) -> list[Candidate]:
        seen: dict[int, Candidate] = {}
        for n in self.state.roles[role].nodes:
            for c in n.programs.values():
                seen.setdefault(c.id, c)
        return list(seen.values())

    def _rescore(self, role, batch, reason="batch_start") -> None:
        super()._rescore(role, batch, reason)
        arena: Arena = self.state.roles[role]
        arena.best = {p: max((n.programs[p] for n in arena.nodes), key=lambda c: (c.score, -c.id))
                      for p in ("P1", "P2")}
        incumbent = self.state.incumbent[role]
        arena.rebase(incumbent, incumbent.score)  # after a re-score: the incumbent and the current team's score

    def prompt(self, role: str, h: int, rng: np.random.Generator) -> Offer:
        arena: Arena = self.state.roles[role]
        i, operator = arena.select(rng)
        node = arena.nodes[i]
        player = node.active
        arena.pending = (i, player)
        mine, rival = node.programs[player], arena.best.get(other(player), node.programs[other(player)])
        path, j = [], i
        while j is not None and len(path) < 3:
            if arena.nodes[j].summary:
                path.append(arena.nodes[j].summary)
            j = arena.nodes[j].parent
        recent = arena.attempts[-RECENT:]
        # the baseline's code, its score and the goal move together: a mid-block improvement of the
        # incumbent reaches them at the block's end (``_propagate``), as the reference's controller does
        baseline, base = arena.baseline, arena.baseline_program or self.state.incumbent[role]
        status = (f"team score {mine.score:.6g}" if np.isfinite(mine.score) else "FAILED - the program has errors")
        lines = [
            f"[Baseline implementation] team score {baseline:.6g} (higher is better)", _code(base),
            "",
            f"[Current solution ({player})] {status}; improvement over the baseline: "
            f"{100 * arena.improvement(mine):+.2f}%", _code(mine), "",
            f"[Opponent best] improvement over the baseline: {100 * arena.improvement(rival):+.2f}%", _code(rival), "",
            "[Current search path]", *(f"- {s}" for s in reversed(path)), *([] if path else ["- no moves yet"]), "",
            "[Recent evaluator feedback]",
            *(f"- {a['player']} {a['operator']}: " + (f"{100 * a['improvement']:+.2f}%" if a["valid"] else "invalid")
              + f" - {a['summary'] or '(no summary)'}" for a in recent),
            *([] if recent else ["- no evaluated attempts yet"]),
            "Avoid repeating failed or non-improving formula families.", "",
        ]
        if recent:  # the reference's LAST CHALLENGER section
            last = recent[-1]
            outcome = f"{100 * last['improvement']:+.2f}%" if last["valid"] else "invalid"
            lines += [f"[Last challenger ({outcome})]",
                      f"```python\n{(last.get('code') or '(no code was returned)').rstrip()[:CHALLENGER_CHARS]}\n```",
                      "Compare its concrete formula with the better of the baseline and the opponent before writing "
                      "the next program.", ""]
        lines += [
            "[Instruction]", INSTRUCTIONS[operator], "",
            f"Goal: a program that beats both the baseline's team score ({baseline:.6g}) and the opponent. Change "
            "one decision rule at a time; when the feedback is negative, return to the baseline or to the best "
            "positive idea. First give a one-sentence summary of the change inside braces { }, then the complete "
            "function, starting with the exact target signature, and nothing after it.",
        ]
        messages = [{"role": "system", "content": prompts.SYSTEM},
                    {"role": "user", "content": f"{self.targets[role]}\n\n" + "\n".join(lines)}]
        return Offer(messages, operator, (mine.id, rival.id))

    def accept(self, role: str, offer: Offer, child: Candidate | None, rng: np.random.Generator) -> None:
        arena: Arena = self.state.roles[role]
        if offer.operator == "seed":
            arena.nodes.append(Node({"P1": child, "P2": child}, "P1"))
            arena.best = {"P1": child, "P2": child}
            arena.baseline_program, arena.baseline = child, child.score
            return
        i, _ = arena.pending
        arena.pending = None
        arena.expand(i, offer.operator, child, child.thought if child is not None else "", self.attempt)
        if self.state.h == self.config.proposals - 1:  # the role's block ends: the controller's baseline check
            self._propagate(role)

    def _propagate(self, role: str) -> None:
        """The team improved in ``role``'s block: the new baseline goes to every role's arena.

        The reference's controller, after an outer iteration that beat the baseline, calls
        ``update_baseline`` on every tree. The other roles' programs were scored with the old
        team; they are re-scored before their next proposal (``team_changed``), which
        rebases their arenas on their own fresh scores.
        """
        s = self.state
        if s.incumbent_score is None or not s.incumbent_score > s.roles[role].baseline:
            return
        for r in self.roles:  # each arena's baseline program is its role's incumbent, in the new team
            s.roles[r].rebase(s.incumbent[r], s.incumbent_score)
        self.run.event("baseline", b=s.b, role=role, baseline=s.incumbent_score, arenas=list(self.roles))
