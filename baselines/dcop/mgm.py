"""MGM and MGM-2 (Maheswaran, Pearce & Tambe 2004, "Distributed algorithms for DCOP:
a graphical-game-based approach"), one round per synchronous sweep.

**MGM.** Every variable computes its best unilateral gain on its local landscape
``delta`` (the benchmark's ``landscape``: ``delta[i, cur] - min delta[i]`` is the exact
decrease of the global cost) and sends it to its neighbours; it moves to its best value
only when its gain is positive and larger than every neighbour's. Neighbours are the
benchmark's constraint graph (``DCOPProblem.coupled``: every pair sharing a cost term).
Ties between equal gains go to the lower variable index (the deterministic "lexic"
rule), and ties among best values to the least ``u`` (the evaluator's exploration
tensor); a variable already at a best value never moves. The movers share no cost
term, so the global cost falls by exactly the sum of their gains: MGM is monotone.

**MGM-2.** Each round, each variable becomes an *offerer* with probability ``q`` (the
offerer probability, default 0.5 as in the paper; coin ``u[:, domain] < q``) and picks
one neighbour uniformly at random (from ``numpy.random.default_rng(instance.seed)``)
to offer a joint move. A non-offerer that receives offers evaluates every joint move
of every offer exactly (the benchmark's ``landscape`` with the offerer moved) and
commits to the best one when its joint gain is positive. Committed pairs announce
their joint gain, everyone else its unilateral gain as in MGM; a pair moves when both
partners beat all their other neighbours, a single variable when it beats all its
neighbours (ties: the lower id, a pair's id being its lower index). Groups that move
are never neighbours, so MGM-2 is monotone too.

Where a benchmark's constraint graph is dense, MGM moves few variables per sweep: in
SHDS every device shares the overload terms with every other, so MGM moves exactly one
device per sweep (the one of largest gain) and MGM-2 one device or one pair. That is
the algorithm's definition, not a defect of the implementation; the tables show it.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from baselines.dcop.sweep import TIE_TOL, SweepSolver, best_values, neighbourhoods, wins_against_neighbours
from relic_envs.dcop._explore import exploration
from relic_envs.errors import InvalidConfig


@dataclasses.dataclass
class _State:
    problem: object
    instance: object
    src: np.ndarray
    dst: np.ndarray
    rng: np.random.Generator | None = None


def _start(problem, instance, rng: bool = False) -> _State:
    src, dst = neighbourhoods(problem, instance)
    return _State(problem, instance, src, dst, np.random.default_rng(int(instance.seed)) if rng else None)


@dataclasses.dataclass(frozen=True)
class MGM(SweepSolver):
    """Maximum Gain Message (no parameter)."""

    label = "mgm"

    def start(self, problem, instance) -> _State:
        return _start(problem, instance)

    def sweep(self, state: _State, x: np.ndarray, t: int) -> np.ndarray:
        n, d = x.size, state.problem.domain
        delta = state.problem.landscape(state.instance, x)
        u = exploration(int(state.instance.seed), t, n, d + 1)
        gain, target = best_values(delta, x, u)
        move = (gain > TIE_TOL) & wins_against_neighbours(gain, np.arange(n), state.src, state.dst)
        return np.where(move, target, x)


@dataclasses.dataclass(frozen=True)
class MGM2(SweepSolver):
    """MGM-2 with offerer probability ``q``."""

    q: float = 0.5
    label = "mgm2"

    def __post_init__(self) -> None:
        if not 0.0 <= self.q <= 1.0:
            raise InvalidConfig(f"MGM-2 offerer probability q must lie in [0, 1], got {self.q}")

    def start(self, problem, instance) -> _State:
        return _start(problem, instance, rng=True)

    def sweep(self, state: _State, x: np.ndarray, t: int) -> np.ndarray:
        problem, inst = state.problem, state.instance
        n, d = x.size, problem.domain
        delta = problem.landscape(inst, x)
        u = exploration(int(inst.seed), t, n, d + 1)
        gain, target = best_values(delta, x, u)
        offerer = u[:, d] < self.q
        # Each offerer picks one neighbour uniformly (one draw per variable keeps the stream aligned).
        first = np.searchsorted(state.src, np.arange(n))
        degree = np.bincount(state.src, minlength=n)
        pick = state.rng.random(n)
        offers: dict[int, list[int]] = {}
        for i in np.flatnonzero(offerer & (degree > 0)):
            j = int(state.dst[first[i] + int(pick[i] * degree[i])])
            if not offerer[j]:
                offers.setdefault(j, []).append(int(i))
        key_gain, key_id = gain.copy(), np.arange(n)
        new = np.where(gain > TIE_TOL, target, x)
        partner = np.full(n, -1)
        for j, senders in offers.items():
            best = (TIE_TOL, -1, 0, 0)
            for i in senders:
                joint = self._joint_gain(problem, inst, x, delta, i, j)
                a, b = np.unravel_index(int(np.argmax(joint)), joint.shape)
                if joint[a, b] > best[0] + TIE_TOL:
                    best = (float(joint[a, b]), i, int(a), int(b))
            g, i, a, b = best
            if i >= 0:
                partner[i], partner[j] = j, i
                key_gain[[i, j]] = g
                key_id[[i, j]] = min(i, j)
                new[i], new[j] = a, b
        skip = partner[state.src] == state.dst
        win = (key_gain > TIE_TOL) & wins_against_neighbours(key_gain, key_id, state.src, state.dst, skip)
        paired = partner >= 0
        win[paired] &= win[partner[paired]]  # a pair moves only when both partners say go
        return np.where(win, new, x)

    @staticmethod
    def _joint_gain(problem, inst, x, delta, i: int, j: int) -> np.ndarray:
        """``(d, d)``: exact global cost decrease of ``x_i <- a, x_j <- b``."""
        d = delta.shape[1]
        joint = np.empty((d, d))
        for a in range(d):
            moved = x.copy()
            moved[i] = a
            after_i = moved if a != x[i] else x
            delta_a = problem.landscape(inst, after_i) if a != x[i] else delta
            joint[a] = (delta[i, x[i]] - delta[i, a]) + (delta_a[j, x[j]] - delta_a[j])
        return joint
