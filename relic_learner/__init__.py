"""RELIC's contextual-gain search (private trees, Lift/Bridge/Reflect, public tree).

Not built yet: the trusted evaluator (sandbox, TeamEvaluator, LLM client) and the
search itself are the next issues. What exists today is the environment suite
(``relic_envs``) and the human DCOP baselines (``baselines``).
"""


def learn(*args, **kwargs):
    """Run RELIC on a benchmark (not built yet)."""
    raise NotImplementedError(
        "relic_learner.learn is not built yet: it needs the sandboxed TeamEvaluator, the LLM client "
        "and the RELIC search (private trees, operators, public tree). Use relic_envs.rollout to "
        "evaluate hand-written or seed teams meanwhile."
    )
