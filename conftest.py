"""Collection rules and set-up shared by the test suite and the doctests."""

import importlib.util
import os
import sys

# The JAX evaluators need the optional extra; without it, skip their modules' doctests
# (the JAX test modules skip themselves).
_JAX_MODULES = ["baselines/dcop/*jax*.py", "relic_envs/dcop/*jax*.py", "relic_envs/dcop/*/jax_eval.py", "relic_envs/mapp/*jax*.py", "relic_envs/mapp/*/jax_eval.py"]
collect_ignore_glob = [] if importlib.util.find_spec("jax") else _JAX_MODULES


def pytest_configure(config):
    """Keep XLA's compiled programs between runs, in pytest's cache folder.

    Compiling takes most of the JAX tests' time; a second run of the same tests (the
    loop of a change in one family) loads them instead. Set through the environment so
    that the subprocesses the suite starts (examples, docs snippets, Ray workers) share
    it. A user's own ``JAX_COMPILATION_CACHE_DIR`` wins; ``-p no:cacheprovider`` or
    ``RELIC_TEST_JAX_CACHE=0`` turns it off (a cold run, as on CI's fresh machine).
    """
    cache = getattr(config, "cache", None)
    if cache is None or "JAX_COMPILATION_CACHE_DIR" in os.environ or os.environ.get("RELIC_TEST_JAX_CACHE") == "0":
        return
    os.environ["JAX_COMPILATION_CACHE_DIR"] = str(cache.mkdir("jax-compilation"))
    # Most of the suite's compilations take well under JAX's default threshold of 1 s.
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.1")
    if importlib.util.find_spec("filelock"):  # JAX refuses a size limit without it
        os.environ.setdefault("JAX_COMPILATION_CACHE_MAX_SIZE", str(1 << 30))  # least recently used go first
    if "jax" in sys.modules:  # imported before this hook (a plugin): tell it directly
        jax = sys.modules["jax"]
        jax.config.update("jax_compilation_cache_dir", os.environ["JAX_COMPILATION_CACHE_DIR"])
        jax.config.update("jax_persistent_cache_min_compile_time_secs", float(os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"]))
        if "JAX_COMPILATION_CACHE_MAX_SIZE" in os.environ:
            jax.config.update("jax_compilation_cache_max_size", int(os.environ["JAX_COMPILATION_CACHE_MAX_SIZE"]))
