"""Classical DCOP algorithms on the benchmarks' synchronous-sweep simulator.

A :class:`SweepSolver` is one algorithm: ``start(problem, instance)`` makes its
per-instance state, ``sweep(state, x, t)`` returns the assignment after sweep ``t``
from the assignment ``x`` before it. Every local cost comes from the benchmark's own
``landscape``/``cost`` (``relic_envs.dcop``), never from a copy.

Two ways to run one, which give the same costs (``tests/dcop/test_classical.py``):

- :func:`run_sweeps`: the whole-batch solver, 50 sweeps from each instance's ``x0``,
  recording the global cost after every sweep (for tables and plots).
- :class:`CentralTeam`: a team for ``relic_envs.rollout`` and the PettingZoo envs. The
  algorithms that exchange messages with their neighbours (MGM, MGM-2, Max-Sum) need
  values and gains of variables other roles own, which no role's observation carries;
  so, like ``LSGATeam``, this is a centralised simulation of the message passing: on
  ``reset`` it starts the algorithm on the instance, and at each sweep it answers every
  role's slice of the algorithm's next assignment. It checks that the env's ``cur``
  matches its own assignment, so it cannot drift out of step silently. DSA needs
  nothing beyond a role's observation and also has a decentralised team
  (``baselines.dcop.dsa.dsa_team``).
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from relic_envs.core.benchmark import ROLES
from relic_envs.core.instance import Instance
from relic_envs.core.registry import get_benchmark
from relic_envs.core.rollout import RolloutResult
from relic_envs.dcop._sweep import SWEEPS, DCOPBenchmark, DCOPProblem
from relic_envs.errors import InvalidConfig

TIE_TOL = 1e-9


class SweepSolver(abc.ABC):
    """One synchronous-sweep DCOP algorithm (see the module doc)."""

    label: str = "solver"

    @abc.abstractmethod
    def start(self, problem: DCOPProblem, instance: Instance) -> Any:
        """The algorithm's per-instance state (messages, neighbourhoods, random streams)."""

    @abc.abstractmethod
    def sweep(self, state: Any, x: np.ndarray, t: int) -> np.ndarray:
        """The assignment after sweep ``t`` (int64, shape ``(N,)``), from ``x`` before it."""


def dcop_benchmark(benchmark: str | DCOPBenchmark) -> DCOPBenchmark:
    bench = get_benchmark(benchmark) if isinstance(benchmark, str) else benchmark
    if not isinstance(bench, DCOPBenchmark):
        raise InvalidConfig(f"benchmark must be a DCOP benchmark (dgc, dimes, sensor_dcsp, shds), got {benchmark!r}")
    return bench


@dataclasses.dataclass(frozen=True)
class SweepTrace:
    """One run: the global cost before the first sweep and after each (``costs[t]``, 51
    entries), and the final assignment."""

    costs: np.ndarray
    x: np.ndarray

    @property
    def final(self) -> float:
        return float(self.costs[-1])


def run_sweeps(
    benchmark: str | DCOPBenchmark,
    solver: SweepSolver,
    instances: Sequence[Instance],
    *,
    sweeps: int = SWEEPS,
    progress: bool = False,
) -> list[SweepTrace]:
    """Run ``solver`` for ``sweeps`` sweeps from each instance's ``x0``."""
    bench = dcop_benchmark(benchmark)
    problem = bench.problem
    traces = []
    for instance in tqdm(instances, desc=f"{solver.label} {bench.name}", disable=not progress, leave=False):
        state = solver.start(problem, instance)
        x = np.asarray(instance.x0, dtype=np.int64).copy()
        costs = [problem.cost(instance, x)]
        for t in range(sweeps):
            x = np.asarray(solver.sweep(state, x, t), dtype=np.int64)
            costs.append(problem.cost(instance, x))
        traces.append(SweepTrace(np.array(costs), x))
    return traces


def solve(benchmark: str | DCOPBenchmark, solver: SweepSolver, instances: Sequence[Instance], *, progress: bool = False) -> list[RolloutResult]:
    """:func:`run_sweeps` as :class:`RolloutResult` objects (the ``rollout`` format)."""
    bench = dcop_benchmark(benchmark)
    return [RolloutResult(tr.final, bench.score(tr.final), SWEEPS) for tr in run_sweeps(bench, solver, instances, progress=progress)]


class CentralTeam(dict):
    """A :class:`SweepSolver` as a team for ``rollout`` and the envs (see the module doc)."""

    def __init__(self, benchmark: str | DCOPBenchmark, solver: SweepSolver):
        self.bench = dcop_benchmark(benchmark)
        self.solver = solver
        self._state: Any = None
        super().__init__({r: self._policy(r) for r in ROLES})

    def reset(self, instance: Instance) -> None:
        self.instance = instance
        self._state = self.solver.start(self.bench.problem, instance)
        self.owned = {r: self.bench.owned(instance, r) for r in ROLES}
        self.x = np.asarray(instance.x0, dtype=np.int64).copy()
        self.t = 0
        self.next: np.ndarray | None = None

    def _policy(self, role: str):
        def act(obs):
            if self._state is None:
                raise RuntimeError("CentralTeam.reset(instance) must be called before the first sweep")
            t = int(obs["t"])
            if t != self.t:
                if t != self.t + 1 or self.next is None:
                    raise RuntimeError(f"CentralTeam is at sweep {self.t} and was asked for sweep {t}")
                self.x, self.t, self.next = self.next, t, None
            if not np.array_equal(np.asarray(obs["cur"]), self.x[self.owned[role]]):
                raise RuntimeError(f"role {role}'s cur differs from the team's assignment at sweep {t}")
            if self.next is None:
                self.next = np.asarray(self.solver.sweep(self._state, self.x.copy(), t), dtype=np.int64)
            return self.next[self.owned[role]].copy()

        return act


def neighbourhoods(problem: DCOPProblem, instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    """Both directions of every coupled pair: ``(src, dst)`` arrays, sorted by ``src``."""
    pairs = np.asarray(problem.coupled(instance), dtype=np.int64).reshape(-1, 2)
    src = np.concatenate([pairs[:, 0], pairs[:, 1]])
    dst = np.concatenate([pairs[:, 1], pairs[:, 0]])
    order = np.lexsort((dst, src))
    return src[order], dst[order]


def best_values(delta: np.ndarray, cur: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each variable's gain ``delta[cur] - min delta`` and a best value (ties: least ``u``,
    and the current value when it is among the best, so a zero gain never moves)."""
    n, d = delta.shape
    rows = np.arange(n)
    now = delta[rows, cur]
    best = delta.min(axis=1)
    tied = delta <= best[:, None] + TIE_TOL
    target = np.where(tied, u[:, :d], np.inf).argmin(axis=1)
    gain = now - best
    target = np.where(gain > TIE_TOL, target, cur)
    return gain, target


def wins_against_neighbours(key_gain: np.ndarray, key_id: np.ndarray, src: np.ndarray, dst: np.ndarray, skip: np.ndarray | None = None) -> np.ndarray:
    """``True`` for a variable whose ``(gain, -id)`` beats every neighbour's (ties: lower id wins).

    ``skip[e]`` excludes a directed edge from the comparison (MGM-2's partner).
    """
    n = key_gain.size
    g_s, g_d = key_gain[src], key_gain[dst]
    beats = (g_s > g_d + TIE_TOL) | ((np.abs(g_s - g_d) <= TIE_TOL) & (key_id[src] < key_id[dst]))
    if skip is not None:
        beats |= skip
    losses = np.bincount(src[~beats], minlength=n)
    return losses == 0
