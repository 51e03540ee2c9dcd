"""Classical rows and references of the routing benchmarks MAPP-PC, MAPP-AR and MAPP-DS.

``plans`` (greedy insertion and iterated local search, PC and AR), ``cpsat`` (the CP-SAT
reference with its proven bound), ``dynamic`` (MAPP-DS: online insertion and the offline
full-information reference) and ``table`` (the rows of docs/results/mapp.md).
"""
