"""The checkpointed loop over a stream of training batches, shared by RELIC and the comparators.

A search on the paper's protocol (Appendix D: ordered training batches, each with a
start, ``proposals`` proposals per role in role order, and an end) advances one
*step* at a time: a batch start, one proposal of one role, or a batch end; after every
step its state (with the LLM ledger and the backend's own state) is checkpointed
atomically, so :meth:`StreamLoop.resume` continues a run killed anywhere and redoes
only the step that was cut off. A subclass (:class:`relic_learner.relic.Relic`,
``baselines.ahd.IsolatedSearch``) sets ``config_class`` (a :class:`SearchSettings`) and
implements ``_start_batch``, ``_propose(role, h)``, ``_end_batch``, ``_finish`` and
``team``, and gives its empty state with ``_new_state`` (a :class:`StreamPosition`, which
the loop reads and advances, with the method's own fields). The constructor is written
once, here: it checks the config (``_check``), sets up what every search holds
(:meth:`StreamLoop._set_up`: config, run directory, benchmark, roles, seeds, stream, LLM
client, evaluator), lets the method add its own (``_prepare``), then starts a new run
(``config.json``, ``provenance.json``, the ``run_start`` event) or continues the
checkpoint's state through :meth:`StreamLoop._resume_from`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

import relic_envs
from relic_envs.core.registry import get_benchmark
from relic_envs.errors import InvalidConfig
from relic_envs.seeds import seed_source
from relic_learner import artifacts
from relic_learner.batches import Batch, mixed_batch
from relic_learner.evaluate import TeamEvaluator
from relic_learner.llm import LLMClient, make_client
from relic_learner.llm.factory import check_spec
from relic_learner.runlog import RunDir

log = logging.getLogger("relic_learner")


@dataclasses.dataclass(frozen=True)
class SearchSettings:
    """What every search on the stream of training batches is run with, RELIC's and the comparators'
    (written to ``config.json`` with the search's own fields). Defaults are the paper's (Appendix D):
    5 batches, 10 proposals per role and batch, replay from the 2 preceding batches, 3 instances each.
    """

    env: str
    interface: str = "paper"
    llm: str = "offline"
    base_url: str | None = None
    temperature: float = 1.0
    batches: int = 5
    proposals: int = 10
    replay: int = 2
    replay_per_batch: int = 3
    seed: int = 0
    workers: int | None = None
    isolation: str = "full"  # "reduced": run programs where the kernel refuses a layer (docs/learner.md)
    request_timeout_s: float = 60.0  # per HTTP attempt of the openai backend (then retried)

    def __post_init__(self) -> None:
        if isinstance(self.request_timeout_s, bool) or not isinstance(self.request_timeout_s, int | float) \
                or not self.request_timeout_s > 0:
            raise InvalidConfig(f"request_timeout_s must be a number of seconds > 0, got {self.request_timeout_s!r}")
        check_spec(self.llm)
        if isinstance(self.temperature, bool) or not isinstance(self.temperature, int | float) \
                or not 0 <= self.temperature <= 2:
            raise InvalidConfig(f"temperature must be a number in [0, 2], got {self.temperature!r}")
        if self.isolation not in ("full", "reduced"):
            raise InvalidConfig(f"isolation must be 'full' or 'reduced', got {self.isolation!r}")
        if self.env not in relic_envs.names():
            raise InvalidConfig(f"env must be one of {relic_envs.names()}, got {self.env!r}")
        get_benchmark(self.env).check_interface(self.interface)
        for name in ("batches", "proposals"):
            check_positive_int(name, getattr(self, name))
        if self.batches > 5:
            raise InvalidConfig(f"batches must be at most 5 (the canonical training stream), got {self.batches}")


def check_positive_int(name: str, value: Any) -> None:
    """:class:`InvalidConfig` unless ``value`` is an int >= 1 (a bool is not)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidConfig(f"{name} must be a positive int, got {value!r}")


def run_client(config: Any, run_path: str | Path, *, cache_dir: str | Path | None = None,
               rate_limiter: Any = None, replay_failures: bool = True) -> LLMClient:
    """The LLM client a run's ``config`` asks for (``llm``, ``base_url``, ``temperature``, ``seed``,
    ``request_timeout_s``).

    The openai backend caches responses in ``run_path/llm_cache`` unless ``cache_dir``
    names another (a grid shares one among its cells) and waits for ``rate_limiter``
    when given, and replays the failures recorded in its cache unless ``replay_failures``
    is false; the offline backend is seeded with the run seed.
    """
    spec = config.llm
    if spec.startswith("openai:"):
        return make_client(spec, base_url=config.base_url, temperature=config.temperature,
                           cache_dir=str(cache_dir if cache_dir is not None else Path(run_path) / "llm_cache"),
                           rate_limiter=rate_limiter, timeout_s=getattr(config, "request_timeout_s", 60.0),
                           replay_failures=replay_failures)
    return make_client(spec, seed=config.seed) if spec == "offline" else make_client(spec)


PHASES = ("start", "propose", "knowledge", "done")  # a batch: start -> propose ... -> knowledge; then the next


@dataclasses.dataclass(kw_only=True)
class StreamPosition:
    """Where a search stands in the stream, and what its loop checkpoints with it: a search's
    state (RELIC's ``State``, a comparator's ``SearchState``) adds its own fields to these."""

    incumbent_score: float | None = None
    b: int = 1
    phase: str = "start"  # start -> propose -> knowledge (-> next batch) ... -> done
    role_index: int = 0
    h: int = 0
    curve: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    ledger: dict[str, Any] = dataclasses.field(default_factory=dict)
    llm_state: dict[str, Any] = dataclasses.field(default_factory=dict)  # the backend's own state (exact resume)
    events: int = 0


class StreamLoop:
    """Batch start, proposals, batch end, checkpoint after each step (see the module docstring)."""

    config_class: ClassVar[type]

    def __init__(
        self,
        config: SearchSettings,
        out: str | Path,
        *,
        llm: LLMClient | None = None,
        evaluator: TeamEvaluator | None = None,
        on_step: Callable[[Any], None] | None = None,
        _state: Any = None,
    ):
        self._check(config)
        self._set_up(config, out, llm, evaluator, on_step)
        self._prepare()
        if _state is None:
            self.run.write_json("config.json", dataclasses.asdict(config))
            self.run.write_json("provenance.json", artifacts.provenance(config.env, config.isolation))
            self.state = self._new_state()
            self.run.truncate_events(0)
            self.run.event("run_start", config=dataclasses.asdict(config), llm=self.llm.describe(),
                           **self._start_fields())
        else:
            self._resume_from(_state)  # the cut-off step is redone, as in ``relic learn``
            log.info("resuming %s at batch %d, phase %s", out, _state.b, _state.phase)

    def _check(self, config: SearchSettings) -> None:
        """Raise ``InvalidConfig`` for a config this search cannot run (default: every config runs)."""

    def _prepare(self) -> None:
        """The method's own set-up, after :meth:`_set_up` and before the state exists."""

    def _new_state(self) -> Any:
        """A new run's empty state."""
        raise NotImplementedError(f"{type(self).__name__} must give a new run's empty state (_new_state)")

    def _start_fields(self) -> dict[str, Any]:
        """What the method adds to the ``run_start`` event."""
        return {}

    @classmethod
    def resume(cls, out: str | Path, **kw: Any):
        """Continue the run in ``out`` from its last checkpoint."""
        run = RunDir(out)
        if not run.checkpoint_path.exists():
            raise FileNotFoundError(f"no checkpoint in {out}: nothing to resume")
        config = cls.config_class(**json.loads(run.config_path.read_text()))
        return cls(config, out, _state=run.load_checkpoint(), **kw)

    def _set_up(self, config: SearchSettings, out: str | Path, llm: LLMClient | None, evaluator: TeamEvaluator | None,
                on_step: Callable[[Any], None] | None) -> None:
        """What every search holds: its config and run directory, the benchmark's roles, signatures
        and seed programs, the training stream, the LLM client and the evaluator (a new one, closed
        by :meth:`learn`, unless one is shared)."""
        self.config = config
        self.run = RunDir(out)
        self.bench = get_benchmark(config.env)
        self.roles = list(self.bench.roles)
        self.signatures = self.bench.signatures(config.interface)
        self.seeds = {r: seed_source(config.env, r, config.interface) for r in self.roles}
        self.stream = relic_envs.splits(config.env).train
        self.llm = llm or self._make_llm()
        self._own_evaluator = evaluator is None
        self.evaluator = evaluator or TeamEvaluator(self.bench, interface=config.interface, workers=config.workers,
                                                    isolation=config.isolation)
        self.on_step = on_step

    def _write_team(self) -> None:
        """The final team's sources, one file per role under ``team/`` of the run directory."""
        team_dir = self.run.path / "team"
        team_dir.mkdir(exist_ok=True)
        for role, source in self.team().items():
            (team_dir / f"{role}.py").write_text(source)

    def _resume_from(self, state: Any) -> None:
        """Continue from a checkpoint: the ledger and the backend's state restored; the events after
        the checkpoint belong to the step that was cut off, which is redone (no "resume" event: a
        resumed run's log equals an uninterrupted one's)."""
        self.state = state
        self.llm.ledger.restore(state.ledger)
        self.llm.restore_state(getattr(state, "llm_state", {}))  # older checkpoints kept none
        self.run.truncate_events(state.events)

    def _make_llm(self) -> LLMClient:
        return run_client(self.config, self.run.path)

    def learn(self) -> dict[str, str]:
        """Run (or finish) the search; return the final team as role -> source."""
        try:
            while self.state.phase != "done":
                self.step()
            return self.team()
        finally:
            self.close()

    def close(self) -> None:
        """Release the evaluator's workers (unless the evaluator was shared); :meth:`learn` ends with it."""
        if self._own_evaluator:
            self.evaluator.close()

    def step(self) -> None:
        """Advance by one checkpointed step: a batch start, one proposal, or a batch end."""
        s = self.state
        if s.phase == "start":
            self._start_batch()
            s.phase = "propose"
        elif s.phase == "propose":
            self._propose(self.roles[s.role_index], s.h)
            s.h += 1
            if s.h == self.config.proposals:
                s.h, s.role_index = 0, s.role_index + 1
            if s.role_index == len(self.roles):
                s.role_index, s.phase = 0, "knowledge"
        elif s.phase == "knowledge":
            self._end_batch()
            if s.b == self.config.batches:
                self._finish()
                s.phase = "done"
            else:
                s.b, s.phase = s.b + 1, "start"
        self._checkpoint()

    def _checkpoint(self) -> None:
        self.state.ledger = self.llm.ledger.snapshot()
        self.state.llm_state = self.llm.export_state()
        self.state.events = self.run.seq
        self.run.save_checkpoint(self.state)
        if self.on_step:
            self.on_step(self.state)

    def batch(self) -> Batch:
        """The current batch with replay from the preceding ones (Eq. 3's mixed batch)."""
        c = self.config
        return mixed_batch(self.stream, self.state.b, c.seed, horizon=c.replay, per_batch=c.replay_per_batch)

    def _rng(self, *key: int) -> np.random.Generator:
        """A generator that depends only on the run seed and ``key``: a resumed step draws the same."""
        return np.random.default_rng([self.config.seed, *key])
