"""Collection rules shared by the test suite and the doctests."""

import importlib.util

# The JAX evaluators need the optional extra; without it, skip their modules' doctests
# (tests/dcop/test_jax_parity.py skips itself).
collect_ignore_glob = [] if importlib.util.find_spec("jax") else ["relic_envs/dcop/*jax*.py", "relic_envs/dcop/*/jax_eval.py"]
