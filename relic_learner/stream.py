"""The checkpointed loop over a stream of training batches, shared by RELIC and the comparators.

A search on the paper's protocol (Appendix D: ordered training batches, each with a
start, ``proposals`` proposals per role in role order, and an end) advances one
*step* at a time: a batch start, one proposal of one role, or a batch end; after every
step its state (with the LLM ledger and the backend's own state) is checkpointed
atomically, so :meth:`StreamLoop.resume` continues a run killed anywhere and redoes
only the step that was cut off. A subclass (:class:`relic_learner.relic.Relic`,
``baselines.ahd.IsolatedSearch``) sets ``config_class`` and implements
``_start_batch``, ``_propose(role, h)``, ``_end_batch``, ``_finish`` and ``team``; its
``__init__`` sets ``config``, ``run``, ``roles``, ``stream``, ``llm``, ``evaluator``,
``_own_evaluator``, ``on_step`` and ``state`` (with ``b``, ``phase``, ``role_index``,
``h``, ``ledger``, ``llm_state``, ``events``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from relic_learner.batches import Batch, mixed_batch
from relic_learner.llm import LLMClient, make_client
from relic_learner.runlog import RunDir


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


class StreamLoop:
    """Batch start, proposals, batch end, checkpoint after each step (see the module docstring)."""

    config_class: ClassVar[type]

    @classmethod
    def resume(cls, out: str | Path, **kw: Any):
        """Continue the run in ``out`` from its last checkpoint."""
        run = RunDir(out)
        if not run.checkpoint_path.exists():
            raise FileNotFoundError(f"no checkpoint in {out}: nothing to resume")
        config = cls.config_class(**json.loads(run.config_path.read_text()))
        return cls(config, out, _state=run.load_checkpoint(), **kw)

    def _make_llm(self) -> LLMClient:
        return run_client(self.config, self.run.path)

    def learn(self) -> dict[str, str]:
        """Run (or finish) the search; return the final team as role -> source."""
        try:
            while self.state.phase != "done":
                self.step()
            return self.team()
        finally:
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
