"""Comparators for the RELIC benchmarks.

Built: the classical DCOP algorithms (DSA-A/B/C, MGM, MGM-2, Max-Sum, LSGA-DSA) and
CP-SAT optimum references (``baselines.dcop``). Not built yet: the role-isolated LLM
searches (EoH-ind., ReEvo-ind., MCTS-AHD-ind., HiFo-ind.) and the MOTIF control; they
would run on ``relic_learner.evaluate.TeamEvaluator`` and ``relic_learner.llm`` with
the same proposal budget as RELIC.
"""
