"""The budgeted-routing simulator shared by MAPP-PC, MAPP-AR and MAPP-DS (Appendix B.1).

A complete metric graph on nodes ``0..N-1`` (node 0 the depot), three agents A, B, C,
each starting at the depot with the same budget ``B``. One env step is one synchronous
decision epoch: every live agent observes the same pre-step state, answers a node id,
and the evaluator applies the answers in the deterministic order A, B, C. A proposed
non-depot node ``j`` is admitted only when it is in range, not yet visited by that
agent (MAPP-PC/AR; MAPP-DS allows coming back, never standing still), and
``l_ij + l_j0 <= b_k`` (``b_k`` the agent's budget before the move), so every accepted
partial route can still return. Anything else (the depot itself, an out-of-range,
current, revisited or unaffordable node, a non-integer, an exception) sends the agent
home: it pays ``l_i0`` and is done. The episode ends when all three are home. In
MAPP-PC/AR every step visits a new node or closes a route, so ``N`` steps always
suffice; the horizon is ``N`` steps for all three, after which open routes (MAPP-DS
only) return home. Every closed route respects Eq. (app-route-budget).

A benchmark supplies a :class:`RoutingProblem`: its instance type, regimes and
generator, what an arrival does to its node state, the objective, the per-node
attributes roles observe, and its role signatures per interface. Everything else
lives here once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from relic_envs.core import codecs as F
from relic_envs.core.benchmark import ROLES, WAIT, GeneratedProblem, Invalid
from relic_envs.core.declared import DeclaredBenchmark, DeclaredEpisode, as_id
from relic_envs.core.instance import Instance, check_array, check_range
from relic_envs.errors import InvalidInstance
from relic_envs.mapp._geometry import distances

RETURNS_DOC = (
    "a node id (int); 0 returns to the depot and ends this agent's route. A non-depot node is admitted "
    "only if it is in range, not the current node, not yet visited by this agent (MAPP-PC/AR), and "
    "dist[current, j] + dist[j, 0] <= budget_left; "
    "anything else (or an exception) is mapped to the depot"
)


@dataclasses.dataclass(frozen=True)
class RoutingInstance(Instance):
    """Fields every routing instance has; benchmarks add theirs after these."""

    coords: np.ndarray  # (N, 2) float64, node 0 = depot
    budget: float  # per-agent route budget B (same for every agent)

    def validate(self) -> None:
        check_array("coords", self.coords, (None, 2), "f")
        if self.coords.shape[0] < 2:
            raise InvalidInstance(f"field 'coords' needs the depot and at least one customer, got {self.coords.shape}")
        if not (np.isfinite(self.budget) and self.budget >= 0):
            raise InvalidInstance(f"field 'budget' must be a finite number >= 0, got {self.budget!r}")

    @property
    def n_nodes(self) -> int:
        return int(self.coords.shape[0])

    def node_array(self, name: str, value: np.ndarray, low: float, high: float) -> None:
        """Check a per-node float field (helper for subclasses' ``validate``)."""
        check_array(name, value, (self.n_nodes,), "f")
        check_range(name, value, low, high)


@dataclasses.dataclass
class View:
    """What one role can be shown at one decision epoch (read by the parameter getters)."""

    k: int  # the role's index, 0=A, 1=B, 2=C
    t: int  # decision epoch (steps taken so far)
    instance: Instance
    dist: np.ndarray  # (N, N)
    pos: np.ndarray  # (3,) int64 current node of each agent
    budget: np.ndarray  # (3,) float64 remaining budget of each agent
    done: np.ndarray  # (3,) bool
    visited: np.ndarray  # (3, N) bool, non-depot nodes each agent has visited
    nodes: Mapping[str, np.ndarray]  # per-node attributes of the benchmark, (N,) each
    feasible: np.ndarray  # (N,) bool, non-depot nodes this agent may move to now

    @property
    def current(self) -> int:
        return int(self.pos[self.k])

    @property
    def teammates(self) -> list[int]:
        return [j for j in range(len(ROLES)) if j != self.k]


# -- getters shared by the benchmarks' role tables ------------------------------------
def current(v: View):
    return np.int64(v.current)


def budget_left(v: View):
    return np.array(v.budget[v.k], dtype=np.float64)  # 0-d array: Box.contains wants an ndarray


def dist_mat(v: View):
    return v.dist  # read-only; the episode hands out copies (observe), the referee shares it by identity (peek)


def dist_row(v: View):
    return v.dist[v.current].copy()


def teammate_positions(v: View):
    return v.pos[v.teammates].astype(np.int64)


def my_state(v: View):
    return {"current": np.int64(v.current), "visited": v.visited[v.k].astype(np.int8), "budget_left": budget_left(v)}


def graph(*attrs: str):
    """Getter of the structured graph: rows ``(node_id, x, y, *attrs)``."""

    def get(v: View):
        n = v.dist.shape[0]
        cols = [np.arange(n, dtype=np.float64), v.instance.coords[:, 0], v.instance.coords[:, 1]]
        cols += [np.asarray(v.nodes[a], dtype=np.float64) for a in attrs]
        return {"dist_mat": v.dist, "nodes": np.stack(cols, axis=1)}  # dist: as in dist_mat

    return get


def sparse(mask_attr: str, *value_attrs: str):
    """Getter of a sparse ``{node: value}`` dict over the nodes where ``mask_attr`` is true."""

    def get(v: View):
        values = [np.asarray(v.nodes[a], dtype=np.float64) for a in value_attrs]
        value = values[0] if len(values) == 1 else np.stack(values, axis=1)
        return {"mask": np.asarray(v.nodes[mask_attr]).astype(np.int8), "value": value}

    return get


def attr(name: str):
    def get(v: View):
        return np.asarray(v.nodes[name], dtype=np.float64).copy()

    return get


# -- parameters the three benchmarks' paper signatures share ----------------------------
CURRENT = F.ParamSpec("current", "int", "node id where this agent stands (0 = depot)", F.NodeId(), current)
DIST_MAT = F.ParamSpec("dist_mat", "np.ndarray", "(N, N) Euclidean travel costs", F.Matrix(), dist_mat)
MY_STATE = F.ParamSpec(
    "my_state", "dict", "{'current': int, 'visited': list[int] (this agent's visited nodes), 'budget_left': float}",
    F.AgentState(), my_state,
)
TEAMMATES = F.ParamSpec(
    "teammate_positions", "list", "[int, int]: current nodes of the two teammates in role order (0 once home)",
    F.NodeList(2), teammate_positions,
)
BUDGET = F.ParamSpec("budget_left", "float", "this agent's remaining travel budget", F.Real(0.0), budget_left)
REMAINING_BUDGET = F.ParamSpec("remaining_budget", "float", "this agent's remaining travel budget", F.Real(0.0), budget_left)
DIST_ROW = F.ParamSpec("dist_row", "np.ndarray", "(N,) distances from the current node to every node", F.NodeVector(0.0), dist_row)



class RoutingProblem(GeneratedProblem):
    """What one routing benchmark defines; the movement rule and env plumbing are shared.

    A benchmark names its ``generator`` module (``REGIMES``, ``generate(regime, rng)``)
    and ``simulator`` module (``init_dynamic(instance, dist)``, ``arrive(instance, dyn,
    node, t)`` applied in rollout order, ``objective(instance, dyn)`` higher-is-better,
    ``node_view(instance, dyn, t)`` the per-node attributes roles may observe) and its
    role tables per interface.
    """

    name: str
    instance_type: type[RoutingInstance]
    roles: Mapping[str, Mapping[str, F.RoleSpec]]  # interface -> role -> spec
    generator: Any
    simulator: Any
    allow_revisit: bool = False  # MAPP-DS: requests recur, so an agent may come back to a node
    minimize: bool = False  # every routing benchmark collects prize or value

    def init_dynamic(self, instance: RoutingInstance, dist: np.ndarray) -> dict[str, np.ndarray]:
        return self.simulator.init_dynamic(instance, dist)

    def arrive(self, instance: RoutingInstance, dyn: dict[str, np.ndarray], node: int, t: int) -> None:
        self.simulator.arrive(instance, dyn, node, t)

    def objective(self, instance: RoutingInstance, dyn: Mapping[str, np.ndarray]) -> float:
        return self.simulator.objective(instance, dyn)

    def node_view(self, instance: RoutingInstance, dyn: Mapping[str, np.ndarray], t: int) -> dict[str, np.ndarray]:
        return self.simulator.node_view(instance, dyn, t)

    def objective_bound(self, instance: RoutingInstance, dyn: Mapping[str, np.ndarray]) -> float:
        """An upper bound of the objective over every team (the rewards are >= 0)."""
        return self.simulator.objective_bound(instance, dyn)


class RoutingBenchmark(DeclaredBenchmark):
    """A routing benchmark of the paper, from its :class:`RoutingProblem`."""

    family = "mapp"
    interfaces = ("paper", "alt")
    void_on_exception = False  # B.1: exceptions and malformed outputs are mapped to the depot
    mask_slot_for_minus_one = False  # a node id is the mask's index

    def _returns_doc(self, role: str) -> str:
        return RETURNS_DOC

    def _check_return(self, function: str) -> Callable[[Any, Mapping[str, Any]], Any]:
        return lambda value, obs: value  # never rejects: the episode maps bad returns home

    def id_space(self, role: str, instance: Instance) -> int:
        return instance.n_nodes

    def action_space(self, role: str, instance: Instance, interface: str = "paper") -> spaces.Discrete:
        return spaces.Discrete(instance.n_nodes)

    def max_steps(self, instance: Instance) -> int:
        return instance.n_nodes

    def score_bounds(self, instance: Instance) -> tuple[float, float]:
        episode = RoutingEpisode(self, instance, "paper")
        return 0.0, float(self.problem.objective_bound(instance, episode.dyn))

    def state_space(self, instance: Instance) -> spaces.Box:
        """Bounds of :meth:`RoutingEpisode.state_vector`: positions, budgets (down to a
        rounding slack below 0), home and visited flags, then the per-node attributes
        (all >= 0; unbounded above where the benchmark's values are)."""
        episode = RoutingEpisode(self, instance, "paper")
        n, k = instance.n_nodes, len(ROLES)
        slack = 1e-9 * max(1.0, float(instance.budget))
        low = [np.zeros(k), np.full(k, -slack), np.zeros(k), np.zeros(k * n)]
        high = [np.full(k, n - 1.0), np.full(k, float(instance.budget)), np.ones(k), np.ones(k * n)]
        for _, value in sorted(self.problem.node_view(instance, episode.dyn, 0).items()):
            size = np.size(value)
            low.append(np.zeros(size))
            high.append(np.ones(size) if np.asarray(value).dtype == bool else np.full(size, np.inf))
        return spaces.Box(np.concatenate(low), np.concatenate(high), dtype=np.float64)

    def reference_policy(self, role: str, interface: str = "paper"):
        """Absent: the agent goes home at once (agents are substitutable resources, C.2)."""
        self.check_interface(interface)
        return _go_home

    def reference_text(self, role: str) -> str:
        return "your agent staying at the depot (the role absent)"


def _go_home(obs: Mapping[str, Any]) -> int:
    return 0  # the depot: the episode marks the agent done


class RoutingEpisode(DeclaredEpisode):
    """One routing instance played by three agents until all are back at the depot."""

    def __init__(self, bench: RoutingBenchmark, instance: RoutingInstance, interface: str):
        super().__init__(bench, instance, interface)
        n = instance.n_nodes
        self.dist = distances(instance.coords)
        self.dist.setflags(write=False)
        self.pos = np.zeros(len(ROLES), dtype=np.int64)
        self.budget = np.full(len(ROLES), float(instance.budget))
        self.home = np.zeros(len(ROLES), dtype=bool)  # agent's route closed
        self.visited = np.zeros((len(ROLES), n), dtype=bool)
        self.routes: list[list[int]] = [[0] for _ in ROLES]
        self.dyn = self.problem.init_dynamic(instance, self.dist)
        self.t = 0
        self.fallbacks: list[tuple[int, str, str]] = []  # (step, role, reason) of every return mapped home

    @property
    def done(self) -> bool:
        return bool(self.home.all())

    @property
    def step_count(self) -> int:
        return self.t

    def feasible(self, k: int) -> np.ndarray:
        """``(N,)`` bool: the non-depot nodes agent ``k`` may move to now."""
        if self.home[k]:
            return np.zeros(self.instance.n_nodes, dtype=bool)
        cur = self.pos[k]
        ok = self.dist[cur] + self.dist[:, 0] <= self.budget[k]
        if not self.problem.allow_revisit:
            ok &= ~self.visited[k]
        ok[0] = False
        ok[cur] = False
        return ok

    def view(self, k: int) -> View:
        return View(
            k=k, t=self.t, instance=self.instance, dist=self.dist, pos=self.pos.copy(), budget=self.budget.copy(),
            done=self.home.copy(), visited=self.visited.copy(),
            nodes=self.problem.node_view(self.instance, self.dyn, self.t), feasible=self.feasible(k),
        )

    def action_mask(self, k: int, view: View) -> np.ndarray:
        """``(N,)`` int8 over node ids: the feasible moves, and the depot (going home is always allowed)."""
        mask = view.feasible.astype(np.int8)
        mask[0] = 1
        return mask

    def admit(self, k: int, value: Any) -> tuple[int, str | None]:
        """``(node, None)`` if agent ``k`` may move to the node ``value`` names, else ``(0, reason)``."""
        if isinstance(value, BaseException):
            return 0, "exception"
        j = as_id(value)  # a node id is an identifier like any other
        if j is None:
            return 0, "type"
        if j == 0:
            return 0, "depot"
        if not 0 < j < self.instance.n_nodes:
            return 0, "range"
        if j == self.pos[k]:
            return 0, "stay"
        if self.visited[k, j] and not self.problem.allow_revisit:
            return 0, "revisit"
        cur = self.pos[k]
        if not self.dist[cur, j] + self.dist[j, 0] <= self.budget[k]:
            return 0, "budget"
        return j, None

    def acting(self, role: str) -> bool:
        return not self.home[ROLES.index(role)]

    def check(self, role: str, action: Any) -> Invalid | None:
        k = ROLES.index(role)
        if self.home[k]:
            return None  # a closed route ignores its agent's answers
        _, reason = self.admit(k, action)
        if reason is None or reason == "depot":
            return None
        return Invalid(role, reason, _ADMIT_DOC[reason])

    def step(self, actions: Mapping[str, Any]) -> Invalid | None:
        if self.done:
            raise RuntimeError("the episode has ended")
        for k, role in enumerate(ROLES):  # deterministic rollout order A, B, C
            if self.home[k] or actions.get(role) is WAIT:
                continue
            node, reason = self.admit(k, actions.get(role))
            cur = self.pos[k]
            self.budget[k] -= self.dist[cur, node]
            self.pos[k] = node
            self.routes[k].append(node)
            if reason is None:
                self.visited[k, node] = True
                self.problem.arrive(self.instance, self.dyn, node, self.t + 1)
            else:
                self.home[k] = True
                if reason != "depot":
                    self.fallbacks.append((self.t, role, reason))
        self.t += 1
        if self.t >= self.instance.n_nodes:  # the horizon: only MAPP-DS routes can still be open here
            for k in range(len(ROLES)):
                if not self.home[k]:
                    self.budget[k] -= self.dist[self.pos[k], 0]
                    self.pos[k] = 0
                    self.routes[k].append(0)
                    self.home[k] = True
        self._obs = {}
        return None

    def route_lengths(self) -> np.ndarray:
        """``(3,)`` travelled length of each agent's route so far (left-hand side of the budget constraint)."""
        return np.array([sum(self.dist[a, b] for a, b in zip(r[:-1], r[1:])) for r in self.routes])

    def objective(self) -> float:
        return float(self.problem.objective(self.instance, self.dyn))

    def state_vector(self) -> np.ndarray:
        attrs = self.problem.node_view(self.instance, self.dyn, self.t)
        parts = [self.pos.astype(np.float64), self.budget, self.home.astype(np.float64), self.visited.ravel().astype(np.float64)]
        parts += [np.ravel(np.asarray(attrs[k], dtype=np.float64)) for k in sorted(attrs)]
        return np.concatenate(parts)


RoutingBenchmark.episode_type = RoutingEpisode  # declared after the benchmark, which plays it


_ADMIT_DOC = {
    "exception": "the policy raised",
    "type": "a node id must be an integer",
    "range": "the node id is outside 0..N-1",
    "stay": "the agent is already at that node",
    "revisit": "the agent has visited that node already",
    "budget": "the move leaves too little budget to return to the depot",
}
