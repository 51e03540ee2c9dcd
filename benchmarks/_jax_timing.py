"""Timing helpers shared by the throughput scripts (steady state apart from compile time)."""

from __future__ import annotations

import time


def time_compiled(run, batch, x64: bool, repeats: int) -> tuple[float, float, float]:
    """``(best seconds per call, compile seconds, XLA buffer MB)`` of a compiled evaluator.

    ``run(batch)`` is the evaluator, ``run.jitted`` its ``jax.jit`` function of
    ``batch.data``. The first call compiles; compile time is that call minus the best
    steady-state call.
    """
    import jax

    start = time.perf_counter()
    run(batch)  # compiles
    first = time.perf_counter() - start
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run(batch)
        best = min(best, time.perf_counter() - start)
    with jax.enable_x64(x64):
        stats = run.jitted.lower(batch.data).compile().memory_analysis()
    mb = (stats.temp_size_in_bytes + stats.argument_size_in_bytes + stats.output_size_in_bytes) / 2**20
    return best, first - best, mb
