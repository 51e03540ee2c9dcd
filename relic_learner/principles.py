"""Textual knowledge: revealed-principle archives and the public principle tree (Appendix C.4).

* :class:`Archive` - a role's append-only store of principles revealed by teammates;
  Lift samples from it.
* :class:`PublicTree` - principles with contributor, retrieval count ``N`` and
  endorsement ``E``; lineage edges (a principle distilled from a Bridge-derived
  program hangs below the principle that Bridge used); retrieval by public UCT
  (Eq. 11: untried first, never the recipient's own); endorsement (Eq. 12); pruning
  of weak leaves. With ``flat=True`` it is the "no public tree" ablation: a flat
  pool, uniform choice, no pruning.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

import numpy as np

PRINCIPLE_TYPES = ("STRATEGY", "PATTERN", "COORDINATION")
ROOT = 0  # the nonselectable system root of the public tree
PRUNE_THRESHOLD = 0.5
MIN_PUBLIC_NODES = 5
_ENTRY = re.compile(r"TYPE:\s*\**\s*(STRATEGY|PATTERN|COORDINATION)\s*\**\s*PRINCIPLE:\s*(.+?)(?=TYPE:|\Z)", re.S | re.I)


def parse_principles(text: str, limit: int = 2) -> list[tuple[str, str]]:
    """``(TYPE, PRINCIPLE)`` entries of a distillation reply, at most ``limit``.

    A reply without the format yields one ``STRATEGY`` entry holding its text, so a
    loosely formatted but useful answer is not lost; an empty reply yields nothing.

    >>> parse_principles("TYPE: PATTERN\\nPRINCIPLE: Move late when the gain is small.")
    [('PATTERN', 'Move late when the gain is small.')]
    """
    entries = [(t.upper(), " ".join(p.split())) for t, p in _ENTRY.findall(text or "")]
    entries = [(t, p) for t, p in entries if p]
    if not entries and text and text.strip():
        entries = [("STRATEGY", " ".join(text.split())[:1000])]
    return entries[:limit]


@dataclasses.dataclass
class ArchiveEntry:
    contributor: str
    text: str
    batch: int


class Archive:
    """A role's append-only archive of revealed teammate principles (feeds Lift)."""

    def __init__(self) -> None:
        self.entries: list[ArchiveEntry] = []

    def append(self, contributor: str, text: str, batch: int) -> None:
        self.entries.append(ArchiveEntry(contributor, text, batch))

    def sample(self, rng: np.random.Generator) -> ArchiveEntry:
        if not self.entries:
            raise ValueError("the archive is empty: Lift is not available")
        return self.entries[int(rng.integers(len(self.entries)))]

    def __len__(self) -> int:
        return len(self.entries)

    def to_list(self) -> list[dict[str, Any]]:
        return [dataclasses.asdict(e) for e in self.entries]

    @classmethod
    def from_list(cls, data: list[dict[str, Any]]) -> Archive:
        archive = cls()
        archive.entries = [ArchiveEntry(**e) for e in data]
        return archive


@dataclasses.dataclass
class PublicNode:
    """A public principle. ``origin`` is ``"distill"`` or ``"cross_distill"`` (``"root"`` for node 0)."""

    id: int
    text: str
    type: str
    contributor: str
    parent: int | None
    batch: int
    origin: str
    N: int = 0
    E: float = 0.0
    children: list[int] = dataclasses.field(default_factory=list)
    pruned: bool = False


class PublicTree:
    """The public principle tree shared by all roles."""

    def __init__(self, *, c_pub: float = 1.0, flat: bool = False):
        self.c_pub = c_pub
        self.flat = flat
        self.nodes: list[PublicNode] = [PublicNode(ROOT, "", "", "", None, 0, "root")]

    def live(self) -> list[PublicNode]:
        """Selectable nodes (the system root excluded)."""
        return [n for n in self.nodes[1:] if not n.pruned]

    def add(self, text: str, kind: str, contributor: str, batch: int, origin: str, parent: int | None = None) -> PublicNode:
        """Insert a principle below ``parent`` (the root when ``None`` or pruned, or in a flat pool)."""
        if parent is None or self.flat or parent >= len(self.nodes) or self.nodes[parent].pruned:
            parent = ROOT
        node = PublicNode(len(self.nodes), text, kind, contributor, parent, batch, origin)
        self.nodes.append(node)
        self.nodes[parent].children.append(node.id)
        return node

    def eligible(self, role: str) -> list[PublicNode]:
        """Nodes a role may retrieve: never its own contributions."""
        return [n for n in self.live() if n.contributor != role]

    def select(self, role: str, rng: np.random.Generator, *, uniform: bool = False) -> PublicNode:
        """Eq. 11: untried eligible nodes first (oldest first), then public UCT.

        Uniform among eligible nodes when flat, or with ``uniform=True`` (Mislead without
        principle selection: endorsement no longer steers retrieval).
        """
        pool = self.eligible(role)
        if not pool:
            raise ValueError(f"no public principle is eligible for role {role}: Bridge is not available")
        if self.flat or uniform:
            return pool[int(rng.integers(len(pool)))]
        untried = [n for n in pool if n.N == 0]
        if untried:
            return untried[0]
        total = sum(n.N for n in pool)
        return max(pool, key=lambda n: n.E / n.N + self.c_pub * math.sqrt(math.log(total) / n.N))

    def retrieve(self, node_id: int) -> None:
        """Eq. 12, first line: every Bridge retrieval counts."""
        self.nodes[node_id].N += 1

    def endorse(self, node_id: int, gain: float) -> None:
        """Eq. 12, second line: only positive contextual gain endorses."""
        self.nodes[node_id].E += max(0.0, float(gain))

    def prune(self, threshold: float = PRUNE_THRESHOLD, keep: int = MIN_PUBLIC_NODES) -> list[int]:
        """Remove leaves with endorsement below ``threshold`` while more than ``keep`` nodes remain.

        Only the nodes that are leaves when pruning starts are considered (a parent
        whose last child goes now is a leaf at the next pruning, not this one), and
        only those retrieved at least once (``N >= 1``): C.4 values a principle "by
        measured downstream use", and a principle nobody has retrieved has no
        measurement yet (pruning runs right after distill adds fresh ones). The
        weakest go first (lowest ``E``, then oldest). Internal nodes stay: they carry
        the lineage of surviving descendants. Returns the pruned ids.
        """
        if self.flat:
            return []
        live = self.live()
        leaves = [n for n in live if not any(not self.nodes[c].pruned for c in n.children)]
        weak = sorted((n for n in leaves if n.N >= 1 and n.E < threshold), key=lambda n: (n.E, n.id))
        removed = [n.id for n in weak[: max(0, len(live) - keep)]]
        for node_id in removed:
            self.nodes[node_id].pruned = True
        return removed

    def summary(self, limit: int = 12) -> str:
        """The existing principles as prompt text (strongest endorsement first)."""
        live = sorted(self.live(), key=lambda n: (-n.E, n.id))[:limit]
        if not live:
            return "(none yet)"
        return "\n".join(f"- [{n.type}] {n.text}" for n in live)

    def to_dict(self) -> dict[str, Any]:
        return {"c_pub": self.c_pub, "flat": self.flat, "nodes": [dataclasses.asdict(n) for n in self.nodes]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PublicTree:
        tree = cls(c_pub=data["c_pub"], flat=data["flat"])
        tree.nodes = [PublicNode(**n) for n in data["nodes"]]
        return tree
