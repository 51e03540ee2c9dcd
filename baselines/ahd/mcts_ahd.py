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
- **s1**: the programs on the path from the node to the root; one inspired by all.

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
reference's from-scratch ``i1``) and the first three proposals are root ``e1``
expansions (the reference's four initial nodes). The reference retries a failed
expansion up to three times and asks the model to re-describe every new program
(``post_thought``); both would spend calls the shared budget does not have (the paper
counts no auxiliary call for MCTS-AHD), so a failed proposal is charged and the node
is not expanded, and the braced sentence of the reply is the program's description.
An ``s1`` with a one-node path is skipped without a call, as the reference skips it.
``Q`` is normalised by the smallest and largest ``Q`` seen (the reference starts the
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
INITIAL = 4  # the reference's initial depth-1 nodes (seed + 3 e1)
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
            if tree.made < INITIAL - 1:
                return -1, "e1"
            if not tree.queue:
                tree.queue = tree.plan(max(1.0 - tree.made / total, 0.0))
            node, op = tree.queue.pop(0)
            if op == "s1" and len(tree.path(node)) < 2:
                continue  # the reference skips s1 on a one-node path, without a call
            return node, op

    def prompt(self, role: str, h: int, rng: np.random.Generator) -> Offer:
        tree: Tree = self.state.roles[role]
        node, op = self._next_action(tree)
        tree.made += 1
        target = self.targets[role]
        if op == "e1":
            pool = [tree.nodes[c].program for c in tree.root_children]
            if tree.made <= INITIAL - 1:  # initial nodes: 2..m of the depth-1 programs, rank-selected
                k = int(rng.integers(2, MAX_E1_PARENTS + 1))
                parents = Population(list(pool)).select(min(k, len(pool)), rng)
            else:  # one random program from each depth-1 subtree
                parents = [tree.nodes[int(rng.choice(tree.nodes[c].subtree))].program for c in tree.root_children]
            return Offer(e1(target, parents), "e1", tuple(p.id for p in parents))
        here = tree.nodes[node].program
        if op == "e2":
            others = Population([c for c in tree.elite.members if c.id != here.id] or [here])
            elite = others.select(1, rng)[0]
            return Offer(e2(target, elite, here), "e2", (elite.id, here.id))
        if op == "s1":
            path = [tree.nodes[i].program for i in reversed(tree.path(node))]
            return Offer(s1(target, path), "s1", tuple(p.id for p in path))
        return Offer((m1 if op == "m1" else m2)(target, here), op, (here.id,))

    def accept(self, role: str, offer: Offer, child: Candidate | None, rng: np.random.Generator) -> None:
        tree: Tree = self.state.roles[role]
        if offer.operator == "seed":
            tree.add(child, None)
            return
        if child is None:
            return
        if offer.operator == "e1":  # a new depth-1 node, under the virtual root
            tree.add(child, None)
            return
        expanded = offer.parents[-1]  # the node the action expanded is always the last parent
        index = next(i for i, n in enumerate(tree.nodes) if n.program.id == expanded)
        tree.add(child, index)
