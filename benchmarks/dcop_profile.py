"""Where the DGC JAX evaluator spends its time at batch 1024 (float32 and float64).

Times one 50-sweep ``lax.scan`` of different bodies: the full evaluator with DSA-B, the
full evaluator with a policy that keeps ``cur``, the landscape alone (DGC's one scatter
over the flattened batch, and the per-instance scatter vmapped), ``u`` alone.
Prints a table; asserts nothing. Figures: ``benchmarks/RESULTS.md``.

    python benchmarks/dcop_profile.py
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

import relic_envs
from baselines.dcop.dsa_jax import dsa_jax_team
from relic_envs.dcop import _jax_sweep as js
from relic_envs.dcop import jax_eval

NAME, BATCH, SWEEPS = "dgc", 1024, 50


def batch_of(size: int) -> js.Batch:
    instances = list(relic_envs.splits(NAME).test_instances())
    bench, rng = relic_envs.get_benchmark(NAME), np.random.default_rng(1)
    instances += [bench.generate("test", rng) for _ in range(size - len(instances))]
    return jax_eval.stack(NAME, instances)


def scanned(body):
    """50 sweeps of ``body(batched data, batched state)`` in one compiled scan."""

    def run(data):
        def step(state, _):
            return body(data, state), None

        return jax.lax.scan(step, jax.vmap(js.init)(data), None, length=SWEEPS)[0].x

    return jax.jit(run)


def best_seconds(fns: dict, data, rounds: int = 5) -> dict:
    """Best time of each function, calls interleaved round by round so that a busy
    spell of the machine hits every row alike."""
    for fn in fns.values():
        jax.block_until_ready(fn(data))  # compile
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for label, fn in fns.items():
            start = time.perf_counter()
            jax.block_until_ready(fn(data))
            best[label] = min(best[label], time.perf_counter() - start)
    return best


def main() -> None:
    problem = jax_eval.problem_module(NAME).PROBLEM

    def full(team):
        return jax.jit(lambda data: js.rollout_batch(problem, team, data, SWEEPS)[2])

    def landscape_only(data, state):
        return state._replace(x=jnp.argmin(problem.batch_landscape(data, state.x), axis=2).astype(jnp.int32))

    def landscape_vmapped(data, state):  # the per-instance scatter, vmapped (JaxProblem's default)
        return state._replace(x=jnp.argmin(jax.vmap(problem.landscape)(data, state.x), axis=2).astype(jnp.int32))

    def u_only(data, state):
        u = jax.vmap(lambda seed: js.exploration(seed, state.t[0], state.x.shape[1], problem.domain + 1))(data["seed"])
        return state._replace(x=(u[..., 0] * problem.domain).astype(jnp.int32), t=state.t + 1)

    hold = {r: (lambda obs: obs["cur"]) for r in "ABC"}
    for x64 in (False, True):
        with jax.enable_x64(x64):
            data = jax.tree.map(jnp.asarray, batch_of(BATCH).data)
            best = best_seconds({
                "full evaluator, DSA-B": full(dsa_jax_team()),
                "full evaluator, keep cur": full(hold),
                "landscape + argmin": scanned(landscape_only),
                "  same, vmapped scatter": scanned(landscape_vmapped),
                "u only": scanned(u_only),
            }, data)
        precision = "float64" if x64 else "float32"
        print(f"{NAME}, batch {BATCH}, {SWEEPS} sweeps, {precision}, jax {jax.__version__} on {jax.devices()[0].platform}")
        for label, sec in best.items():
            print(f"{label:<26} {BATCH * SWEEPS / sec:10.3g} instance-sweeps/s {sec * 1e3 / SWEEPS:8.2f} ms/sweep")


if __name__ == "__main__":
    main()
