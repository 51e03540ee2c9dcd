"""Classical dispatch rules for the scheduling benchmarks (MAS-JD, MAS-ST, MAS-FS):
``baselines.mas.rules`` (``RULES``, ``rule_team``, ``measure``)."""
