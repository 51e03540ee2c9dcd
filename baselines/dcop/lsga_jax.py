"""LSGA-DSA in JAX: ``baselines.dcop.lsga`` as one compiled program over a batch.

Same algorithm, same counter-based draws, same answer (the best-ever assignment) as
the numpy :class:`~baselines.dcop.lsga.LSGARun`: the population's DSA-B sweeps, the
anytime update and the GA steps all run inside one ``jit`` + ``vmap`` + ``lax.scan``.

LSGA-DSA is not an ``obs -> values`` policy: each sweep it needs every individual's
full landscape and the global costs of the population (in a real DCOP, aggregated up a
BFS tree), which no role's observation carries. So, like the numpy ``LSGATeam``, it is
a centralised solver over the instance; here it takes stacked instances and returns a
:class:`~relic_envs.dcop.jax_eval.JaxResult`.

>>> import relic_envs
>>> result = evaluate_lsga("dgc", relic_envs.splits("dgc").test_instances()[:2])
>>> result.costs.shape
(2,)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from baselines.dcop.dsa_jax import dsa_decide_jax
from baselines.dcop.lsga import (
    CENTRE,
    COIN,
    INIT,
    LSGA,
    MUTATE,
    MUTATION_VALUE,
    PARENT,
    roulette_cdf,
    stream,
    uniform_values,
)
from relic_envs.core.instance import Instance
from relic_envs.core.jax_devices import over_devices
from relic_envs.core.registry import get_benchmark
from relic_envs.dcop import _jax_sweep as js
from relic_envs.dcop import jax_eval
from relic_envs.dcop._jax_sweep import jax, jnp
from relic_envs.dcop._sweep import SWEEPS, DCOPBenchmark
from relic_envs.errors import InvalidConfig


def stack_lsga(name: str, instances: Sequence[Instance]) -> js.Batch:
    """Stack instances with the peer pairs LSGA's crossover copies (the problem's ``peers``)."""
    bench = get_benchmark(name)
    if not isinstance(bench, DCOPBenchmark):
        raise InvalidConfig(f"LSGA-DSA needs a DCOP benchmark, got {name!r}")
    return js.stack(jax_eval.problem_module(name).PROBLEM, instances, peers=bench.problem.peers)


def _draw(seed, t, individual, purpose, n: int, width: int = 1):
    u = js.exploration(seed, t, n, width, stream(individual, purpose))
    return u if width > 1 else u[:, 0]


def _crossover_cover(centre, src, dst, mask):
    """JAX twin of ``lsga.crossover_cover`` (padded peer slots are masked out)."""
    n = centre.shape[0]
    cover = jnp.where(centre, jnp.arange(n), -1)
    return cover.at[dst].max(jnp.where(centre[src] & mask, src, -1))


def _solver(problem: js.JaxProblem, settings: LSGA, sweeps: int):
    """``solve(data) -> (cost, best x)`` for one instance."""
    size, d = settings.population, problem.domain
    individuals = jnp.arange(size)

    def costs_of(data, pop):
        return jax.vmap(lambda x: problem.cost(data, x))(pop)

    def anytime(best, best_cost, pop, costs):
        k = jnp.argmin(costs)
        better = costs[k] < best_cost
        return jnp.where(better, pop[k], best), jnp.where(better, costs[k], best_cost)

    def genetic_step(data, pop, costs, t):
        n = pop.shape[1]
        cdf, elite = roulette_cdf(costs, jnp), jnp.argmin(costs)
        mask = data["peer_mask"] > 0

        def child(k, x):
            centre = _draw(data["seed"], t, k, CENTRE, n) < settings.crossover
            pick = jnp.minimum(jnp.searchsorted(cdf, _draw(data["seed"], t, k, PARENT, n), side="right"), size - 1)
            cover = _crossover_cover(centre, data["peer_src"], data["peer_dst"], mask)
            copied = pop[pick[jnp.maximum(cover, 0)], jnp.arange(n)]
            x = jnp.where(cover >= 0, copied, x)
            mutate = _draw(data["seed"], t, k, MUTATE, n) < settings.mutation
            x = jnp.where(mutate, uniform_values(_draw(data["seed"], t, k, MUTATION_VALUE, n), d, jnp), x)
            return jnp.where(k == elite, pop[k], x)

        return jax.vmap(child)(individuals, pop)

    def solve(data):
        x0 = jnp.asarray(data["x0"], jnp.int32)
        n = x0.shape[0]
        drawn = jax.vmap(lambda k: uniform_values(_draw(data["seed"], 0, k, INIT, n), d, jnp))(individuals)
        pop = drawn.at[0].set(x0)
        costs = costs_of(data, pop)
        best, best_cost = pop[jnp.argmin(costs)], costs.min()

        def sweep(carry, t):
            pop, best, best_cost = carry

            def dsa(k, x):
                u = _draw(data["seed"], t, k, COIN, n, d + 1)
                return dsa_decide_jax(x, problem.landscape(data, x), u, p=settings.p, variant="B").astype(jnp.int32)

            pop = jax.vmap(dsa)(individuals, pop)
            costs = costs_of(data, pop)
            best, best_cost = anytime(best, best_cost, pop, costs)
            return (pop, best, best_cost), costs

        def sweeps_from(carry, start, length: int):
            """``length`` sweeps from sweep ``start``; also the population's last costs."""
            carry, costs = jax.lax.scan(sweep, carry, start + jnp.arange(length, dtype=jnp.int32))
            return carry, costs[-1]

        def generation(carry, g):
            # A generation's sweeps, then the GA step, except after the run's last sweep.
            end = (g + 1) * settings.generation
            (pop, best, best_cost), costs = sweeps_from(carry, g * settings.generation, settings.generation)
            crossed = genetic_step(data, pop, costs, end)
            crossed_best, crossed_cost = anytime(best, best_cost, crossed, costs_of(data, crossed))
            last = end >= sweeps
            return (
                jnp.where(last, pop, crossed),
                jnp.where(last, best, crossed_best),
                jnp.where(last, best_cost, crossed_cost),
            ), None

        full, rest = divmod(sweeps, settings.generation)
        carry = (pop, best, best_cost)
        carry, _ = jax.lax.scan(generation, carry, jnp.arange(full, dtype=jnp.int32))
        if rest:
            carry, _ = sweeps_from(carry, full * settings.generation, rest)
        _, best, _ = carry
        return problem.cost(data, best), best

    return solve


def lsga_evaluator(name: str, settings: LSGA | None = None, *, sweeps: int = SWEEPS, x64: bool = True):
    """A compiled ``run(batch) -> (costs, valid, x)`` of LSGA-DSA (batch from :func:`stack_lsga`).

    ``valid`` is all True (LSGA's values are in the domain by construction); it is there
    so the result has the shape of the policy evaluators'.
    """
    problem = jax_eval.problem_module(name).PROBLEM
    batched = jax.jit(over_devices(jax.vmap(_solver(problem, settings or LSGA(), sweeps))))

    def run(batch: js.Batch):
        with jax.enable_x64(x64):
            costs, x = batched(batch.data)
            costs = np.asarray(costs)
            return costs, np.ones(costs.shape, bool), np.asarray(x)

    run.jitted = batched  # for compile-time measurement
    return run


def evaluate_lsga(
    name: str, instances: Sequence[Instance], settings: LSGA | None = None, *, x64: bool = True
) -> jax_eval.JaxResult:
    """LSGA-DSA's 50-sweep answer on every instance, as one compiled program."""
    costs, valid, x = lsga_evaluator(name, settings, x64=x64)(stack_lsga(name, instances))
    return jax_eval.JaxResult(costs, valid, x)
