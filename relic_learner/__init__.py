"""RELIC's contextual-gain search (private trees, Lift/Bridge/Reflect, public tree).

The trusted side of the search (Appendix C.2, C.5, D.4):

* :mod:`relic_learner.intake` - LLM reply text to a checked role program;
* :mod:`relic_learner.sandbox` - worker processes that play whole rollouts under
  per-call time limits, a memory cap and an audit hook;
* :mod:`relic_learner.evaluate` - :class:`~relic_learner.evaluate.TeamEvaluator`:
  pooled, cached team evaluation with typed statuses;
* :mod:`relic_learner.batches` - the fixed mixed batch of Eq. 3;
* :mod:`relic_learner.reference` - Reflect's credit map (full vs reference team);
* :mod:`relic_learner.llm` - the LLM client (``openai`` backend, response cache,
  call ledger, offline AST-mutation backend).

and the search itself (Algorithm 1): :mod:`~relic_learner.trees` (private trees,
two-level UCT), :mod:`~relic_learner.principles` (archives, public tree),
:mod:`~relic_learner.prompts`, :mod:`~relic_learner.relic` (the orchestrator, with
checkpoints and resume) and the ``relic`` command (:mod:`~relic_learner.cli`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def learn(env: str, out: str | Path, **config: Any) -> dict[str, str]:
    """Run RELIC on benchmark ``env`` into run directory ``out``; return the final team.

    Keyword arguments are :class:`~relic_learner.relic.RelicConfig` fields
    (``llm="offline"`` by default; ``"openai:MODEL"`` for a real model).
    """
    from relic_learner.relic import Relic, RelicConfig

    return Relic(RelicConfig(env=env, **config), out).learn()
