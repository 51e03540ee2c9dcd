"""The loop every role-isolated LLM comparator shares (the paper's "ind." adaptations).

Appendix D ("Role-isolated adaptations"): each method keeps *one search state per role*;
a role's search sees its own signature, its seed, its own programs and the contextual
team score obtained with its teammates frozen, and never another role's code,
population, reflections or statistics. Everything else is RELIC's protocol
(Appendix D, "Shared settings"): five ordered training batches, each candidate scored
on the current batch plus replay from the two preceding batches
(:func:`relic_learner.batches.mixed_batch`), ten proposals per role and batch, invalid
proposals charged, the same sandboxed :class:`~relic_learner.evaluate.TeamEvaluator`,
the same LLM client and ledger, the same system message and target block
(:mod:`relic_learner.prompts`), and model selection on training data only.

**Frozen teammates (ours).** A candidate of role ``i`` is scored in the team made of
the *current incumbents* of the other roles, as RELIC scores its candidates, so the
two differ only in how they search and communicate. Seeds as teammates would make
every role optimise for a team that never plays; incumbents are what the final team
is made of. No role sees its teammates' code: only the scalar team score.

**Scores across batches (ours).** A score is only comparable on one mixed batch, so at
the start of every batch after the first each role's retained programs are re-scored
on the new batch in the current team (evaluations, no LLM calls), the best becomes the
role's incumbent (on a tie the current incumbent stays), and the methods rank, select
and prune by these fresh scores; the paper's RELIC revalidates its incumbents the same
way (Appendix C.1; ``relic_learner.relic.Relic._revalidate``, whose tie also keeps the
incumbent). The incumbent is a candidate even when the method's survival dropped it.

**Scores within a batch (ours, forced by the setting).** A score is also only
comparable in one team: once role A's block has improved the team, the programs B and
C hold were scored with A's old incumbent. So before a role's proposal, when a
teammate's incumbent (or the batch) differs from the one its programs were scored
with, every retained program of the role is re-scored in the current team (a
``rescore`` event with ``reason="team_changed"``; evaluations only, no LLM call) and
the methods rank, select and credit by these scores. The role's incumbent is kept
unless a retained program now scores strictly better in the current team, which then
becomes the incumbent (the batch-start rule). In the single-function setting of the
original methods the context never changes, so this is what they do there.

A method subclasses :class:`IsolatedSearch` and implements four hooks:
:meth:`~IsolatedSearch.new_role_state`, :meth:`~IsolatedSearch.programs`,
:meth:`~IsolatedSearch.prompt` (which operator, which parents, which messages) and
:meth:`~IsolatedSearch.accept` (what the search keeps of a scored or failed candidate);
:meth:`~IsolatedSearch.end_of_batch` adds a method's auxiliary calls (reflection,
insight distillation). The run directory, checkpoint and event stream are those of
``relic learn`` (:class:`relic_learner.runlog.RunDir`); after every step the state is
checkpointed atomically, so ``resume`` continues a killed run.
"""

from __future__ import annotations

import abc
import dataclasses
import logging
from pathlib import Path
from typing import Any

import numpy as np

from relic_envs.core.rollout import repair_shares
from relic_envs.errors import InvalidConfig
from relic_learner import prompts
from relic_learner.batches import Batch
from relic_learner.intake import Rejection, intake
from relic_learner.llm import AUXILIARY, PROPOSAL, LLMCallFailed
from relic_learner.stream import SearchSettings, StreamLoop, StreamPosition

log = logging.getLogger("baselines.ahd")


@dataclasses.dataclass(frozen=True)
class SearchConfig(SearchSettings):
    """What defines a comparator run (written to ``config.json``): the settings every search shares
    (:class:`~relic_learner.stream.SearchSettings`, Appendix D's defaults), the method and its schedule."""

    method: str = dataclasses.field(kw_only=True)
    # "paper": the paper's call accounting (Appendix D's table); "reference": the method's own
    # schedule where the two differ (ReEvo only, baselines/ahd/reevo.py)
    schedule: str = "paper"

    def __post_init__(self) -> None:
        if self.schedule not in ("paper", "reference"):
            raise InvalidConfig(f"schedule must be 'paper' or 'reference', got {self.schedule!r}")
        super().__post_init__()


@dataclasses.dataclass
class Candidate:
    """One program a role's search holds: its source, the method's text about it, its score."""

    id: int
    source: str
    thought: str  # the method's one-line description (EoH's "algorithm"), or the seed's docstring
    score: float  # contextual team score on the batch it was last scored on (higher is better)
    batch: int  # batch of that score
    operator: str = "seed"
    parents: tuple[int, ...] = ()


@dataclasses.dataclass
class Offer:
    """What a method asks for one proposal: the messages, the operator tag, the parents."""

    messages: list[dict[str, str]]
    operator: str
    parents: tuple[int, ...] = ()


@dataclasses.dataclass(kw_only=True)
class SearchState(StreamPosition):
    """The persistent state of a comparator run (pickled into the checkpoint): the loop's position and the method's."""

    roles: dict[str, Any]  # role -> the method's own search state
    incumbent: dict[str, Candidate]
    next_id: dict[str, int] = dataclasses.field(default_factory=dict)
    # role -> (batch, teammates' incumbent ids) its retained programs were last scored with
    context: dict[str, tuple] = dataclasses.field(default_factory=dict)


class IsolatedSearch(StreamLoop, abc.ABC):
    """A role-isolated comparator run on one benchmark, backed by a run directory.

    Parameters are those of :class:`relic_learner.relic.Relic`: ``config``, ``out``, and
    optionally a shared ``llm`` client, ``evaluator`` and an ``on_step`` callback.
    """

    name: str = ""  # the method's CLI name
    config_class = SearchConfig
    schedules: tuple[str, ...] = ("paper",)  # the SearchConfig.schedule values this method implements

    def _check(self, config: SearchConfig) -> None:
        if config.method != self.name:
            raise InvalidConfig(f"config.method is {config.method!r} but this search is {self.name!r}")
        if config.schedule not in self.schedules:
            raise InvalidConfig(f"{self.name} has no {config.schedule!r} schedule (only {list(self.schedules)})")

    def _prepare(self) -> None:
        self.targets = {r: prompts.target_block(self.signatures[r], self.seeds[r]) for r in self.roles}
        self.attempt = ""

    def _new_state(self) -> SearchState:
        return SearchState(roles={r: self.new_role_state(r) for r in self.roles}, incumbent={})

    @classmethod
    def create(cls, out: str | Path, **config: Any) -> IsolatedSearch:
        """A new run of this method in ``out`` (``config``: :class:`SearchConfig`'s fields but ``method``)."""
        return cls(SearchConfig(method=cls.name, **config), out)

    # -- what a method implements ----------------------------------------------------------
    @abc.abstractmethod
    def new_role_state(self, role: str) -> Any:
        """A role's empty search state (the seed is handed to :meth:`accept` at batch 1)."""

    @abc.abstractmethod
    def programs(self, role: str) -> list[Candidate]:
        """Every program the role's search retains (re-scored at each batch start)."""

    @abc.abstractmethod
    def prompt(self, role: str, h: int, rng: np.random.Generator) -> Offer:
        """The ``h``-th proposal of the current batch: operator, parents and messages."""

    @abc.abstractmethod
    def accept(self, role: str, offer: Offer, child: Candidate | None, rng: np.random.Generator) -> None:
        """Take a proposal's outcome: a scored ``child``, or ``None`` when it was invalid."""

    def end_of_batch(self, role: str) -> None:
        """Auxiliary work at the end of a batch (none by default)."""
        return None

    # -- the loop (relic_learner.stream.StreamLoop: learn, step, checkpoint, batch, resume) ---
    def team(self, **override: str) -> dict[str, str]:
        """The incumbent team as sources, with ``override`` roles replaced."""
        team = {r: self.state.incumbent[r].source for r in self.roles}
        team.update(override)
        return team

    def new_candidate(self, role: str, source: str, thought: str, score: float, operator: str,
                      parents: tuple[int, ...] = ()) -> Candidate:
        s = self.state
        k = s.next_id.get(role, 0)
        s.next_id[role] = k + 1
        return Candidate(k, source, thought, score, s.b, operator, parents)

    def auxiliary(self, messages: list[dict[str, str]], tag: str, key: list[int]) -> str | None:
        """One auxiliary call (charged); ``None`` when it fails (that call contributes no text)."""
        try:
            return self.llm.complete(messages, AUXILIARY, tag=tag, cache_salt=[self.config.seed, *key, tag]).text
        except LLMCallFailed as exc:
            self.run.event("auxiliary_failed", tag=tag, reason=exc.reason, detail=str(exc)[:300])
            return None

    def _start_batch(self) -> None:
        s, batch = self.state, self.batch()
        self.run.event("batch_start", b=s.b, instances=len(batch), provenance=batch.provenance)
        if s.b == 1:
            seeds = self.evaluator.evaluate(self.seeds, batch)
            if not seeds.ok:
                raise RuntimeError(f"the seed team is invalid on batch 1: {seeds.status}")
            for r_idx, role in enumerate(self.roles):
                seed = self.new_candidate(role, self.seeds[role], prompts.seed_description(
                    self.seeds[role], self.signatures[role].function), seeds.mean_score, "seed")
                s.incumbent[role] = seed
                self.accept(role, Offer([], "seed"), seed, self._rng(s.b, r_idx, 2**16))
            for role in self.roles:
                self._contexts()[role] = self._teammates(role)
        else:
            for role in self.roles:
                self._rescore(role, batch)
        result = self.evaluator.evaluate(self.team(), batch)
        if not result.ok:
            raise RuntimeError(f"the incumbent team is invalid on batch {s.b}: {result.status}")
        s.incumbent_score = result.mean_score
        s.curve.append({"b": s.b, "start": result.mean_score})
        self.run.event("incumbent", b=s.b, score=result.mean_score, objective=result.mean_objective)

    def _teammates(self, role: str) -> tuple:
        """What a role's scores depend on besides its own program: the batch and the teammates' incumbents."""
        s = self.state
        return (s.b, tuple((r, s.incumbent[r].id) for r in self.roles if r != role))

    def _rescore(self, role: str, batch: Batch, reason: str = "batch_start") -> None:
        """Every retained program of ``role`` (and its incumbent) scored on ``batch`` in the current team.

        The best becomes the incumbent; on a tie the incumbent is kept, as RELIC revalidates
        (``relic_learner.relic.Relic._revalidate`` lists the incumbent first and takes the first of
        the best), then the oldest program. ``reason`` is ``"batch_start"`` or ``"team_changed"``
        (within a batch); the rule is the same for both.
        """
        s = self.state
        kept = self.programs(role)
        before = s.incumbent[role]
        # the incumbent is scored too when the method no longer retains it (a tie its survival pruned)
        extra = [] if any(c.id == before.id for c in kept) else [before]
        results = self.evaluator.evaluate_many([self.team(**{role: c.source}) for c in kept + extra], batch)
        for c, r in zip(kept + extra, results):
            # An earlier-valid program can fail in a new context; it then ranks last (ours).
            c.score, c.batch = (r.mean_score, s.b) if r.ok else (-np.inf, s.b)
        s.incumbent[role] = max(kept + extra, key=lambda c: (c.score, c.id == before.id, -c.id))
        if reason != "batch_start":  # the incumbent's fresh score is the current team's score
            s.incumbent_score = s.incumbent[role].score
        self._contexts()[role] = self._teammates(role)
        self.run.event("rescore", b=s.b, role=role, reason=reason, programs=len(kept),
                       incumbent=s.incumbent[role].id, score=s.incumbent[role].score,
                       teammates=dict(self._contexts()[role][1]))

    def _contexts(self) -> dict[str, tuple]:
        if not hasattr(self.state, "context"):  # a checkpoint written before contexts were kept
            self.state.context = {}
        return self.state.context

    def _refresh(self, role: str) -> None:
        """Re-score ``role``'s programs when a teammate's incumbent changed since they were scored."""
        if self._contexts().get(role) != self._teammates(role):
            self._rescore(role, self.batch(), reason="team_changed")

    def _propose(self, role: str, h: int) -> None:
        s, c = self.state, self.config
        r_idx = self.roles.index(role)
        self._refresh(role)
        rng = self._rng(s.b, r_idx, h)
        offer = self.prompt(role, h, rng)
        record: dict[str, Any] = {"b": s.b, "role": role, "h": h, "operator": offer.operator,
                                  "parents": list(offer.parents)}
        self.attempt = ""  # the proposal's code as far as it got (a method may show a failed attempt)
        try:
            reply = self.llm.complete(offer.messages, PROPOSAL, tag=offer.operator,
                                      cache_salt=[c.seed, s.b, r_idx, h, offer.operator])
        except LLMCallFailed as exc:
            return self._fail(role, offer, record, "llm", f"{exc.reason}: {exc}", rng)
        record.update(tokens=reply.prompt_tokens + reply.completion_tokens, cached=reply.cached)
        program = intake(reply.text, self.signatures[role])
        if isinstance(program, Rejection):
            self.attempt = reply.text
            return self._fail(role, offer, record, program.reason, program.detail, rng)
        self.attempt = program.source
        result = self.evaluator.evaluate(self.team(**{role: program.source}), self.batch())
        if not result.ok:
            return self._fail(role, offer, record, result.status.reason, result.status.detail, rng)
        child = self.new_candidate(role, program.source, thought_of(reply.text), result.mean_score,
                                   offer.operator, offer.parents)
        gain = result.mean_score - s.incumbent_score
        improved = gain > 0
        if improved:
            s.incumbent[role], s.incumbent_score = child, result.mean_score
        self.accept(role, offer, child, rng)
        record.update(status="ok", child=child.id, gain=gain, score=result.mean_score, incumbent=improved,
                      relative_gain=gain / max(abs(result.mean_score - gain), 1e-12),
                      repairs=repair_shares(result.results))  # None: the benchmark repairs nothing
        self.run.event("proposal", **record)

    def _fail(self, role: str, offer: Offer, record: dict[str, Any], reason: str, detail: str,
              rng: np.random.Generator) -> None:
        self.accept(role, offer, None, rng)
        record.update(status="invalid", reason=reason, detail=detail[:500])
        self.run.event("proposal", **record)

    def _end_batch(self) -> None:  # the StreamLoop's "knowledge" phase: a method's auxiliary work
        s = self.state
        s.curve[-1]["end"] = s.incumbent_score
        for role in self.roles:
            self.end_of_batch(role)
        self.run.event("batch_end", b=s.b, score=s.incumbent_score,
                       incumbent={r: c.id for r, c in s.incumbent.items()})

    def _finish(self) -> None:
        s = self.state
        self._write_team()
        self.run.write_json("curve.json", s.curve)
        self.run.event("run_end", score=s.incumbent_score, incumbent={r: c.id for r, c in s.incumbent.items()},
                       ledger=self.llm.ledger.snapshot())


def thought_of(reply: str) -> str:
    """The one-sentence description a reply puts in braces before its code (EoH's format).

    The first ``{...}`` outside the fenced code, else the prose before the code, else "".
    """
    prose = reply.split("```", 1)[0]
    if "{" in prose and "}" in prose.split("{", 1)[1]:
        return " ".join(prose.split("{", 1)[1].split("}", 1)[0].split())
    head = prose.split("def ", 1)[0]
    return " ".join(head.split())[:500]
