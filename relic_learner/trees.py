"""Private program trees with the two-level UCT of Section 4 and Appendix C.2.

Each role owns a :class:`PrivateTree`. A node holds a program, its visit count
``N``, its value ``Q`` (the contextual marginal gain measured when it was created,
Eq. 7; never replaced by descendants' values) and per-operator statistics
``N_op``/``Q_op`` (``V_op`` counts the valid attempts, over which Eq. 13 averages).
Selection is sequential:

1. descend from the root while the current node is not *expandable* (it has an
   untried available operator, or no child), following the child that maximises
   ``U_node`` (Eq. 4; unvisited children first), until an expandable node or the
   depth limit;
2. at that node, try every available operator once, then pick by ``U_op`` (Eq. 5).

Ties go to the earlier child / the operator listed first, so a run is deterministic.
Everything here is plain data (JSON-able through :meth:`PrivateTree.to_dict`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

OPERATORS = ("lift", "bridge", "reflect")
MAX_DEPTH = 8  # Appendix C.2: maximum private-tree depth eight


@dataclasses.dataclass
class Node:
    """One program in a private tree.

    ``operator`` and ``public_id`` record how the node was made (``None`` for the
    root; ``public_id`` is the public principle a Bridge used), ``batch`` when.
    """

    id: int
    source: str
    parent: int | None
    depth: int
    N: int = 1
    Q: float = 0.0
    N_op: dict[str, int] = dataclasses.field(default_factory=dict)
    Q_op: dict[str, float] = dataclasses.field(default_factory=dict)
    V_op: dict[str, int] = dataclasses.field(default_factory=dict)  # valid attempts: Eq. 13's mean runs over these
    children: list[int] = dataclasses.field(default_factory=list)
    operator: str | None = None
    public_id: int | None = None
    batch: int = 0
    score: float | None = None  # absolute mixed-batch team score at creation
    gain: float = 0.0  # Q as measured at creation; revalidation resets Q, never this


def node_uct(child: Node, parent: Node, c: float) -> float:
    """Eq. 4: ``Q(v) + c * sqrt(ln N(u) / N(v))``; ``inf`` for an unvisited child."""
    if child.N == 0:
        return math.inf
    return child.Q + c * math.sqrt(math.log(max(parent.N, 1)) / child.N)


def operator_uct(node: Node, operator: str, available: Sequence[str], c: float) -> float:
    """Eq. 5 over the available operators; ``inf`` for one not yet tried at ``node``."""
    n = node.N_op.get(operator, 0)
    if n == 0:
        return math.inf
    total = sum(node.N_op.get(o, 0) for o in available)
    return node.Q_op.get(operator, 0.0) + c * math.sqrt(math.log(total) / n)


class PrivateTree:
    """A role's private program tree, rooted at its human seed."""

    def __init__(self, role: str, seed_source: str, *, c_node: float = 1.0, c_op: float = 1.0, max_depth: int = MAX_DEPTH):
        if max_depth < 1:
            raise ValueError(f"max_depth must be >= 1, got {max_depth}")
        self.role = role
        self.c_node, self.c_op, self.max_depth = c_node, c_op, max_depth
        self.nodes: list[Node] = [Node(0, seed_source, None, 0)]

    @property
    def root(self) -> Node:
        return self.nodes[0]

    def expandable(self, node: Node, available: Sequence[str]) -> bool:
        if node.depth >= self.max_depth:
            return False
        return any(node.N_op.get(o, 0) == 0 for o in available) or not node.children

    def select_node(self, available: Sequence[str]) -> Node:
        """Descend by ``U_node`` to the first expandable node (Appendix C.2).

        A node whose children all sit at the depth limit is expanded itself: it is
        the deepest place where a child can still be added.
        """
        node = self.root
        while not self.expandable(node, available):
            children = [self.nodes[i] for i in node.children if self.nodes[i].depth < self.max_depth]
            if not children:
                break
            node = max(children, key=lambda ch: node_uct(ch, node, self.c_node))  # first max wins
        return node

    def select_operator(self, node: Node, available: Sequence[str]) -> str:
        """Each available operator once (in the order given), then ``U_op``."""
        if not available:
            raise ValueError("no operator is available")
        return max(available, key=lambda o: operator_uct(node, o, available, self.c_op))

    def record_failure(self, node: Node, operator: str) -> None:
        """An invalid or failed proposal: the attempt counts, nothing else (Appendix C.2).

        "[It] increments the attempted-operator count but creates no child and supplies
        no synthetic reward": ``N_op`` grows (Eq. 5's exploration term sees the
        attempt) and ``Q_op``, the mean over valid attempts, is untouched, so the
        order of failures and successes does not change it.
        """
        node.N_op[operator] = node.N_op.get(operator, 0) + 1

    def add_child(
        self, parent: Node, source: str, gain: float, operator: str, *, batch: int, public_id: int | None = None,
        score: float | None = None,
    ) -> Node:
        """Insert a valid candidate: ``Q = gain`` (Eq. 7), ancestors' ``N`` + 1, Eq. 13 for the operator."""
        child = Node(len(self.nodes), source, parent.id, parent.depth + 1, N=1, Q=float(gain), operator=operator,
                     public_id=public_id, batch=batch, score=score, gain=float(gain))
        self.nodes.append(child)
        parent.children.append(child.id)
        ancestor: Node | None = parent
        while ancestor is not None:
            ancestor.N += 1
            ancestor = self.nodes[ancestor.parent] if ancestor.parent is not None else None
        parent.N_op[operator] = parent.N_op.get(operator, 0) + 1
        v = parent.V_op.get(operator, 0) + 1
        parent.V_op[operator] = v
        q = parent.Q_op.get(operator, 0.0)
        parent.Q_op[operator] = q + (float(gain) - q) / v  # Eq. 13, a mean over valid attempts (see record_failure)
        return child

    def new_nodes(self, batch: int) -> list[Node]:
        return [n for n in self.nodes if n.batch == batch and n.parent is not None]

    def successful(self) -> list[Node]:
        """Nodes whose gain was positive when created: the "previously successful programs" of C.1.

        Their creation gain, not ``Q``: revalidation resets the winner's ``Q`` to 0, and
        a program that once won must stay a candidate after it loses incumbency.
        """
        return [n for n in self.nodes if n.parent is not None and n.gain > 0]

    # -- persistence ---------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "role": self.role, "c_node": self.c_node, "c_op": self.c_op, "max_depth": self.max_depth,
            "nodes": [dataclasses.asdict(n) for n in self.nodes],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PrivateTree:
        tree = cls(data["role"], data["nodes"][0]["source"], c_node=data["c_node"], c_op=data["c_op"],
                   max_depth=data["max_depth"])
        tree.nodes = [Node(**n) for n in data["nodes"]]
        return tree
