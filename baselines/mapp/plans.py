"""Static route plans for MAPP-PC and MAPP-AR: greedy insertion and an iterated local search.

Both benchmarks are, once the three agents' routes are fixed, a *team orienteering
problem* (TOP): three closed depot routes, each of length at most the budget ``B``,
maximising a set function of the visited nodes. A fixed plan is played through the
benchmark's own episode (:class:`PlanTeam`, ``relic_envs.rollout``): at each epoch an
agent returns the next node of its route and the depot when the route is done. Every
closed route of length ``<= B`` is admitted move by move (``l_ij + l_j0 <= b_k`` follows
from the triangle inequality), and the plans keep ``EPS`` of slack so that float rounding
of the running budget never refuses a move; the table's figures are the episode
objectives, not the planner's.

Value models (what a plan is worth, exactly the simulator's objective):

- **PC** (:class:`PrizeValue`): ``sum q_i`` over the nodes some route visits; a node is
  worth nothing to a second route, so routes are disjoint.
- **AR** (:class:`ScanValue`): the uncertainty removed, ``(N - 1) - sum_j u_j`` with
  ``u_j = 0`` at scanned nodes and ``prod_s (1 - rho_sj)`` over every scan ``s`` elsewhere.
  It depends only on the multiset of scans (products commute), not on their order or on
  which agent makes them, so an AR plan is a TOP with this submodular objective. The
  marginal gain of one more scan at ``s`` is ``rho[s] @ u`` (``rho_ss = 1``); two agents
  may scan the same node (each at most once), which removes more of its neighbours'
  uncertainty.

Methods (``METHODS``):

- ``greedy``: greedy insertion. Repeatedly insert the (node, route, position) with the
  largest marginal gain over added distance ``l_pj + l_jq - l_pq`` among those that keep
  the route within the budget; stop when nothing fits.
- ``ils``: iterated local search after Vansteenwegen, Souffriau, Vanden Berghe and Van
  Oudheusden, "Iterated local search for the team orienteering problem with time
  windows", Computers & Operations Research 36(12), 2009: a local search (the insertion
  step with ratio ``gain^2 / added distance`` as in that paper, then 2-opt on each route to
  free budget, then insertion again) alternating with their *shake* (remove ``S``
  consecutive customers from position ``R`` of every route; ``R += S``, ``S += 1``; ``S``
  back to 1 when it exceeds half the shortest route or after an improvement; ``R`` taken
  modulo the shortest route), until ``ILS_NO_IMPROVE`` iterations pass without a new best
  or ``ILS_MAX_ITERS`` iterations in all. ``ils-long`` (the MAPP-AR reference): the same
  with random shake positions and lengths (seed 0), ``ILS_LONG`` iterations. The 2-opt step is our addition (the 2009 paper
  has time windows, where 2-opt rarely applies). Deterministic: no random numbers.
  Settings: see :data:`ILS_SETTINGS` and :func:`tune` (training batches only).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from baselines._team import RoleTeam
from relic_envs.core.benchmark import ROLES
from relic_envs.mapp._geometry import distances

EPS = 1e-9  # slack kept below the budget by every plan
METHODS = ("greedy", "ils")
ILS_NO_IMPROVE = 40
ILS_MAX_ITERS = 200
# gain ** power / added distance in the ILS insertion step, the better of {1, 2} by tune() on the 50
# training instances (N = 40): PC 38.290 (power 1) vs 38.259 (power 2); AR 33.675 vs 33.747.
ILS_POWER = {"mapp_pc": 1.0, "mapp_ar": 2.0}
ILS_SETTINGS = {"no_improve": ILS_NO_IMPROVE, "max_iters": ILS_MAX_ITERS, "power": ILS_POWER}
STATIC = ("mapp_pc", "mapp_ar")
ILS_LONG = (300, 2000)  # (no_improve, max_iters) of the long, randomly shaken run (seed 0): MAPP-AR's best found


# -- value models ----------------------------------------------------------------------
class PrizeValue:
    """MAPP-PC: prizes collected once; routes are disjoint."""

    disjoint = True

    def __init__(self, instance):
        self.q = np.asarray(instance.prizes, dtype=np.float64)

    def gains(self, routes) -> np.ndarray:
        g = self.q.copy()
        g[0] = 0.0
        for r in routes:
            g[list(r)] = 0.0
        return g

    def value(self, routes) -> float:
        seen = {j for r in routes for j in r}
        return float(sum(self.q[j] for j in seen))


class ScanValue:
    """MAPP-AR: the uncertainty removed by the multiset of scans of every route."""

    disjoint = False

    def __init__(self, instance):
        from relic_envs.mapp.ar.simulator import correlation

        self.rho = correlation(distances(instance.coords), instance.sigma)
        self.n = instance.n_nodes

    def residual(self, routes) -> np.ndarray:
        u = np.ones(self.n)
        u[0] = 0.0
        for r in routes:
            for s in r:
                u *= 1.0 - self.rho[s]
                u[s] = 0.0
        return u

    def gains(self, routes) -> np.ndarray:
        g = self.rho @ self.residual(routes)
        g[0] = 0.0
        return g

    def value(self, routes) -> float:
        return float((self.n - 1) - self.residual(routes).sum())


def value_model(name: str, instance):
    return {"mapp_pc": PrizeValue, "mapp_ar": ScanValue}[name](instance)


# -- route helpers ------------------------------------------------------------------------
def route_length(dist: np.ndarray, route) -> float:
    seq = [0, *route, 0]
    return float(sum(dist[a, b] for a, b in zip(seq[:-1], seq[1:])))


def _insertion_costs(dist: np.ndarray, route) -> tuple[np.ndarray, np.ndarray]:
    """Per node: the cheapest added distance of inserting it into ``route`` and where."""
    seq = np.array([0, *route, 0])
    p, q = seq[:-1], seq[1:]
    cost = dist[p] + dist[q] - dist[p, q][:, None]  # (m + 1, N)
    pos = np.argmin(cost, axis=0)
    return cost[pos, np.arange(dist.shape[0])], pos


def insert(dist, model, routes, budget: float, power: float = 1.0) -> list[list[int]]:
    """Insertion until nothing fits: best ``gain ** power / added distance`` first."""
    routes = [list(r) for r in routes]
    lengths = [route_length(dist, r) for r in routes]
    limit = budget - EPS
    while True:
        gains = model.gains(routes)
        best, choice = 0.0, None
        for k, r in enumerate(routes):
            cost, pos = _insertion_costs(dist, r)
            ok = (gains > 1e-12) & (lengths[k] + cost <= limit)
            ok[0] = False
            ok[list(r)] = False
            if not ok.any():
                continue
            ratio = np.where(ok, gains**power / np.maximum(cost, 1e-12), -np.inf)
            j = int(np.argmax(ratio))
            if ratio[j] > best:
                best, choice = float(ratio[j]), (k, j, int(pos[j]), float(cost[j]))
        if choice is None:
            return routes
        k, j, p, c = choice
        routes[k].insert(p, j)
        lengths[k] += c


def two_opt(dist: np.ndarray, route) -> list[int]:
    """First-improvement 2-opt on one closed route (the depot fixed at both ends)."""
    seq = [0, *route, 0]
    improved = True
    while improved:
        improved = False
        for i in range(1, len(seq) - 2):
            for j in range(i + 1, len(seq) - 1):
                delta = dist[seq[i - 1], seq[j]] + dist[seq[i], seq[j + 1]] - dist[seq[i - 1], seq[i]] - dist[seq[j], seq[j + 1]]
                if delta < -1e-12:
                    seq[i : j + 1] = seq[i : j + 1][::-1]
                    improved = True
    return seq[1:-1]


def greedy(name: str, instance) -> list[list[int]]:
    dist = distances(instance.coords)
    return insert(dist, value_model(name, instance), [[] for _ in ROLES], instance.budget, power=1.0)


def ils(name: str, instance, no_improve: int = ILS_NO_IMPROVE, max_iters: int = ILS_MAX_ITERS,
        power: float | None = None, seed: int | None = None) -> list[list[int]]:
    """The iterated local search (module doc); returns the best plan found. With ``seed``
    the shake draws ``R`` and ``S`` at random (``ils-long``) instead of the fixed schedule."""
    power = ILS_POWER[name] if power is None else power
    rng = None if seed is None else np.random.default_rng(seed)
    dist = distances(instance.coords)
    model = value_model(name, instance)
    budget = float(instance.budget)

    def local_search(routes):
        routes = insert(dist, model, routes, budget, power)
        routes = [two_opt(dist, r) for r in routes]
        return insert(dist, model, routes, budget, power)

    current = local_search([[] for _ in ROLES])
    best, best_value = [list(r) for r in current], model.value(current)
    s, r_pos, stale = 1, 0, 0
    for _ in range(max_iters):
        shortest = min(len(r) for r in current)
        if shortest == 0:
            shortest = max(len(r) for r in current)
        if shortest == 0:
            break
        if rng is not None:
            r_pos, s = int(rng.integers(shortest)), int(rng.integers(1, max(1, shortest // 2) + 1))
        r_pos %= shortest
        current = [r[:r_pos] + r[r_pos + s :] for r in current]  # shake
        r_pos += s
        s += 1
        if s > max(1, shortest // 2):
            s = 1
        current = local_search(current)
        v = model.value(current)
        if v > best_value + 1e-12:
            best, best_value, stale, s = [list(r) for r in current], v, 0, 1
        else:
            stale += 1
            if stale >= no_improve:
                break
    return best


def solve(name: str, instance, method: str) -> list[list[int]]:
    """Three routes (customer ids, depot left out) by ``method``."""
    if method == "greedy":
        return greedy(name, instance)
    if method == "ils":
        return ils(name, instance)
    if method == "ils-long":
        return ils(name, instance, no_improve=ILS_LONG[0], max_iters=ILS_LONG[1], seed=0)
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")


# -- playing a plan through the benchmark's episode ----------------------------------------
class PlanTeam(RoleTeam):
    """A plan as a team of role programs: ``reset(instance)`` plans (``solver(instance)``
    returns three routes), then each agent returns the next node of its route and the
    depot once it is done. ``relic_envs.rollout("mapp_pc", PlanTeam.of("mapp_pc", "ils"), instances)``."""

    def __init__(self, solver):
        self.solver = solver
        self.routes: list[list[int]] = [[] for _ in ROLES]
        self.nxt = [0] * len(ROLES)

    @classmethod
    def of(cls, name: str, method: str) -> PlanTeam:
        return cls(lambda inst: solve(name, inst, method))

    @classmethod
    def fixed(cls, routes) -> PlanTeam:
        return cls(lambda inst: [list(r) for r in routes])

    def reset(self, instance) -> None:
        self.routes = [list(r) for r in self.solver(instance)]
        self.nxt = [0] * len(ROLES)

    def _policy(self, k: int):
        def act(obs: Mapping[str, Any]) -> int:
            if self.nxt[k] >= len(self.routes[k]):
                return 0
            j = self.routes[k][self.nxt[k]]
            self.nxt[k] += 1
            return int(j)

        return act


def play(name: str, instance, routes):
    """The finished episode of ``routes`` played in the benchmark's simulator
    (``.objective()``, ``.routes``, ``.route_lengths()``, ``.fallbacks``)."""
    from relic_envs.core.registry import get_benchmark

    ep = get_benchmark(name).new_episode(instance)
    nxt = [0] * len(ROLES)
    while not ep.done:
        actions = {}
        for k, role in enumerate(ROLES):
            if nxt[k] < len(routes[k]):
                actions[role] = int(routes[k][nxt[k]])
                nxt[k] += 1
            else:
                actions[role] = 0
        ep.step(actions)
    return ep


def tune(name: str = "mapp_pc", powers=(1.0, 2.0), no_improves=(ILS_NO_IMPROVE,)) -> dict:
    """Mean objective of each ILS setting (insertion power x stall limit; we tried only the
    powers 1 and 2 at the default stall limit) over the 50 training instances (N = 40; the test
    splits are never read). ``python -m baselines.mapp.plans --tune``."""
    import relic_envs

    train = [inst for batch in relic_envs.splits(name).train for inst in batch]
    out = {}
    for power in powers:
        for ni in no_improves:
            vals = [play(name, inst, ils(name, inst, no_improve=ni, power=power)).objective() for inst in train]
            out[(power, ni)] = float(np.mean(vals))
    return out


if __name__ == "__main__":
    import sys

    if "--tune" in sys.argv:
        for name in STATIC:
            print(name, tune(name))
