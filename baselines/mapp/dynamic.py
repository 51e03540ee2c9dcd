"""MAPP-DS: an online insertion policy and an offline full-information reference.

Time in MAPP-DS is counted in hops: an agent deciding at epoch ``t`` lands at time
``t + 1`` whatever the distance, serves the best request active at its node then, and
pays the distance from its budget; the horizon is ``N`` hops, agents may come back to a
node, and returning to the depot ends a route.

**Online insertion** (``online``, :class:`OnlineTeam`, a team of role programs for
``relic_envs.rollout``). What it reads: the roles' paper-interface observations (the best
*released* active request per node with its time-to-live) and the instance's static
geometry and budget (told by ``reset``); never the request stream. At every epoch the team
re-plans from scratch (a rolling horizon): from the agents' current nodes and budgets it
inserts the active requests one at a time, each into the (agent, position) with the
largest value over added distance among those where every planned request is still
reached within its time-to-live (position ``p`` lands ``p`` hops from now) and the route
plus the way home fits that agent's budget; every agent then takes the first hop of its
route. An agent with nothing planned makes the shortest admissible *waiting hop*
(returning to the depot would end its route), and goes home when none is admissible.
No parameter was tuned.

**Offline reference** (``offline``, :func:`offline_routes`): a full-information upper
*reference*, not an online policy and not a bound: it knows every request of the instance,
future ones included (``relic_envs.mapp.ds.generator.stream``). It starts from the online
policy's routes and improves them by a seeded first-improvement local search over hop
sequences (replace the node of one hop, insert a hop, delete a hop; candidate nodes are
those with a request active at the hop's landing time), each move scored exactly by
:func:`served_value` (the simulator's rule, checked against it in the tests) and kept only
when it serves more and fits the budget, for ``OFFLINE_MOVES`` moves. Its routes are
played through the benchmark's episode for the reported figure.

No bound is reported for MAPP-DS: the only cheap valid one, every request's value, is
several times the best plan found, so it would make every gap meaningless.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from baselines._team import RoleTeam
from baselines.mapp.plans import EPS
from relic_envs.core.benchmark import ROLES
from relic_envs.mapp._geometry import distances

OFFLINE_MOVES = 20_000
OFFLINE_SEED = 0


def _read(obs: Mapping[str, Any]) -> tuple[int, float, np.ndarray, np.ndarray]:
    """``(current, budget_left, value (N,), ttl (N,))`` from any paper-interface DS role's observation."""
    if "request_dict" in obs:  # A
        rd = obs["request_dict"]
        mask = np.asarray(rd["mask"]).astype(bool)
        val = np.asarray(rd["value"], dtype=np.float64)
        return int(obs["current"]), float(obs["budget_left"]), np.where(mask, val[:, 0], 0.0), np.where(mask, val[:, 1], 0.0)
    if "graph" in obs:  # B
        nodes = np.asarray(obs["graph"]["nodes"], dtype=np.float64)
        return int(obs["my_state"]["current"]), float(obs["budget_left"]), nodes[:, 3].copy(), nodes[:, 4].copy()
    return (int(obs["current"]), float(obs["remaining_budget"]),  # C
            np.asarray(obs["value_vector"], dtype=np.float64), np.asarray(obs["deadline_vector"], dtype=np.float64))


def plan(dist: np.ndarray, starts, budgets, value: np.ndarray, ttl: np.ndarray) -> list[list[int]]:
    """The joint insertion plan (module doc): one route (nodes in visiting order) per agent
    starting at ``starts[k]`` with ``budgets[k]`` left (``None``: the agent is home)."""
    live = [k for k, b in enumerate(budgets) if b is not None]
    routes: list[list[int]] = [[] for _ in starts]
    length = {k: dist[starts[k], 0] for k in live}  # of start -> route -> depot
    cand = [int(j) for j in np.flatnonzero((value > 0) & (ttl >= 1))]
    while cand:
        best = None
        for j in cand:
            for k in live:
                route = routes[k]
                seq = [starts[k], *route, 0]
                for p in range(len(route) + 1):  # between seq[p] and seq[p + 1]; lands p + 1 hops from now
                    if p + 1 > ttl[j] or seq[p] == j or seq[p + 1] == j:
                        continue
                    if any(q + 2 > ttl[route[q]] for q in range(p, len(route))):
                        continue
                    add = dist[seq[p], j] + dist[j, seq[p + 1]] - dist[seq[p], seq[p + 1]]
                    if length[k] + add > budgets[k] - EPS:
                        continue
                    ratio = value[j] / max(add, 1e-9)
                    if best is None or ratio > best[0]:
                        best = (ratio, j, k, p, add)
        if best is None:
            break
        _, j, k, p, add = best
        routes[k].insert(p, j)
        length[k] += add
        cand.remove(j)
    return routes


class OnlineTeam(RoleTeam):
    """The online insertion policy as a team of role programs (module doc).

    The team plans once per epoch, at the first call of the epoch (role A while A is out),
    from that role's observation (every role sees the same pre-step requests) and the
    positions and budgets of its agents, which it tracks from their own hops (the same
    float operations as the simulator); every agent then answers its own first hop.
    """

    def __init__(self):
        self.dist = None

    def reset(self, instance) -> None:
        self.dist = distances(instance.coords)  # static geometry only; the request stream is never read
        n = len(ROLES)
        self.pos = [0] * n
        self.budget: list[float | None] = [float(instance.budget)] * n
        self.calls = [0] * n
        self.epoch = -1
        self.hops = [0] * n

    def _act(self, k: int, obs: Mapping[str, Any]) -> int:
        cur, budget, value, ttl = _read(obs)
        t = self.calls[k]
        self.calls[k] += 1
        if t > self.epoch:  # the first call of a new epoch: plan for every agent still out
            self.epoch = t
            routes = plan(self.dist, self.pos, self.budget, value, ttl)
            for i in range(len(ROLES)):
                if self.budget[i] is None:
                    continue
                if routes[i]:
                    self.hops[i] = routes[i][0]
                    continue
                ok = self.dist[self.pos[i]] + self.dist[:, 0] <= self.budget[i]
                ok[0] = False
                ok[self.pos[i]] = False
                self.hops[i] = int(np.argmin(np.where(ok, self.dist[self.pos[i]], np.inf))) if ok.any() else 0
        hop = int(self.hops[k])
        self.budget[k] -= self.dist[self.pos[k], hop]
        self.pos[k] = hop
        if hop == 0:
            self.budget[k] = None
        return hop

    def _policy(self, k: int):
        return lambda obs: self._act(k, obs)


# -- the offline reference -------------------------------------------------------------------
class _Requests:
    """The whole request stream of an instance, per node: ``(value, tau, expiry)`` best first."""

    def __init__(self, instance):
        from relic_envs.mapp.ds.generator import stream

        s = stream(instance)
        self.by_node: list[list[tuple[float, int, int, int]]] = [[] for _ in range(instance.n_nodes)]
        for tau, node in zip(*np.nonzero(s.fire)):
            self.by_node[node].append((float(s.value[tau, node]), int(tau), int(s.expiry[tau, node]), len(self.by_node[node])))
        for reqs in self.by_node:
            reqs.sort(key=lambda r: (-r[0], r[1]))  # best value first; ties: earliest arrival (the simulator's argmax)
        h = s.fire.shape[0]
        self.active_at = [np.flatnonzero(((np.arange(h)[:, None] <= t) & (t <= s.expiry) & s.fire).any(axis=0))
                          for t in range(instance.n_nodes + 1)]


def served_value(req: _Requests, routes) -> float:
    """The value the hop sequences ``routes`` serve (hop ``p``, 0-based, lands at time ``p + 1``;
    agents in role order within a landing time): the simulator's rule."""
    served: set[tuple[int, int]] = set()
    total = 0.0
    horizon = max((len(r) for r in routes), default=0)
    for t in range(horizon):
        for r in routes:
            if t < len(r):
                node = r[t]
                for value, tau, expiry, idx in req.by_node[node]:
                    if tau <= t + 1 <= expiry and (node, idx) not in served:
                        served.add((node, idx))
                        total += value
                        break
    return total


def play_team(instance, team):
    """The finished ``mapp_ds`` episode of ``team`` (paper interface) on ``instance``."""
    from relic_envs.core.registry import get_benchmark

    ep = get_benchmark("mapp_ds").new_episode(instance)
    team.reset(instance)
    while not ep.done:
        ep.step({role: team[role](ep.observe(role)) for role in ROLES if ep.acting(role)})
    return ep


def _length(dist, route) -> float:
    seq = [0, *route, 0]
    return float(sum(dist[a, b] for a, b in zip(seq[:-1], seq[1:])))


def _valid(route) -> bool:
    return all(a != b for a, b in zip(route[:-1], route[1:])) and all(j != 0 for j in route)


def offline_routes(instance, moves: int = OFFLINE_MOVES, seed: int = OFFLINE_SEED, start=None) -> list[list[int]]:
    """The offline reference's hop sequences (module doc)."""
    dist = distances(instance.coords)
    n, budget = instance.n_nodes, float(instance.budget) - EPS
    req = _Requests(instance)
    if start is None:
        start = [[j for j in r[1:] if j != 0] for r in play_team(instance, OnlineTeam()).routes]
    routes = [list(r) for r in start]
    best = served_value(req, routes)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        k = int(rng.integers(len(ROLES)))
        r = routes[k]
        kind = int(rng.integers(3))
        if kind == 2 and not r:
            continue
        p = int(rng.integers(len(r) + (1 if kind == 1 else 0))) if (r or kind == 1) else 0
        if kind == 1 and len(r) >= n:
            continue
        if kind == 2:
            new = r[:p] + r[p + 1 :]
        else:
            cands = req.active_at[p + 1]
            if cands.size == 0:
                continue
            j = int(cands[rng.integers(cands.size)])
            new = r[:p] + [j] + r[p + (1 if kind == 0 else 0) :]
        if not _valid(new) or _length(dist, new) > budget:
            continue
        trial = routes[:k] + [new] + routes[k + 1 :]
        v = served_value(req, trial)
        if v > best + 1e-12 or (v >= best - 1e-12 and _length(dist, new) < _length(dist, r) - 1e-12):
            routes, best = trial, v
    return routes
