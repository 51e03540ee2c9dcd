"""Collection rules shared by the test suite and the doctests."""

import importlib.util

# The JAX evaluators need the optional extra; without it, skip their modules' doctests
# (the JAX test modules skip themselves).
_JAX_MODULES = ["baselines/dcop/*jax*.py", "relic_envs/dcop/*jax*.py", "relic_envs/dcop/*/jax_eval.py", "relic_envs/mapp/*jax*.py", "relic_envs/mapp/*/jax_eval.py"]
collect_ignore_glob = [] if importlib.util.find_spec("jax") else _JAX_MODULES
