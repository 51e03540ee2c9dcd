"""RELIC's contextual-gain search (private trees, Lift/Bridge/Reflect, public tree).

Built so far, the trusted side of the search (Appendix C.2, C.5, D.4):

* :mod:`relic_learner.intake` - LLM reply text to a checked role program;
* :mod:`relic_learner.sandbox` - worker processes that play whole rollouts under
  per-call time limits, a memory cap and an audit hook;
* :mod:`relic_learner.evaluate` - :class:`~relic_learner.evaluate.TeamEvaluator`:
  pooled, cached team evaluation with typed statuses;
* :mod:`relic_learner.batches` - the fixed mixed batch of Eq. 3;
* :mod:`relic_learner.reference` - Reflect's credit map (full vs reference team);
* :mod:`relic_learner.llm` - the LLM client (``openai`` backend, response cache,
  call ledger, offline AST-mutation backend).

Not built yet: the search itself (private trees, operators, public tree), :func:`learn`.
"""


def learn(*args, **kwargs):
    """Run RELIC on a benchmark (not built yet)."""
    raise NotImplementedError(
        "relic_learner.learn is not built yet: the RELIC search (private trees with node/operator UCT, "
        "Lift/Bridge/Reflect, reveal/distill, the public tree, streaming runs) is missing. The trusted "
        "evaluator (relic_learner.evaluate.TeamEvaluator) and the LLM client (relic_learner.llm) exist."
    )
