"""The offline backend: no endpoint, no model; AST mutation of the parent program.

It keeps every command runnable without an LLM (tests, CI, a laptop on a train) and
says so loudly: a WARNING at construction, and :meth:`OfflineClient.describe` and every
reply name it as "not an LLM". Its proposals are random mutations (see
:mod:`relic_learner.llm.mutate`); its auxiliary answers are canned principles in the
paper's ``TYPE:``/``PRINCIPLE:`` format (Appendix C.4), chosen from the kind of edit
that produced the program when this client made it.
"""

from __future__ import annotations

import hashlib
import logging
import random
import threading
import time
from typing import Any

from relic_learner.llm.base import PROPOSAL, Completion
from relic_learner.llm.cache import canonical_json
from relic_learner.llm.client import LLMClient
from relic_learner.llm.ledger import CallLedger
from relic_learner.llm.mutate import Mutation, find_program, mutate_program, normalize

logger = logging.getLogger(__name__)

BANNER = "OFFLINE AST mutation backend (no LLM)"
MODEL_NAME = "offline"

# Principles carry no code or variable names, as the distill prompt demands.
_PRINCIPLES = {
    "constant": (
        "STRATEGY",
        "Treat the weights and thresholds of a decision rule as quantities to tune, not as fixed design. "
        "A moderate change to one threshold shifted when the agent acts and changed the team's result; "
        "adjust such quantities in small steps before changing the rule's structure.",
    ),
    "operator": (
        "PATTERN",
        "Check the direction of every comparison and of how two signals are combined. "
        "Whether a boundary case triggers action, or whether one signal adds to or offsets another, "
        "changes which situations the agent handles, so decide these boundaries deliberately.",
    ),
    "term": (
        "COORDINATION",
        "Let the aggressiveness of a decision respond to an aggregate of what the agent observes, "
        "such as the typical level of a local signal, instead of a fixed setting. "
        "A rule that adapts to the current situation stays useful as teammates change what they cover.",
    ),
    None: (
        "STRATEGY",
        "Prefer small, local revisions that keep the invariants of a working rule while changing one "
        "aspect at a time. Keep revisions that measurably help the team and discard the rest.",
    ),
}


class OfflineClient(LLMClient):
    """A stand-in backend that mutates programs on the AST; it is not an LLM.

    Proposal calls: the last program in the user messages (a fenced Python block, or
    source from the last ``def``) is the parent; the reply is a short note plus the
    mutant in a fenced ``python`` block, with the same function name and parameters.
    With no program in the prompt the reply says so and holds no code (the caller's
    intake then rejects it, as it would an LLM's empty-handed answer).

    Auxiliary calls: one ``TYPE: ...`` / ``PRINCIPLE: ...`` entry; a ``"reveal"`` tag
    gets a plain two-sentence description instead, as that prompt asks.

    Replies are deterministic given ``seed``, the messages and the call's position: the
    ``cache_salt`` when the caller gives one, else this client's call index. Tokens are
    reported as 0: nothing was billed.

    Parameters
    ----------
    seed:
        Seed of the mutation choices.
    ledger:
        A ledger to count into (e.g. restored from a checkpoint); default a fresh one.

    Examples
    --------
    >>> client = OfflineClient(seed=1)
    >>> msg = "```python\\ndef f(x):\\n    return 0.5 * x\\n```"
    >>> reply = client.complete([{"role": "user", "content": msg}], "proposal")
    >>> "def f(x):" in reply.text, reply.model, client.ledger.calls["proposal"]
    (True, 'offline', 1)
    """

    def __init__(self, seed: int = 0, *, ledger: CallLedger | None = None):
        super().__init__(ledger=ledger)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"seed must be an int; got {type(seed).__name__}")
        self.seed = seed
        self._lock = threading.Lock()
        self._index = 0
        self._made: dict[str, Mutation] = {}  # normalized mutant source -> the edit that made it
        logger.warning(
            "%s: no language model is called. Proposals are random AST mutations of the parent program and "
            "principles are canned text; results from this backend are not LLM results.",
            BANNER,
        )

    def export_state(self) -> dict[str, Any]:
        """The call index and every mutant made with its edit: a resumed run's principles depend on them."""
        with self._lock:
            made = {source: [m.kind, m.detail] for source, m in self._made.items()}
            return {"index": self._index, "made": made}

    def restore_state(self, state: dict[str, Any]) -> None:
        with self._lock:
            self._index = int(state.get("index", 0))
            self._made = {source: Mutation(kind, detail, source) for source, (kind, detail) in state.get("made", {}).items()}

    def describe(self) -> str:
        return f"{BANNER}: proposals are random AST mutations, not model output (seed={self.seed})"

    def _complete(self, messages: list[dict[str, str]], purpose: str, *, tag: str | None, cache_salt: Any) -> Completion:
        start = time.perf_counter()
        with self._lock:
            index = self._index
            self._index += 1
        # A caller's salt (e.g. run seed + proposal index) replaces the call index, so a resumed
        # run, whose index restarts at 0, draws the same mutants as the uninterrupted one.
        point = f"index:{index}" if cache_salt is None else f"salt:{canonical_json(cache_salt)}"
        digest = hashlib.sha256(f"{self.seed}|{point}|{canonical_json(messages)}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        prompt = "\n\n".join(m["content"] for m in messages if m["role"] == "user")
        parent = find_program(prompt)
        text = self._propose(parent, rng) if purpose == PROPOSAL else self._principle(parent, tag)
        return Completion(text, purpose, MODEL_NAME, 0, 0, time.perf_counter() - start, 1, False)

    def _propose(self, parent: str | None, rng: random.Random) -> str:
        if parent is None:
            return f"[{BANNER}] No parent program (fenced Python block or def) in the prompt; nothing to mutate."
        mutation = mutate_program(parent, rng)
        with self._lock:
            self._made[mutation.source] = mutation
        return f"[{BANNER}] {mutation.kind} mutation: {mutation.detail}\n\n```python\n{mutation.source}\n```\n"

    def _principle(self, program: str | None, tag: str | None) -> str:
        key = normalize(program) if program is not None else None
        with self._lock:
            made = self._made.get(key) if key is not None else None
        kind = made.kind if made is not None and made.kind in _PRINCIPLES else None
        type_, principle = _PRINCIPLES[kind]
        if tag == "reveal":
            return principle
        return f"TYPE: {type_}\nPRINCIPLE: {principle}"
