"""Classical HMTSP comparators: greedy construction over the three vehicles, then local search.

Every method minimises the benchmark's own objective ``C = sum L_k + 0.5 max L_k + 5 sum
max(L_k - B_k, 0)`` (``relic_envs.co.hmtsp.simulator``, Eq. hmtsp), with each vehicle's
exact route cost ``L_k`` (travel multiplier ``gamma_k`` on every leg, the return leg, and
the service cost ``s_{k, c(j)}`` of every customer it serves). A move's value is always
the exact change of ``C``, never a proxy.

Constructions (every step assigns one customer; ties: the lowest vehicle, then the lowest
customer id, then the earliest position):

- ``nn`` **nearest neighbour** (Rosenkrantz, Stearns & Lewis 1977, "An analysis of several
  heuristics for the traveling salesman problem", SIAM J. Comput. 6(3):563-581), over
  three vehicles: append to the end of a route the (vehicle, customer) pair whose
  append raises ``C`` least; the append's change of ``L_k`` is the episode's
  ``candidate_costs``, ``gamma_k (l(u, j) + l(j, d_k) - l(u, d_k)) + s_{k, c(j)}``.
- ``ci`` **cheapest insertion** (same paper): insert the (vehicle, customer, position)
  triple whose insertion raises ``C`` least, anywhere in a route.

Improvements (applied to a construction's routes):

- ``2opt``: 2-opt on every route (Croes 1958; :mod:`baselines.co.routing_tours`). A route's
  ``L_k`` is ``gamma_k`` times its length plus a constant, and ``C`` increases with every
  ``L_k``, so shortening a route is exactly improving ``C``.
- ``relocate``: inter-route relocate (the 1-0 move of Osman's lambda-interchange, Osman
  1993, "Metastrategy simulated annealing and tabu search algorithms for the vehicle
  routing problem", Ann. Oper. Res. 41:421-451): move one customer from its route to the
  cheapest position of another route when that lowers ``C`` (best improvement over every
  customer and target vehicle, by more than ``1e-9``), then 2-opt the two routes
  changed; until no move improves.
- ``exchange``: adds Osman's 1-1 interchange to the same search: two customers of
  different routes swap places (each takes the other's position); the best of every
  relocate and exchange move is applied, then 2-opt of the changed routes.

Rows (:data:`METHODS`): ``nn``, ``nn+2opt``, ``nn+2opt+relocate``,
``nn+2opt+relocate+exchange``, and the same four from ``ci``. All deterministic. :func:`replay` plays routes through the
benchmark's episode (vehicle ``k`` appends its route's customers in order and then skips),
and :class:`PlanTeam` is a row as a team of the env.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from baselines._team import RoleTeam
from baselines.co.routing_tours import two_opt
from relic_envs.co.hmtsp import simulator as sim
from relic_envs.co.hmtsp.generator import VEHICLES, HMTSPInstance
from relic_envs.core.benchmark import ROLES
from relic_envs.core.registry import get_benchmark
from relic_envs.errors import InvalidConfig

METHODS = (
    "nn", "nn+2opt", "nn+2opt+relocate", "nn+2opt+relocate+exchange",
    "ci", "ci+2opt", "ci+2opt+relocate", "ci+2opt+relocate+exchange",
)
EPS = 1e-9


def delta_cost(instance: HMTSPInstance, lengths: np.ndarray, changes: np.ndarray) -> np.ndarray:
    """``C(L + changes[i]) - C(L)`` for each row of ``changes`` (``(m, 3)``): the exact change of ``C``."""
    new = lengths[None, :] + changes
    excess = np.maximum(new - instance.budget, 0.0).sum(axis=1)
    total = new.sum(axis=1) + sim.BALANCE * new.max(axis=1) + sim.EXCESS * excess
    return total - sim.cost_of(instance, lengths)


def _lengths(instance: HMTSPInstance, dist: np.ndarray, routes: list[list[int]]) -> np.ndarray:
    n = instance.n_customers
    out = np.zeros(VEHICLES)
    for k, r in enumerate(routes):
        if r:
            path = np.array([n + k, *r, n + k])
            out[k] = instance.travel[k] * dist[path[:-1], path[1:]].sum() + instance.service[k, instance.task_type[r]].sum()
    return out


def _insertion(instance: HMTSPInstance, dist: np.ndarray, k: int, route: list[int], ids: np.ndarray):
    """Best insertion of each customer in ``ids`` into route ``k``: (change of ``L_k``, position)."""
    n = instance.n_customers
    path = np.array([n + k, *route, n + k])
    a, b = path[:-1], path[1:]
    travel = dist[a[:, None], ids[None, :]] + dist[ids[None, :], b[:, None]] - dist[a, b][:, None]  # (edges, m)
    pos = np.argmin(travel, axis=0)  # first of ties: the earliest position
    best = travel[pos, np.arange(ids.size)]
    return instance.travel[k] * best + instance.service[k, instance.task_type[ids]], pos


def construct(instance: HMTSPInstance, rule: str) -> list[list[int]]:
    """``rule = "nn"`` (append) or ``"ci"`` (insert anywhere); module doc."""
    if rule not in ("nn", "ci"):
        raise InvalidConfig(f"rule must be 'nn' or 'ci', got {rule!r}")
    n = instance.n_customers
    dist = instance.distances()
    routes: list[list[int]] = [[] for _ in range(VEHICLES)]
    lengths = np.zeros(VEHICLES)
    free = np.arange(n)
    while free.size:
        table = np.empty((VEHICLES, free.size))
        where = np.zeros((VEHICLES, free.size), dtype=np.int64)
        for k in range(VEHICLES):
            if rule == "ci":
                table[k], where[k] = _insertion(instance, dist, k, routes[k], free)
            else:
                u, d = (routes[k][-1] if routes[k] else n + k), n + k
                table[k] = instance.travel[k] * (dist[u, free] + dist[free, d] - dist[u, d]) + instance.service[
                    k, instance.task_type[free]
                ]
                where[k] = len(routes[k])
        changes = np.zeros((VEHICLES * free.size, VEHICLES))
        changes[np.arange(VEHICLES * free.size), np.repeat(np.arange(VEHICLES), free.size)] = table.ravel()
        flat = int(np.argmin(delta_cost(instance, lengths, changes)))  # row-major: lowest vehicle, then id
        k, i = divmod(flat, free.size)
        routes[k].insert(int(where[k, i]), int(free[i]))
        lengths[k] += table[k, i]
        free = np.delete(free, i)
    return routes


def improve_2opt(instance: HMTSPInstance, routes: list[list[int]]) -> list[list[int]]:
    n, dist = instance.n_customers, instance.distances()
    return [two_opt(dist, n + k, r, n + k) for k, r in enumerate(routes)]


def relocate(instance: HMTSPInstance, routes: list[list[int]], exchange: bool = False) -> list[list[int]]:
    """Inter-route relocate (and with ``exchange`` the 1-1 interchange) with 2-opt of the
    changed routes, to a local optimum (module doc)."""
    n, dist = instance.n_customers, instance.distances()
    routes = [list(r) for r in routes]
    while True:
        lengths = _lengths(instance, dist, routes)
        best: tuple[float, Any] = (-EPS, None)
        for k in range(VEHICLES):
            if not routes[k]:
                continue
            path = np.array([n + k, *routes[k], n + k])
            v, prev, nxt = path[1:-1], path[:-2], path[2:]
            removal = instance.travel[k] * (dist[prev, nxt] - dist[prev, v] - dist[v, nxt]) - instance.service[
                k, instance.task_type[v]
            ]
            for k2 in range(VEHICLES):
                if k2 == k:
                    continue
                gain, pos = _insertion(instance, dist, k2, routes[k2], v)
                changes = np.zeros((v.size, VEHICLES))
                changes[:, k] = removal
                changes[:, k2] = gain
                delta = delta_cost(instance, lengths, changes)
                i = int(np.argmin(delta))
                if delta[i] < best[0]:
                    best = (float(delta[i]), ("relocate", k, i, k2, int(pos[i])))
                if exchange and k < k2 and routes[k2]:
                    swap = _swap_table(instance, dist, lengths, routes, k, k2)
                    i, j = np.unravel_index(int(np.argmin(swap)), swap.shape)
                    if swap[i, j] < best[0]:
                        best = (float(swap[i, j]), ("exchange", k, int(i), k2, int(j)))
        if best[1] is None:
            return routes
        move, k, i, k2, p = best[1]
        if move == "relocate":
            customer = routes[k].pop(i)
            routes[k2].insert(p, customer)
        else:
            routes[k][i], routes[k2][p] = routes[k2][p], routes[k][i]
        routes[k] = two_opt(dist, n + k, routes[k], n + k)
        routes[k2] = two_opt(dist, n + k2, routes[k2], n + k2)


def _swap_table(instance, dist, lengths, routes, k: int, k2: int) -> np.ndarray:
    """``(m_k, m_k2)`` change of ``C`` when customer ``i`` of route ``k`` and ``j`` of route ``k2`` swap places."""
    n = instance.n_customers

    def parts(kk):
        path = np.array([n + kk, *routes[kk], n + kk])
        return path[:-2], path[1:-1], path[2:]

    p1, v1, q1 = parts(k)
    p2, v2, q2 = parts(k2)
    t = instance.task_type
    # route k: v1[i] replaced by v2[j] between p1[i] and q1[i]
    in_k = (dist[p1[:, None], v2[None, :]] + dist[v2[None, :], q1[:, None]] - (dist[p1, v1] + dist[v1, q1])[:, None])
    d_k = instance.travel[k] * in_k + instance.service[k, t[v2]][None, :] - instance.service[k, t[v1]][:, None]
    in_k2 = (dist[p2[None, :], v1[:, None]] + dist[v1[:, None], q2[None, :]] - (dist[p2, v2] + dist[v2, q2])[None, :])
    d_k2 = instance.travel[k2] * in_k2 + instance.service[k2, t[v1]][:, None] - instance.service[k2, t[v2]][None, :]
    changes = np.zeros((d_k.size, VEHICLES))
    changes[:, k] = d_k.ravel()
    changes[:, k2] = d_k2.ravel()
    return delta_cost(instance, lengths, changes).reshape(d_k.shape)


def solve(instance: HMTSPInstance, method: str) -> list[list[int]]:
    """The routes of one row of :data:`METHODS` on ``instance``."""
    if method not in METHODS:
        raise InvalidConfig(f"method must be one of {list(METHODS)}, got {method!r}")
    parts = method.split("+")
    routes = construct(instance, parts[0])
    if "2opt" in parts:
        routes = improve_2opt(instance, routes)
    if "relocate" in parts:
        routes = relocate(instance, routes, exchange="exchange" in parts)
    return routes


def check_routes(instance: HMTSPInstance, routes: list[list[int]]) -> None:
    """Raise ``ValueError`` unless ``routes`` are three lists that visit every customer exactly once."""
    if len(routes) != VEHICLES:
        raise ValueError(f"routes: need {VEHICLES} routes, got {len(routes)}")
    seen = sorted(v for r in routes for v in r)
    if seen != list(range(instance.n_customers)):
        raise ValueError("routes: every customer 0..N-1 must appear exactly once")


def replay(instance: HMTSPInstance, routes: list[list[int]]) -> tuple[float, dict]:
    """Play ``routes`` through the benchmark's episode; (its objective, its ``info()``).

    Vehicle ``k`` appends its route's next customer at each of its turns and skips once
    its route is done, so the episode builds exactly these routes (no repair, no forced
    assignment: the three vehicles skip in a row only once every customer is assigned).
    """
    check_routes(instance, routes)
    episode = get_benchmark("hmtsp").new_episode(instance)
    nxt = [0] * VEHICLES
    while not episode.done:
        k = episode.decision.role
        action = routes[k][nxt[k]] if nxt[k] < len(routes[k]) else -1
        nxt[k] += action >= 0
        episode.step({ROLES[k]: action})
    info = episode.info()
    if any(info["repairs"].values()) or info["forced"] or [list(r) for r in episode.state.routes] != routes:
        raise RuntimeError(f"replay did not reproduce the routes: {info}")  # internal invariant
    return episode.objective(), info


class PlanTeam(RoleTeam):
    """A row as a team: on ``reset(instance)`` it solves the instance with ``method`` and then
    each vehicle returns its planned next customer (``-1`` when its route is done or when it
    is not its turn). ``relic_envs.rollout("hmtsp", PlanTeam("ci+2opt"), instances)``."""

    def __init__(self, method: str):
        if method not in METHODS:
            raise InvalidConfig(f"method must be one of {list(METHODS)}, got {method!r}")
        self.method = method
        self.routes: list[list[int]] = [[] for _ in range(VEHICLES)]
        self.nxt = [0] * VEHICLES

    def reset(self, instance: HMTSPInstance) -> None:
        self.routes = solve(instance, self.method)
        self.nxt = [0] * VEHICLES

    def _policy(self, k: int):
        def act(obs: Mapping[str, Any]) -> int:
            mask = np.asarray(obs["action_mask"])
            if not mask[1:].any() or self.nxt[k] >= len(self.routes[k]):
                return -1  # not this vehicle's turn, or its route is done
            j = self.routes[k][self.nxt[k]]
            self.nxt[k] += 1
            return j

        return act
