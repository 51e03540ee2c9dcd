"""FSTSP cost (Eq. fstsp) and the constructive state of synchronised sorties.

``C = T_sync + 0.05 D_truck`` (minimised; ``score = -C``): ``T_sync`` is the time at
which truck and drone are back at the depot together (the final truck return
included), ``D_truck`` the truck's total distance. Distances are Euclidean; the truck
travels at ``truck_speed``, the drone at ``drone_speed``; serving takes no time.

**Epochs.** Truck and drone stand together at the launch node ``u`` (the depot first)
at time ``t``. One epoch serves at least one customer:

1. **A** nominates a drone customer ``a``: an unserved drone-eligible customer whose
   conservative out-and-back flight fits the endurance, ``2 l(u, a) / v_d <= E``; or
   ``-1`` (no sortie). A is not asked when there is no such customer (``a = -1``).
2. **B** nominates a truck customer ``b``. Without a sortie (``a = -1``) ``b`` is any
   unserved customer and ``-1`` is not allowed; the truck drives ``u -> b`` and the
   epoch ends there (``t += l(u, b) / v_t``). With a sortie, ``b`` is an unserved
   customer other than ``a`` at which the two could meet within the endurance,
   ``max(l(u, b) / v_t, (l(u, a) + l(a, b)) / v_d) <= E``, or ``-1`` (the truck waits
   at ``u``); B is not asked when there is no such customer (``b = -1``).
3. **C** (sorties only) picks the recovery node ``r``. The truck's ETA at ``r``
   (time since launch) is ``l(u, b)/v_t + l(b, r)/v_t`` (``l(u, r)/v_t`` when
   ``b = -1``), the drone's ``(l(u, a) + l(a, r)) / v_d``. Candidates: the truck's
   first stop ``f`` (``b``, or ``u`` when ``b = -1``: always feasible by the checks
   above), every other unserved customer except ``a``, and the depot when no other
   customer is left, each kept iff ``max(truck ETA, drone ETA) <= E`` (the endurance
   covers the drone's wait: Murray & Chu's rule). ``-1`` is not allowed. The epoch
   takes ``max(truck ETA, drone ETA)``; the truck serves ``b`` and ``r`` (when
   ``r`` is an unserved customer), the drone serves ``a``; both continue from ``r``.

When no customer is left the truck (with the drone) returns to the depot. Invalid
answers are repaired to the cheapest candidate (ties: the lowest id): A the least
drone round trip, B the nearest customer, C the earliest rendezvous
``max(truck ETA, drone ETA)``. Mid-episode the objective is the cost of the partial
tour closed at the depot.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from relic_envs.co._construct import SKIP, Decision, cheapest
from relic_envs.co.fstsp.generator import FSTSPInstance

DISTANCE_WEIGHT = 0.05
STAGE_A, STAGE_B, STAGE_C = 0, 1, 2


def cost(instance: FSTSPInstance, epochs: list[tuple[int, int, int, int]]) -> float:
    """``C_FSTSP`` of a sequence of epochs ``(u, a, b, r)`` from the depot (``-1``: none).

    A truck move has ``a = -1`` and ``r = b``. Recomputed from scratch (the tests' reference).
    """
    dist, vt, vd = instance.distances(), instance.truck_speed, instance.drone_speed
    t = d_truck = 0.0
    u = 0
    for launch, a, b, r in epochs:
        assert launch == u, (launch, u)
        path = [u] + ([b] if b >= 0 and b != r else []) + [r]
        leg = sum(dist[x, y] for x, y in zip(path[:-1], path[1:]))
        drone = (dist[u, a] + dist[a, r]) / vd if a >= 0 else 0.0
        t += max(leg / vt, drone)
        d_truck += leg
        u = r
    t += dist[u, 0] / vt
    d_truck += dist[u, 0]
    return float(t + DISTANCE_WEIGHT * d_truck)


def time_bound(instance: FSTSPInstance) -> float:
    """No valid tour takes longer: N epochs of at most ``max(longest leg / v_t, E)`` and the return."""
    leg = float(instance.distances().max()) / instance.truck_speed
    return instance.n_customers * max(leg, instance.endurance) + leg


def distance_bound(instance: FSTSPInstance) -> float:
    """At most two legs per epoch and the return."""
    return (2 * instance.n_customers + 1) * float(instance.distances().max())


def score_bounds(instance: FSTSPInstance) -> tuple[float, float]:
    return -(time_bound(instance) + DISTANCE_WEIGHT * distance_bound(instance)), 0.0


def max_steps(instance: FSTSPInstance) -> int:
    """At most three decisions per epoch, and every epoch serves a customer."""
    return 3 * instance.n_customers


def state_space(instance: FSTSPInstance) -> spaces.Box:
    """Bounds of :meth:`State.state_vector`: stage (0..2), launch node, ``t``, ``D_truck``, the
    pending ``a`` and ``b`` (-1 if none), then per customer who served it (-1 none, 0 truck,
    1 drone) and when (-1 if not yet)."""
    n = instance.n_customers
    tb, db = time_bound(instance) * (1 + 1e-9), distance_bound(instance) * (1 + 1e-9)
    low = np.concatenate([[0, 0, 0, 0, -1, -1], np.full(2 * n, -1.0)])
    high = np.concatenate([[2, n, tb, db, n, n], np.full(n, 1.0), np.full(n, tb)])
    return spaces.Box(low.astype(np.float64), high.astype(np.float64), dtype=np.float64)


class State:
    """The truck tour and drone sorties under construction."""

    def __init__(self, instance: FSTSPInstance):
        self.instance = instance
        self.n = instance.n_customers
        self.dist = instance.distances()
        self.vt, self.vd, self.endurance = instance.truck_speed, instance.drone_speed, instance.endurance
        self.unserved = np.ones(self.n + 1, dtype=bool)
        self.unserved[0] = False
        self.eligible = np.concatenate([[False], instance.eligible])
        self.cur = 0
        self.t = 0.0
        self.d_truck = 0.0
        self.stage = STAGE_A
        self.a = self.b = SKIP
        self.served_by = np.full(self.n, -1, dtype=np.int64)  # by customer row: 0 truck, 1 drone
        self.served_at = np.full(self.n, -1.0)
        self.epochs: list[tuple[int, int, int, int]] = []  # (u, a, b, r), as cost() reads them
        self.finished = False
        self._skip_empty()

    # -- candidate sets ----------------------------------------------------------------
    def drone_candidates(self) -> np.ndarray:
        trip = 2 * self.dist[self.cur] / self.vd
        return np.flatnonzero(self.unserved & self.eligible & (trip <= self.endurance))

    def truck_candidates(self) -> np.ndarray:
        free = self.unserved.copy()
        if self.a == SKIP:
            return np.flatnonzero(free)
        free[self.a] = False
        meet = np.maximum(self.dist[self.cur] / self.vt, (self.dist[self.cur, self.a] + self.dist[self.a]) / self.vd)
        return np.flatnonzero(free & (meet <= self.endurance))

    def etas(self) -> tuple[np.ndarray, np.ndarray]:
        """``(N + 1,)`` truck and drone ETAs (since launch) at every node, for the pending sortie."""
        u, a, b = self.cur, self.a, self.b
        if b == SKIP:
            truck = self.dist[u] / self.vt
        else:
            truck = (self.dist[u, b] + self.dist[b]) / self.vt
            truck[b] = self.dist[u, b] / self.vt
        drone = (self.dist[u, a] + self.dist[a]) / self.vd
        return truck, drone

    def recovery_candidates(self) -> np.ndarray:
        first = self.b if self.b != SKIP else self.cur
        others = self.unserved.copy()
        others[self.a] = False
        if self.b != SKIP:
            others[self.b] = False
        if not others.any():
            others[0] = True  # the last sortie may end at the depot
        truck, drone = self.etas()
        keep = others & (np.maximum(truck, drone) <= self.endurance)
        keep[first] = True
        return np.flatnonzero(keep)

    # -- the construction ------------------------------------------------------------
    def decision(self) -> Decision | None:
        if self.finished:
            return None
        if self.stage == STAGE_A:
            ids = self.drone_candidates()
            return cheapest(0, ids, 2 * self.dist[self.cur, ids] / self.vd, can_skip=True)
        if self.stage == STAGE_B:
            ids = self.truck_candidates()
            return cheapest(1, ids, self.dist[self.cur, ids], can_skip=self.a != SKIP)
        ids = self.recovery_candidates()
        truck, drone = self.etas()
        return cheapest(2, ids, np.maximum(truck, drone)[ids], can_skip=False)

    def _skip_empty(self) -> None:
        """Pass over stages whose role has no candidate (A: no drone customer; B in a sortie)."""
        if self.stage == STAGE_A and not self.drone_candidates().size:
            self.a, self.stage = SKIP, STAGE_B
        if self.stage == STAGE_B and self.a != SKIP and not self.truck_candidates().size:
            self.b, self.stage = SKIP, STAGE_C

    def apply(self, choice: int) -> None:
        if self.stage == STAGE_A:
            self.a, self.stage = choice, STAGE_B
        elif self.stage == STAGE_B:
            self.b = choice
            if self.a == SKIP:
                self._close(self.b)
            else:
                self.stage = STAGE_C
        else:
            self._close(choice)
        if not self.finished:
            self._skip_empty()

    def _close(self, r: int) -> None:
        """End the epoch with both vehicles at ``r``."""
        u, a, b = self.cur, self.a, self.b
        path = [u] + ([b] if b != SKIP and b != r else []) + [r]
        leg = float(sum(self.dist[x, y] for x, y in zip(path[:-1], path[1:])))
        drone = (self.dist[u, a] + self.dist[a, r]) / self.vd if a != SKIP else 0.0
        clock = self.t
        for x, y in zip(path[:-1], path[1:]):
            clock += self.dist[x, y] / self.vt
            if self.unserved[y]:
                self._serve(y, 0, clock)
        if a != SKIP:
            self._serve(a, 1, self.t + self.dist[u, a] / self.vd)
        self.t += max(leg / self.vt, drone)
        self.d_truck += leg
        self.epochs.append((u, a, b, r))
        self.cur, self.a, self.b, self.stage = r, SKIP, SKIP, STAGE_A
        if not self.unserved.any():
            self.t += self.dist[r, 0] / self.vt
            self.d_truck += self.dist[r, 0]
            self.cur = 0
            self.finished = True

    def _serve(self, node: int, vehicle: int, when: float) -> None:
        self.unserved[node] = False
        self.served_by[node - 1] = vehicle
        self.served_at[node - 1] = when

    def objective(self) -> float:
        back = 0.0 if self.finished else self.dist[self.cur, 0]
        return float(self.t + back / self.vt + DISTANCE_WEIGHT * (self.d_truck + back))

    def counters(self) -> dict:
        return {"sorties": sum(1 for e in self.epochs if e[1] != SKIP), "drone_served": int((self.served_by == 1).sum())}

    def state_vector(self) -> np.ndarray:
        head = [self.stage, self.cur, self.t, self.d_truck, self.a, self.b]
        return np.concatenate([head, self.served_by, self.served_at]).astype(np.float64)
