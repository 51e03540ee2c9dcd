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
- The solver's own random draws come from ``numpy.random.default_rng(instance.seed)``,
  so a run is deterministic given the instance; DSA coins use the instance's ``u`` for
  individual 0 and the solver's generator for the others.
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


class LSGARun:
    """One LSGA-DSA run on one instance, advanced one sweep at a time."""

    def __init__(self, bench: DCOPBenchmark, instance: Instance, settings: LSGA):
        self.problem = bench.problem
        self.instance = instance
        self.settings = settings
        self.rng = np.random.default_rng(int(instance.seed))
        n, d = self.problem.n_vars(instance), self.problem.domain
        pop = self.rng.integers(0, d, size=(settings.population, n))
        pop[0] = np.asarray(instance.x0)
        self.population = pop.astype(np.int64)
        self.costs = np.array([self.problem.cost(instance, x) for x in self.population])
        self.best = self.population[int(np.argmin(self.costs))].copy()
        self.best_cost = float(self.costs.min())
        peers = self.problem.peers(instance)
        self.neighbourhood = [[i] for i in range(n)]
        for a, b in peers:
            self.neighbourhood[a].append(int(b))
            self.neighbourhood[b].append(int(a))
        self.t = 0

    def sweep(self) -> None:
        """One DSA-B sweep of every individual, the anytime update, and maybe a GA step."""
        n, d = self.population.shape[1], self.problem.domain
        for k, x in enumerate(self.population):
            delta = self.problem.landscape(self.instance, x)
            if k == 0:
                u = exploration(int(self.instance.seed), self.t, n, d + 1)
            else:
                u = self.rng.random((n, d + 1))
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
        s = self.settings
        total = self.costs.sum()
        if total > 0:
            fitness = (total - self.costs) / ((s.population - 1) * total)
        else:
            fitness = np.full(s.population, 1.0 / s.population)
        fitness = fitness / fitness.sum()
        elite = int(np.argmin(self.costs))
        parents = self.population.copy()
        n, d = self.population.shape[1], self.problem.domain
        for k in range(s.population):
            if k == elite:
                continue
            for centre in np.flatnonzero(self.rng.random(n) < s.crossover):
                parent = int(self.rng.choice(s.population, p=fitness))
                block = self.neighbourhood[centre]
                self.population[k, block] = parents[parent, block]
            mutate = self.rng.random(n) < s.mutation
            self.population[k, mutate] = self.rng.integers(0, d, size=int(mutate.sum()))


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
