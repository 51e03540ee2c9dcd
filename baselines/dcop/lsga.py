"""LSGA-DSA: the Local Search Genetic Algorithm framework (Chen, Liu, He & Yu 2020)
instantiated with DSA, as the paper's second human DCOP baseline (Appendix D.3).

Our reading. The published text was not available to us; this follows the paper's
one-line description ("distributed local search with population-level crossover and
mutation") and the structure of the authors' group's public prototype code:

- A population of ``K = 10`` complete assignments (individuals). Individual 0 starts
  at the instance's initial assignment, the others uniformly at random.
- Every sweep each individual takes one DSA-B step (``baselines.dcop.dsa``, same
  ``p``) on its own local landscapes.
- Anytime mechanism: after every sweep the global cost of every individual is
  aggregated (in a real DCOP, up a BFS tree) and the best assignment ever seen is
  kept; it is the algorithm's answer.
- Every ``generation = 5`` sweeps (the prototype crosses every 10 of 800 cycles; we
  scale to the 50-sweep budget), a GA step: roulette fitness
  ``f_i = (S - c_i) / ((K - 1) S)`` with ``c_i`` the individual's cost and ``S`` their
  sum; each variable becomes a crossover centre with probability ``crossover = 0.1``
  and copies its own and its peers' values from a roulette-chosen parent into the
  individual; then each value mutates to a uniform value with probability
  ``mutation = 0.001``. The best individual is kept unchanged (elitism).
- Randomness is counter-based, like the roles' ``u``: every draw is a pure function
  of ``(instance seed, sweep, individual, purpose)`` through
  ``relic_envs.dcop._explore.exploration`` with its own ``stream`` (:func:`stream`).
  Individual 0's DSA coins are exactly the instance's ``u`` (stream 0), so until the
  first GA step it walks the same path as plain DSA-B. A run is deterministic given the
  instance, and the JAX twin (``baselines.dcop.lsga_jax``) reproduces it bit for bit.
- Roulette selection draws one uniform ``r`` per crossover centre and picks the first
  individual whose cumulative fitness exceeds it; fitness is clipped at 0 (a negative
  cost could otherwise make it negative) and falls back to uniform when all are 0.
- Crossover centres are applied in increasing variable order, each copying its block
  from the pre-crossover population, so a variable ends with the value of the
  highest-numbered centre whose block contains it (computed in one vectorised pass).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from tqdm.auto import tqdm

from baselines.dcop.dsa import dsa_decide
from relic_envs.core.benchmark import ROLES
from relic_envs.core.instance import Instance
from relic_envs.core.registry import get_benchmark
from relic_envs.core.rollout import RolloutResult
from relic_envs.dcop._explore import exploration
from relic_envs.dcop._sweep import SWEEPS, DCOPBenchmark
from relic_envs.errors import InvalidConfig


@dataclasses.dataclass(frozen=True)
class LSGA:
    """LSGA-DSA settings (see the module doc for what each does)."""

    population: int = 10
    p: float = 0.7
    generation: int = 5
    crossover: float = 0.1
    mutation: float = 0.001

    def __post_init__(self) -> None:
        if self.population < 2:
            raise InvalidConfig(f"LSGA population must be >= 2, got {self.population}")
        if self.generation < 1:
            raise InvalidConfig(f"LSGA generation must be >= 1, got {self.generation}")
        for name in ("p", "crossover", "mutation"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise InvalidConfig(f"LSGA {name} must lie in [0, 1], got {getattr(self, name)}")


# Purposes of the counter-based draws (``stream = STREAMS_PER_INDIVIDUAL * k + purpose``).
COIN, INIT, CENTRE, PARENT, MUTATE, MUTATION_VALUE = range(6)
STREAMS_PER_INDIVIDUAL = 8


def stream(individual: int, purpose: int) -> int:
    """The exploration stream of one individual's draws for one purpose (0: the roles' ``u``)."""
    return STREAMS_PER_INDIVIDUAL * individual + purpose


def uniform_values(u, domain: int, xp=np):
    """Uniform integers in ``[0, domain)`` from uniforms (exact: ``u`` is a multiple of 2**-24).

    ``xp`` is the array namespace (``jax.numpy`` for the JAX twin), as in ``dsa_decide``.
    """
    return xp.minimum(xp.floor(u * domain), domain - 1).astype(xp.int32)


def roulette_cdf(costs, xp=np):
    """Cumulative selection probabilities ``f_i = (S - c_i) / ((K - 1) S)``, normalised."""
    k, total = costs.shape[0], costs.sum()
    positive = total > 0
    fitness = xp.where(positive, xp.maximum((total - costs) / ((k - 1) * xp.where(positive, total, 1.0)), 0.0), 0.0)
    fitness = xp.where(fitness.sum() > 0, fitness, 1.0)
    cdf = xp.cumsum(fitness)
    return cdf / cdf[-1]


def crossover_cover(centre: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """For each variable, the highest-numbered crossover centre whose block holds it (-1: none).

    A centre's block is itself and its peers; ``(src, dst)`` lists each peer pair in both
    directions.
    """
    n = centre.size
    cover = np.where(centre, np.arange(n), -1)
    active = centre[src]
    np.maximum.at(cover, dst[active], src[active])
    return cover


class LSGARun:
    """One LSGA-DSA run on one instance, advanced one sweep at a time."""

    def __init__(self, bench: DCOPBenchmark, instance: Instance, settings: LSGA):
        self.problem = bench.problem
        self.instance = instance
        self.settings = settings
        self.seed = int(instance.seed)
        d = self.problem.domain
        pop = np.stack([uniform_values(self._draw(0, k, INIT), d) for k in range(settings.population)]).astype(np.int64)
        pop[0] = np.asarray(instance.x0)
        self.population = pop
        self.costs = np.array([self.problem.cost(instance, x) for x in self.population])
        self.best = self.population[int(np.argmin(self.costs))].copy()
        self.best_cost = float(self.costs.min())
        peers = np.asarray(self.problem.peers(instance), np.int64).reshape(-1, 2)
        self.peer_src = np.concatenate([peers[:, 0], peers[:, 1]])
        self.peer_dst = np.concatenate([peers[:, 1], peers[:, 0]])
        self.t = 0

    def _draw(self, t: int, individual: int, purpose: int, width: int = 1) -> np.ndarray:
        u = exploration(self.seed, t, self.problem.n_vars(self.instance), width, stream(individual, purpose))
        return u if width > 1 else u[:, 0]

    def sweep(self) -> None:
        """One DSA-B sweep of every individual, the anytime update, and maybe a GA step."""
        d = self.problem.domain
        for k, x in enumerate(self.population):
            delta = self.problem.landscape(self.instance, x)
            u = self._draw(self.t, k, COIN, d + 1)
            self.population[k] = dsa_decide(x, delta, u, p=self.settings.p, variant="B").astype(np.int64)
        self.t += 1
        self._evaluate()
        if self.t % self.settings.generation == 0 and self.t < SWEEPS:
            self._genetic_step()
            self._evaluate()

    def _evaluate(self) -> None:
        self.costs = np.array([self.problem.cost(self.instance, x) for x in self.population])
        k = int(np.argmin(self.costs))
        if self.costs[k] < self.best_cost:
            self.best_cost, self.best = float(self.costs[k]), self.population[k].copy()

    def _genetic_step(self) -> None:
        s, d, t = self.settings, self.problem.domain, self.t
        cdf = roulette_cdf(self.costs)
        elite = int(np.argmin(self.costs))
        parents = self.population.copy()
        for k in range(s.population):
            if k == elite:
                continue
            centre = self._draw(t, k, CENTRE) < s.crossover
            pick = np.minimum(np.searchsorted(cdf, self._draw(t, k, PARENT), side="right"), s.population - 1)
            cover = crossover_cover(centre, self.peer_src, self.peer_dst)
            take = cover >= 0
            self.population[k, take] = parents[pick[cover[take]], np.flatnonzero(take)]
            mutate = self._draw(t, k, MUTATE) < s.mutation
            self.population[k, mutate] = uniform_values(self._draw(t, k, MUTATION_VALUE), d)[mutate]


class LSGATeam(dict):
    """LSGA-DSA as a team for ``rollout`` and the envs.

    This is a centralised simulation of LSGA's distributed population: on ``reset`` it
    starts an :class:`LSGARun` on the instance, and at each sweep it advances the
    population and answers, for each role, the best-so-far assignment of that role's
    variables. Its policies read the instance, not only their observation, so it is a
    reference solver, not a decentralised policy; the env's final cost equals the
    solver's anytime answer.
    """

    def __init__(self, benchmark: str, settings: LSGA | None = None):
        bench = get_benchmark(benchmark)
        if not isinstance(bench, DCOPBenchmark):
            raise InvalidConfig(f"LSGA-DSA needs a DCOP benchmark, got {benchmark!r}")
        self.bench, self.settings = bench, settings or LSGA()
        self.run: LSGARun | None = None
        super().__init__({r: self._policy(r) for r in ROLES})

    def reset(self, instance: Instance) -> None:
        self.run = LSGARun(self.bench, instance, self.settings)
        self.owned = {r: self.bench.owned(instance, r) for r in ROLES}

    def _policy(self, role: str):
        def act(obs):
            if self.run is None:
                raise RuntimeError("LSGATeam.reset(instance) must be called before the first sweep")
            while self.run.t <= int(obs["t"]):
                self.run.sweep()
            return self.run.best[self.owned[role]].copy()

        return act


def solve_lsga(
    benchmark: str, instances: Sequence[Instance], settings: LSGA | None = None, *, progress: bool = False
) -> list[RolloutResult]:
    """Run LSGA-DSA for 50 sweeps on every instance; the answer is the best-ever assignment."""
    bench = get_benchmark(benchmark)
    if not isinstance(bench, DCOPBenchmark):
        raise InvalidConfig(f"LSGA-DSA needs a DCOP benchmark, got {benchmark!r}")
    settings = settings or LSGA()
    results = []
    for instance in tqdm(instances, desc=f"lsga-dsa {benchmark}", disable=not progress, leave=False):
        run = LSGARun(bench, instance, settings)
        for _ in range(SWEEPS):
            run.sweep()
        raw = float(bench.problem.cost(instance, run.best))
        results.append(RolloutResult(raw, bench.score(raw), SWEEPS))
    return results
