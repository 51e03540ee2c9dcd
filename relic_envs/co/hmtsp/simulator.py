"""HMTSP cost (Eq. hmtsp-route-cost, hmtsp) and the constructive state.

Route ``P_k = (d_k, v_1, ..., v_n, d_k)`` costs
``L_k = sum_h (gamma_k l(v_{h-1}, v_h) + s_{k,c(v_h)}) + gamma_k l(v_n, d_k)`` (an empty
route costs 0) and ``C = sum_k L_k + 0.5 max_k L_k + 5 sum_k max(L_k - B_k, 0)``
(minimised; ``score = -C``).

**Construction.** Vehicles take turns A, B, C, A, ...; at its turn vehicle ``k``
appends one unassigned customer to the end of its route or skips (``-1``). After three
consecutive skips (every vehicle skipped its latest turn) the evaluator *forces* the
globally cheapest assignment: the (vehicle, customer) pair of least incremental cost
(ties: the lowest vehicle, then the lowest customer id); the turn then passes on as
usual. The incremental cost of customer ``j`` for vehicle ``k`` at node ``u`` is the
change of ``L_k`` when ``j`` is appended:
``gamma_k (l(u, j) + l(j, d_k) - l(u, d_k)) + s_{k,c(j)}``. An invalid answer is
repaired to the vehicle's cheapest candidate (ties: the lowest id). The episode ends
when every customer is assigned; mid-episode the objective is ``C`` of the partial
routes closed at their depots.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from relic_envs.co._construct import Decision, cheapest
from relic_envs.co.hmtsp.generator import VEHICLES, HMTSPInstance

BALANCE, EXCESS = 0.5, 5.0


def route_costs(instance: HMTSPInstance, routes: list[list[int]]) -> np.ndarray:
    """``(3,)`` ``L_k`` of each vehicle's route (customer ids in visiting order)."""
    dist = instance.distances()
    n = instance.n_customers
    out = np.zeros(VEHICLES)
    for k, route in enumerate(routes):
        if not route:
            continue
        path = [n + k, *route, n + k]
        travel = sum(dist[a, b] for a, b in zip(path[:-1], path[1:]))
        out[k] = instance.travel[k] * travel + sum(instance.service[k, instance.task_type[v]] for v in route)
    return out


def cost_of(instance: HMTSPInstance, lengths: np.ndarray) -> float:
    """``C_HMTSP`` from the three route costs."""
    lengths = np.asarray(lengths, dtype=np.float64)
    return float(lengths.sum() + BALANCE * lengths.max() + EXCESS * np.maximum(lengths - instance.budget, 0.0).sum())


def cost(instance: HMTSPInstance, routes: list[list[int]]) -> float:
    """``C_HMTSP`` of complete (or partial) routes."""
    return cost_of(instance, route_costs(instance, routes))


def route_bound(instance: HMTSPInstance) -> np.ndarray:
    """``(3,)`` upper bound of ``L_k`` over every route: ``N + 1`` longest legs and ``N`` dearest services."""
    n = instance.n_customers
    longest = float(instance.distances().max())
    return instance.travel * longest * (n + 1) + n * instance.service.max(axis=1)


def score_bounds(instance: HMTSPInstance) -> tuple[float, float]:
    """``C`` is non-negative and increasing in every ``L_k``, so the route bounds bound it."""
    return -cost_of(instance, route_bound(instance)), 0.0


def max_steps(instance: HMTSPInstance) -> int:
    """Each customer takes at most three turns (two skips and a choice, or three skips and a forced one)."""
    return 3 * instance.n_customers


def state_space(instance: HMTSPInstance) -> spaces.Box:
    """Bounds of :meth:`State.state_vector`: turn (0..2), consecutive skips (0..2), the three
    current nodes (0..N+2), the three ``L_k`` (``[0, route_bound]`` with a rounding slack),
    then per customer its vehicle (-1 if unassigned) and its position in that route (-1 if
    unassigned)."""
    n = instance.n_customers
    bound = route_bound(instance) * (1 + 1e-9) + 1e-9
    low = np.concatenate([[0, 0], np.zeros(3), np.zeros(3), np.full(2 * n, -1.0)])
    high = np.concatenate([[2, 2], np.full(3, n + 2.0), bound, np.full(n, 2.0), np.full(n, n - 1.0)])
    return spaces.Box(low.astype(np.float64), high.astype(np.float64), dtype=np.float64)


class State:
    """The routes under construction and whose turn it is."""

    def __init__(self, instance: HMTSPInstance):
        self.instance = instance
        n = instance.n_customers
        self.n = n
        self.dist = instance.distances()
        self.depot = n + np.arange(VEHICLES)
        self.cur = self.depot.copy()
        self.routes: list[list[int]] = [[] for _ in range(VEHICLES)]
        self.lengths = np.zeros(VEHICLES)  # L_k of the routes closed at their depots
        self.open = np.zeros(VEHICLES)  # L_k without the return leg
        self.vehicle = np.full(n, -1, dtype=np.int64)
        self.position = np.full(n, -1, dtype=np.int64)
        self.turn = 0
        self.skips = 0
        self.forced = 0

    # -- what the roles see ----------------------------------------------------------
    def unassigned(self) -> np.ndarray:
        return np.flatnonzero(self.vehicle < 0)

    def increments(self, k: int) -> np.ndarray:
        """``(N,)`` incremental cost of appending each customer to route ``k`` (all customers)."""
        inst, u, d = self.instance, self.cur[k], self.depot[k]
        travel = self.dist[u, : self.n] + self.dist[: self.n, d] - self.dist[u, d]
        return inst.travel[k] * travel + inst.service[k, inst.task_type]

    def budget_left(self, k: int) -> float:
        return float(self.instance.budget[k] - self.lengths[k])

    # -- the construction ------------------------------------------------------------
    def decision(self) -> Decision | None:
        free = self.unassigned()
        if not free.size:
            return None
        return cheapest(self.turn, free, self.increments(self.turn)[free], can_skip=True)

    def apply(self, choice: int) -> None:
        if choice >= 0:
            self._append(self.turn, choice)
            self.skips = 0
        else:
            self.skips += 1
            if self.skips == VEHICLES:
                free = self.unassigned()
                table = np.stack([self.increments(k)[free] for k in range(VEHICLES)])  # (3, m)
                k, i = np.unravel_index(np.argmin(table), table.shape)  # row-major: lowest vehicle, then id
                self._append(int(k), int(free[i]))
                self.forced += 1
                self.skips = 0
        self.turn = (self.turn + 1) % VEHICLES

    def _append(self, k: int, j: int) -> None:
        inst = self.instance
        self.open[k] += inst.travel[k] * self.dist[self.cur[k], j] + inst.service[k, inst.task_type[j]]
        self.cur[k] = j
        self.lengths[k] = self.open[k] + inst.travel[k] * self.dist[j, self.depot[k]]
        self.vehicle[j] = k
        self.position[j] = len(self.routes[k])
        self.routes[k].append(j)

    def objective(self) -> float:
        return cost_of(self.instance, self.lengths)

    def counters(self) -> dict:
        return {"forced": self.forced, "budget_excess": np.maximum(self.lengths - self.instance.budget, 0.0).tolist()}

    def state_vector(self) -> np.ndarray:
        head = np.concatenate([[self.turn, self.skips], self.cur, self.lengths])
        return np.concatenate([head, self.vehicle, self.position]).astype(np.float64)
