"""Classical FSTSP comparators: the truck-only tour and its optimal drone split.

Route first, split second (Murray & Chu 2015, "The flying sidekick traveling salesman
problem: Optimization of drone-assisted parcel delivery", Transp. Res. C 54:86-109, whose
heuristic starts from a truck TSP tour and moves customers to drone sorties; Agatz,
Bouman & Schmidt 2018, "Optimization approaches for the traveling salesman problem with
drone", Transp. Sci. 52(4):965-981, whose "exact partitioning" splits a fixed tour
optimally by dynamic programming):

1. **Truck tour** (``truck``): nearest neighbour from the depot, then 2-opt
   (:mod:`baselines.co.routing_tours`). Played as truck moves only (the drone unused); its
   cost ``sum l / v_t + 0.05 sum l`` is the floor every method must beat.
2. **Optimal split** (:func:`split`) of a tour ``(0, c_1, ..., c_n)``: the cheapest way to
   serve it *in that order* with the epochs our simulator allows
   (``relic_envs.co.fstsp.simulator``), each customer served by the truck or by one
   drone sortie, by dynamic programming over states ``(q, p)``: the truck stands at
   ``c_q``, and ``c_1..c_p`` are served (``q < p`` after sorties in which the truck waited).
   From ``(q, p)``, with ``u = c_q``:

   - truck move to ``c_{p+1}`` -> ``(p+1, p+1)``;
   - waiting sortie, drone serves ``a = c_{p+1}`` and returns to ``u`` -> ``(q, p+1)``;
   - sortie ``a = c_{p+1}``, truck drives to ``r = c_{p+2}`` -> ``(p+2, p+2)``;
   - sortie with the truck serving ``b`` and then ``r = c_{p+3}``, the drone ``a``, where
     ``{a, b} = {c_{p+1}, c_{p+2}}`` in either order -> ``(p+3, p+3)`` (Agatz et al.'s
     rule: the drone node lies between launch and recovery in the tour order);
   - the last one or two customers in a sortie recovered at the depot (the simulator
     offers the depot only once nothing else is left) -> done;

   each kept only when our simulator accepts it: ``a`` drone-eligible with
   ``2 l(u, a) / v_d <= E`` (A's check), ``b`` a meeting point within ``E`` (B's check),
   ``max(truck ETA, drone ETA) <= E`` at ``r`` (C's check: the endurance covers the wait);
   an epoch costs ``max(truck ETA, drone ETA) + 0.05`` times the truck's distance, and at
   ``p = n`` the truck returns to the depot. The split is optimal for the tour under our
   epoch rules (a sortie serves one drone customer and at most two truck customers), not
   Murray & Chu's more general sorties, which our simulator does not allow.

Rows (:data:`METHODS`): ``truck`` and ``truck+split``; :mod:`baselines.co.routing` adds
OR-Tools' truck tour with and without the split. :func:`exact` enumerates every tour of a
tiny instance and splits each optimally: every solution of our simulator is a split of
some tour (list its customers epoch by epoch: ``a``, then ``b``, then ``r``), so this is the
exact optimum (the tests check it against a search over every episode).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np

from baselines._team import RoleTeam
from baselines.co.routing_tours import nearest_neighbour, two_opt
from relic_envs.co.fstsp import simulator as sim
from relic_envs.co.fstsp.generator import FSTSPInstance
from relic_envs.core.benchmark import ROLES
from relic_envs.core.registry import get_benchmark
from relic_envs.errors import InvalidConfig

METHODS = ("truck", "truck+split")
Epoch = tuple[int, int, int, int]  # (u, a, b, r) as simulator.cost reads them; -1: none
INF = float("inf")


def truck_tour(instance: FSTSPInstance) -> list[int]:
    """Nearest neighbour from the depot, then 2-opt: customer ids ``1..N`` in visiting order."""
    dist = instance.distances()
    tour = nearest_neighbour(dist, 0, np.arange(1, instance.n_customers + 1))
    return two_opt(dist, 0, tour, 0)


def truck_epochs(tour: list[int]) -> list[Epoch]:
    """A truck-only tour as epochs (one truck move each)."""
    out, u = [], 0
    for v in tour:
        out.append((u, -1, int(v), int(v)))
        u = int(v)
    return out


def split(instance: FSTSPInstance, tour: list[int]) -> tuple[float, list[Epoch]]:
    """The optimal split of ``tour`` (module doc): (its cost, its epochs)."""
    dist, vt, vd, E = instance.distances(), instance.truck_speed, instance.drone_speed, instance.endurance
    w = sim.DISTANCE_WEIGHT
    eligible = np.concatenate([[False], instance.eligible])
    seq = [0, *[int(v) for v in tour]]
    n = len(seq) - 1
    if sorted(seq[1:]) != list(range(1, instance.n_customers + 1)):
        raise ValueError("tour: every customer 1..N must appear exactly once")
    tol = 1e-12  # the simulator's own comparisons are exact; this only guards our re-association of sums

    def drone_ok(u: int, a: int) -> bool:
        return bool(eligible[a]) and 2 * dist[u, a] / vd <= E + tol

    dp = np.full((n + 1, n + 1), INF)
    back: dict[tuple[int, int], tuple[tuple[int, int], Epoch]] = {}
    dp[0, 0] = 0.0
    best_end, end_from = INF, None

    def relax(state, value, frm, epoch):
        if value < dp[state]:
            dp[state] = value
            back[state] = (frm, epoch)

    for p in range(n + 1):
        for q in range(p + 1):
            base = dp[q, p]
            if base == INF:
                continue
            u = seq[q]
            if p == n:  # all served: the truck (and drone) return to the depot
                total = base + dist[u, 0] * (1 / vt + w)
                if total < best_end:
                    best_end, end_from = total, ((q, p), None)
                continue
            c1 = seq[p + 1]
            relax((p + 1, p + 1), base + dist[u, c1] * (1 / vt + w), (q, p), (u, -1, c1, c1))
            if drone_ok(u, c1):
                relax((q, p + 1), base + 2 * dist[u, c1] / vd, (q, p), (u, c1, -1, u))
                if p + 1 == n:  # the last customer by drone, recovery at the depot
                    t = max(dist[u, 0] / vt, (dist[u, c1] + dist[c1, 0]) / vd)
                    if t <= E + tol and base + t + w * dist[u, 0] < best_end:
                        best_end, end_from = base + t + w * dist[u, 0], ((q, p), (u, c1, -1, 0))
            if p + 2 <= n:
                c2 = seq[p + 2]
                if drone_ok(u, c1):  # drone c1, truck straight to r = c2
                    t = max(dist[u, c2] / vt, (dist[u, c1] + dist[c1, c2]) / vd)
                    if t <= E + tol:
                        relax((p + 2, p + 2), base + t + w * dist[u, c2], (q, p), (u, c1, -1, c2))
                for a, b in ((c1, c2), (c2, c1)):
                    if not drone_ok(u, a) or max(dist[u, b] / vt, (dist[u, a] + dist[a, b]) / vd) > E + tol:
                        continue
                    targets = [seq[p + 3]] if p + 3 <= n else ([0] if p + 2 == n else [])
                    for r in targets:
                        t = max((dist[u, b] + dist[b, r]) / vt, (dist[u, a] + dist[a, r]) / vd)
                        if t > E + tol:
                            continue
                        value = base + t + w * (dist[u, b] + dist[b, r])
                        if r == 0:
                            if value < best_end:
                                best_end, end_from = value, ((q, p), (u, a, b, 0))
                        else:
                            relax((p + 3, p + 3), value, (q, p), (u, a, b, r))
    epochs: list[Epoch] = []
    state, last = end_from
    if last is not None:
        epochs.append(last)
    while state != (0, 0):
        state, epoch = back[state]
        epochs.append(epoch)
    epochs.reverse()
    return float(best_end), epochs


def solve(instance: FSTSPInstance, method: str) -> list[Epoch]:
    """The epochs of one row of :data:`METHODS`."""
    if method not in METHODS:
        raise InvalidConfig(f"method must be one of {list(METHODS)}, got {method!r}")
    tour = truck_tour(instance)
    return truck_epochs(tour) if method == "truck" else split(instance, tour)[1]


def exact(instance: FSTSPInstance, max_customers: int = 7) -> tuple[float, list[Epoch]]:
    """The optimum of a tiny instance: every tour, each split optimally (module doc)."""
    n = instance.n_customers
    if n > max_customers:
        raise InvalidConfig(f"exact enumerates N! tours; N = {n} exceeds max_customers = {max_customers}")
    best: tuple[float, list[Epoch]] = (INF, [])
    for perm in itertools.permutations(range(1, n + 1)):
        value, epochs = split(instance, list(perm))
        if value < best[0] - 1e-12:
            best = (value, epochs)
    return best


def replay(instance: FSTSPInstance, epochs: list[Epoch]) -> tuple[float, dict]:
    """Play ``epochs`` through the benchmark's episode; (its objective, its ``info()``).

    A plays each epoch's ``a``, B its ``b``, C its ``r`` (a role the simulator does not ask
    has nothing to play). Raises when the episode repairs an answer or builds other epochs.
    """
    episode = get_benchmark("fstsp").new_episode(instance)
    e = 0
    while not episode.done:
        k = episode.decision.role
        u, a, b, r = epochs[e]
        episode.step({ROLES[k]: (a, b, r)[k]})
        if k == 2 or (k == 1 and a == -1):
            e += 1
    info = episode.info()
    if any(info["repairs"].values()) or [tuple(int(x) for x in ep) for ep in episode.state.epochs] != list(epochs):
        raise RuntimeError(f"replay did not reproduce the epochs: {info}")  # internal invariant
    return episode.objective(), info


class PlanTeam(RoleTeam):
    """A row as a team: ``reset(instance)`` plans the epochs, then A, B and C play them
    (``relic_envs.rollout("fstsp", PlanTeam("truck+split"), instances)``). A role whose
    action mask offers no identifier is not deciding and returns ``-1``."""

    def __init__(self, method: str):
        if method not in METHODS:
            raise InvalidConfig(f"method must be one of {list(METHODS)}, got {method!r}")
        self.method = method
        self.epochs: list[Epoch] = []
        self.e = 0

    def reset(self, instance: FSTSPInstance) -> None:
        self.epochs = solve(instance, self.method)
        self.e = 0

    def _policy(self, k: int):
        def act(obs: Mapping[str, Any]) -> int:
            if not np.asarray(obs["action_mask"])[1:].any():
                return -1  # not deciding
            _, a, b, r = self.epochs[self.e]
            if k == 2 or (k == 1 and a == -1):
                self.e += 1
            return (a, b, r)[k]

        return act
