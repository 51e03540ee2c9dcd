"""Where the DGC JAX evaluator spends its time at batch 1024 (float32).

Times one 50-sweep ``lax.scan`` of different bodies: the full evaluator with DSA-B, the
full evaluator with a policy that keeps ``cur``, the landscape alone, ``u`` alone.
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
    def one(data):
        def step(state, _):
            return body(data, state), None

        return jax.lax.scan(step, js.init(data), None, length=SWEEPS)[0].x

    return jax.jit(jax.vmap(one))


def seconds(fn, data, repeats: int = 3) -> float:
    jax.block_until_ready(fn(data))
    start = time.perf_counter()
    for _ in range(repeats):
        jax.block_until_ready(fn(data))
    return (time.perf_counter() - start) / repeats


def main() -> None:
    problem = jax_eval.problem_module(NAME).PROBLEM

    def full(team):
        def body(data, state):
            landscape = problem.landscape(data, state.x)
            actions = {r: team[r](js.observe(problem, data, state, r, landscape)) for r in "ABC"}
            return js.step(problem, data, state, actions, landscape)

        return body

    def landscape_only(data, state):
        return state._replace(x=jnp.argmin(problem.landscape(data, state.x), axis=1).astype(jnp.int32))

    def u_only(data, state):
        u = js.exploration(data["seed"], state.t, state.x.shape[0], problem.domain + 1)
        return state._replace(x=(u[:, 0] * problem.domain).astype(jnp.int32), t=state.t + 1)

    hold = {r: (lambda obs: obs["cur"]) for r in "ABC"}
    data = batch_of(BATCH).data
    print(f"{NAME}, batch {BATCH}, {SWEEPS} sweeps, float32, jax {jax.__version__} on {jax.devices()[0].platform}")
    for label, body in [
        ("full evaluator, DSA-B", full(dsa_jax_team())),
        ("full evaluator, keep cur", full(hold)),
        ("landscape + argmin", landscape_only),
        ("u only", u_only),
    ]:
        sec = seconds(scanned(body), data)
        print(f"{label:<26} {BATCH * SWEEPS / sec:10.3g} instance-sweeps/s {sec * 1e3 / SWEEPS:8.2f} ms/sweep")


if __name__ == "__main__":
    main()
