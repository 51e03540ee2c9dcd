"""Comparators for the RELIC benchmarks: human DCOP solvers (DSA-B, LSGA-DSA) so far.

The role-isolated LLM searches (EoH-ind., ReEvo-ind., MCTS-AHD-ind., HiFo-ind.) and the
MOTIF control need the learner's evaluator and are not built yet.
"""
