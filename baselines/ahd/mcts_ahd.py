"""MCTS-AHD-ind.: Monte Carlo tree search over programs (Zheng et al., ICML 2025), one tree per role.

What it keeps, per role: a tree whose virtual root has the role's seed and the first
``e1`` programs as children; every other node is a program made from its parent by an
expansion; each node has its visits, its ``Q`` and (depth-1 nodes) its subtree; plus an
elite set of at most 10 programs (EoH's greedy management). What it asks the model,
worded after MCTS-AHD's prompts (our own text, on RELIC's shared system message and
target block; programs are shown with their contextual team score, higher is better):

- **e1** (at the root): several programs; one with a totally different form;
- **e2**: an elite program and the node; one with the node's form inspired by the elite;
- **m1**: the node; a modified version with new mechanisms;
- **m2**: the node; different parameter settings;
- **s1**: the programs on the path from the node to the root, one per description,
  worst first; one inspired by all.

The initial tree, as the reference's ``MCTS_AHD.run``: up to four depth-1 nodes, the
first (the reference's ``i1``; here the seed) and three ``e1`` offspring, each from 2
to 5 parents drawn uniformly *with replacement* among the depth-1 nodes so far
(``parent_selection_e1``). Duplicates are rejected as there: an ``e1`` child whose score
equals a depth-1 node's (``check_duplicate_obj``), and any child whose code equals a
program of its pool (``check_duplicate``: the programs shown for ``e1`` and ``s1``,
the elite set for ``e2``, ``m1`` and ``m2``), is charged but becomes no node (a
``discarded`` event).

The search, as the reference code does it (``zz1358m/MCTS-AHD-master``, read, not
copied): each iteration descends from the root by UCT,
``(Q - Q_min) / (Q_max - Q_min) + lambda * sqrt(ln(N_parent + 1) / N_node)`` with
``lambda = 0.1 * (remaining proposals / all proposals)`` (exploration 0.1, decaying);
progressive widening expands a node on the path when ``int(N ** 0.5) > children``
(``k = 2`` expansion kinds: ``e1`` at the root, ``e2`` elsewhere); at the leaf (or at
depth 10) the actions ``e2, m1, m1, m2, m2, s1`` (weights 0, 1, 2, 2, 1 for e1, e2,
m1, m2, s1) expand it. A new node has one visit and ``Q = `` its score; back-propagation
sets every ancestor's ``Q`` to its best child's ``Q`` (discount 1) and adds one visit.

**Adaptation (ours, docs/baselines/ahd.md).** One proposal is one expansion: an
iteration's expansions are queued and consumed one per proposal, ten per role and
batch, across batch boundaries. The seed is the first depth-1 node (instead of the
reference's from-scratch ``i1``), and the first three proposals are the initial ``e1``
expansions whatever their outcome: the reference's ``get_algorithm`` retries each until
it is valid and new, without bound, which the shared budget cannot afford (a role whose
programs all tie in the current team, as one beside a dominating teammate's can, would
spend its whole budget there), so an invalid or duplicate initial ``e1`` leaves the root
with fewer nodes, and progressive widening adds ``e1`` nodes later as in the reference.
The reference retries a failed expansion after the initial phase up to three times and
asks the model to re-describe every new program (``post_thought``); both would spend
calls the shared budget does not have (the paper counts no auxiliary call for
MCTS-AHD), so a failed or duplicate proposal is charged and the node is not expanded,
and the braced sentence of the reply is the program's description (``s1``
de-duplicates by it, by the code when a reply gave none). An ``s1`` whose
de-duplicated path has one program is skipped without a call, as the reference skips
it. ``Q`` is normalised by the smallest and largest ``Q`` seen (the reference starts the
minimum at 0, which equals the minimum for its costs, ``Q = -cost <= 0``; our scores
can be positive). At each batch start every node is re-scored on the new batch and
every ``Q`` recomputed bottom-up.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from baselines.ahd._search import Candidate, IsolatedSearch, Offer
from baselines.ahd.eoh import Population
from relic_learner import prompts

MAX_DEPTH = 10  # Appendix D: tree depth 10
EXPLORATION = 0.1  # Appendix D: exploration 0.1 (lambda_0)
ALPHA = 0.5  # Appendix D: progressive widening alpha
ELITE = 10  # the reference's elite set size
INITIAL = 4  # the reference's initial depth-1 nodes N_I (its i1 and 3 e1; ours the seed and 3 e1)
LEAF_ACTIONS = ("e2", "m1", "m1", "m2", "m2", "s1")  # weights [0, 1, 2, 2, 1] over e1, e2, m1, m2, s1
MAX_E1_PARENTS = 5  # the reference's m for e1


@dataclasses.dataclass
class Node:
    program: Candidate
    parent: int | None  # node index; None for depth-1 nodes (children of the virtual root)
    depth: int
    Q: float
    visits: int = 1
    children: list[int] = dataclasses.field(default_factory=list)
    subtree: list[int] = dataclasses.field(default_factory=list)  # depth-1 nodes: every node below, itself first


@dataclasses.dataclass
class Tree:
    """One role's MCTS-AHD state. Index -1 in ``queue`` means the virtual root."""

    nodes: list[Node] = dataclasses.field(default_factory=list)
    root_children: list[int] = dataclasses.field(default_factory=list)
    root_visits: int = 0
    elite: Population = dataclasses.field(default_factory=Population)
    queue: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    made: int = 0

    def q_range(self) -> tuple[float, float]:
        qs = [n.Q for n in self.nodes if np.isfinite(n.Q)]
        return (min(qs), max(qs)) if qs else (0.0, 1.0)

    def uct(self, i: int, parent_visits: int, remaining: float) -> float:
        node = self.nodes[i]
        lo, hi = self.q_range()
        spread = (node.Q - lo) / (hi - lo) if hi > lo else 0.0
        return spread + EXPLORATION * remaining * math.sqrt(math.log(parent_visits + 1) / node.visits)

    def add(self, program: Candidate, parent: int | None) -> int:
        depth = 1 if parent is None else self.nodes[parent].depth + 1
        i = len(self.nodes)
        self.nodes.append(Node(program, parent, depth, program.score))
        if parent is None:
            self.root_children.append(i)
            self.nodes[i].subtree.append(i)
        else:
            self.nodes[parent].children.append(i)
        self._backpropagate(i)
        self.elite.members.append(program)
        self.elite.manage(ELITE)
        return i

    def _backpropagate(self, i: int) -> None:
        parent = self.nodes[i].parent
        while parent is not None:
            p = self.nodes[parent]
            p.Q = max(self.nodes[c].Q for c in p.children)
            p.visits += 1
            if p.parent is None:
                p.subtree.append(i)
            parent = p.parent
        self.root_visits += 1

    def requalify(self) -> None:
        """Every ``Q`` from the programs' current scores, leaves up (a node's ``Q`` is its best child's)."""
        for i in reversed(range(len(self.nodes))):  # children always come after their parent
            n = self.nodes[i]
            n.Q = max((self.nodes[c].Q for c in n.children), default=n.program.score)

    def path(self, i: int) -> list[int]:
        out = []
        while i is not None:
            out.append(i)
            i = self.nodes[i].parent
        return out

    def s1_programs(self, i: int) -> list[Candidate]:
        """The programs ``s1`` shows for node ``i``, as the reference's ``population_management_s1``
        builds them: the path from the node up to its depth-1 ancestor, one program per description
        (the deepest of a description kept; the code when a program has none), worst score first."""
        seen: set[str] = set()
        unique = []
        for j in self.path(i):
            c = self.nodes[j].program
            key = c.thought or c.source
            if key not in seen:
                seen.add(key)
                unique.append(c)
        return sorted(unique, key=lambda c: c.score)  # stable: ties stay deepest first, as heapq.nlargest

    def plan(self, remaining: float) -> list[tuple[int, str]]:
        """One MCTS-AHD iteration: widening expansions on the UCT path, then the leaf's actions."""
        actions: list[tuple[int, str]] = []
        children, visits, cur, depth = self.root_children, self.root_visits, -1, 0
        while children and depth < MAX_DEPTH:
            scores = [self.uct(c, visits, remaining) for c in children]
            chosen = children[int(np.argmax(scores))]
            if int(visits ** ALPHA) > len(children):
                actions.append((cur, "e1" if cur == -1 else "e2"))
            cur = chosen
            node = self.nodes[cur]
            children, visits, depth = node.children, node.visits, node.depth
        actions.extend((cur, op) for op in LEAF_ACTIONS)
        return actions


def _show(programs: list[Candidate]) -> str:
    return "\n\n".join(
        f"No. {k + 1} algorithm: {c.thought or '(no description)'}\nCode:\n```python\n{c.source.rstrip()}\n```\n"
        f"Team score (higher is better): {c.score:.6g}"
        for k, c in enumerate(programs)
    )


_DESCRIBE = ("describe the design idea and main steps of your algorithm in one sentence, inside braces { } and "
             "outside the code")
_IMPLEMENT = ("implement it as the target function: the complete function, starting with the exact target "
              "signature, and nothing after it.")


def _messages(target: str, payload: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": prompts.SYSTEM}, {"role": "user", "content": f"{target}\n\n{payload}"}]


def e1(target: str, parents: list[Candidate]) -> list[dict[str, str]]:
    return _messages(target, "\n".join([
        f"I have {len(parents)} existing algorithms:", _show(parents), "",
        "Create a new algorithm with a totally different form from these: try different structures, flows or "
        f"algorithms. It should reach a higher team score. First, {_DESCRIBE}. Next, {_IMPLEMENT}",
    ]))


def e2(target: str, elite: Candidate, node: Candidate) -> list[dict[str, str]]:
    return _messages(target, "\n".join([
        "I have 2 existing algorithms:", _show([elite, node]), "",
        "Create a new algorithm with a form similar to No. 2 and inspired by No. 1, reaching a higher team score "
        "than both. First, list the ideas in No. 1 that may explain its performance. Second, based on them, "
        f"{_DESCRIBE}, building on No. 2. Third, {_IMPLEMENT}",
    ]))


def m1(target: str, node: Candidate) -> list[dict[str, str]]:
    return _messages(target, "\n".join([
        "I have one algorithm:", _show([node]), "",
        "Create a new algorithm with a different form that can be a modified version of it: introduce novel "
        f"mechanisms, new equations or program segments. First, {_DESCRIBE}. Next, {_IMPLEMENT}",
    ]))


def m2(target: str, node: Candidate) -> list[dict[str, str]]:
    return _messages(target, "\n".join([
        "I have one algorithm:", _show([node]), "",
        "Identify its main parameters and create a new algorithm with different parameter settings in its "
        f"equations. First, {_DESCRIBE}. Next, {_IMPLEMENT}",
    ]))


def s1(target: str, path: list[Candidate]) -> list[dict[str, str]]:
    return _messages(target, "\n".join([
        f"I have {len(path)} existing algorithms:", _show(path), "",
        "Create a new algorithm inspired by all of them, reaching a higher team score than any. First, list the "
        f"ideas in them that clearly help. Second, based on those ideas, {_DESCRIBE}. Third, {_IMPLEMENT}",
    ]))


class MctsAhdInd(IsolatedSearch):
    """MCTS-AHD-ind.: MCTS-AHD's program tree, one per role (see the module docstring)."""

    name = "mcts_ahd"

    def new_role_state(self, role: str) -> Tree:
        return Tree()

    def programs(self, role: str) -> list[Candidate]:
        return [n.program for n in self.state.roles[role].nodes]

    def _rescore(self, role, batch, reason="batch_start") -> None:
        super()._rescore(role, batch, reason)
        tree: Tree = self.state.roles[role]
        tree.requalify()
        tree.elite.manage(ELITE)

    def _next_action(self, tree: Tree) -> tuple[int, str]:
        total = self.config.batches * self.config.proposals
        while True:
            if tree.made < INITIAL - 1:  # the initial e1 proposals, one per initial node after the seed
                return -1, "e1"
            if not tree.queue:
                tree.queue = tree.plan(max(1.0 - tree.made / total, 0.0))
            node, op = tree.queue.pop(0)
            if op == "s1" and len(tree.s1_programs(node)) < 2:
                continue  # the reference skips s1 when its de-duplicated path has one program, without a call
            return node, op

    def prompt(self, role: str, h: int, rng: np.random.Generator) -> Offer:
        tree: Tree = self.state.roles[role]
        initial = tree.made < INITIAL - 1
        node, op = self._next_action(tree)
        tree.made += 1
        target = self.targets[role]
        if op == "e1":
            pool = [tree.nodes[c].program for c in tree.root_children]
            if initial:  # the reference's get_algorithm: 2..m parents, uniform with replacement (parent_selection_e1)
                k = min(int(rng.integers(2, MAX_E1_PARENTS + 1)), len(pool))
                parents = [pool[int(j)] for j in rng.integers(len(pool), size=k)]
            else:  # one random program from each depth-1 subtree
                parents = [tree.nodes[int(rng.choice(tree.nodes[c].subtree))].program for c in tree.root_children]
            return Offer(e1(target, parents), "e1", tuple(p.id for p in parents))
        here = tree.nodes[node].program
        if op == "e2":
            others = Population([c for c in tree.elite.members if c.id != here.id] or [here])
            elite = others.select(1, rng)[0]
            return Offer(e2(target, elite, here), "e2", (elite.id, here.id))
        if op == "s1":
            path = tree.s1_programs(node)
            return Offer(s1(target, path), "s1", tuple(p.id for p in path))
        return Offer((m1 if op == "m1" else m2)(target, here), op, (here.id,))

    def accept(self, role: str, offer: Offer, child: Candidate | None, rng: np.random.Generator) -> None:
        tree: Tree = self.state.roles[role]
        if offer.operator == "seed":
            tree.add(child, None)
            return
        if child is None:
            return
        if offer.operator == "e1" and any(tree.nodes[c].program.score == child.score for c in tree.root_children):
            # the reference's check_duplicate_obj against the root's children (not retried, see the docstring)
            return self._discard(role, child, "a depth-1 program has its score")
        # the reference's check_duplicate(pop, code): e1 and s1 against the programs shown, the
        # others against the elite set
        elite = offer.operator in ("e2", "m1", "m2")
        pool = [c.id for c in tree.elite.members] if elite else offer.parents
        if any(tree.nodes[i].program.source == child.source for i in self._indices(tree, pool)):
            return self._discard(role, child, "the code of an elite program" if elite else "the code of a program shown")
        if offer.operator == "e1":  # a new depth-1 node, under the virtual root
            tree.add(child, None)
            return
        indices = self._indices(tree, offer.parents)
        # the node the action expanded: the last parent (e2, m1, m2), the deepest on the path (s1)
        index = max(indices, key=lambda i: tree.nodes[i].depth) if offer.operator == "s1" else indices[-1]
        tree.add(child, index)

    @staticmethod
    def _indices(tree: Tree, ids) -> list[int]:
        where = {n.program.id: i for i, n in enumerate(tree.nodes)}
        return [where[k] for k in ids if k in where]

    def _discard(self, role: str, child: Candidate, why: str) -> None:
        """A valid offspring the reference rejects as a duplicate: charged, not a node (no retry: the budget)."""
        self.run.event("discarded", b=self.state.b, role=role, child=child.id, operator=child.operator,
                       reason=f"duplicate: {why}")
