"""The functional JAX twin of the budgeted-routing simulator (``_routing.py``).

Pure functions over pytrees, vmapped over a batch of same-``N`` instances, with all
decision epochs inside one compiled program (``jit`` + ``vmap`` + ``lax.while_loop``):

- :func:`stack` turns same-size instances into a :class:`Batch` of static arrays
  (``dist`` is computed by the numpy reference's own ``distances``, so both sides
  decide on the same bits).
- ``init(problem, data) -> JState``, ``observe(problem, data, state, role) -> obs``,
  ``step(problem, data, state, actions) -> JState``, ``objective(problem, data, state)``
  work on ONE instance; :func:`make_evaluator` vmaps and loops them.

A benchmark supplies a :class:`JaxRoutingProblem`: its static arrays, what an arrival
does, its objective, the per-node attributes roles observe, and its role tables of
getters (the twins of the numpy role tables, same keys and content). A JAX policy is
``obs -> node id`` (an integer scalar) for one role on one instance.

The movement rule is the numpy one, in the same order: the agents' answers to one
pre-step state are applied A, B, C; a non-depot node is admitted iff it is in range,
not the current node, not yet visited by that agent (unless ``allow_revisit``), and
``l_ij + l_j0 <= b_k``; anything else sends the agent home (it pays ``l_i0``, its
route closes). At the horizon (``N`` epochs) open routes return home.

Precision: by default the evaluator traces and runs with 64-bit types (inside
``jax.enable_x64``), so decisions and objectives match the numpy reference; pass
``x64=False`` for float32 speed where exact parity does not matter.
"""

from __future__ import annotations

import abc
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from relic_envs.core.benchmark import ROLES
from relic_envs.core.jax_kit import Batch, RoleTables, batch_runner, check_team, integer_answer, one_size, stack_arrays
from relic_envs.errors import MissingExtra
from relic_envs.mapp._geometry import distances
from relic_envs.mapp._routing import RoutingInstance

try:
    import jax
    import jax.numpy as jnp
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtra("jax", "jax") from exc

from relic_envs.core.jax_loop import shrinking_while  # noqa: E402  (after the jax check)

N_AGENTS = len(ROLES)


class JState(NamedTuple):
    """What changes during an episode (one instance)."""

    pos: Any  # (3,) int32 current node of each agent
    budget: Any  # (3,) float remaining budget of each agent
    home: Any  # (3,) bool: route closed
    visited: Any  # (3, N) bool: non-depot nodes each agent has visited
    t: Any  # () int32 decision epoch
    dyn: Any  # dict of the benchmark's changing node state


class View(NamedTuple):
    """What one role can be shown (twin of ``_routing.View``); ``k`` is a Python int."""

    k: int
    t: Any
    data: Mapping[str, Any]
    pos: Any
    budget: Any
    home: Any
    visited: Any
    nodes: Mapping[str, Any]
    feasible: Any  # (N,) bool

    @property
    def current(self):
        return self.pos[self.k]

    @property
    def teammates(self) -> list[int]:
        return [j for j in range(N_AGENTS) if j != self.k]


Getter = Callable[[View], Any]


class JaxRoutingProblem(RoleTables, abc.ABC):
    """One routing benchmark in ``jax.numpy`` (per-instance functions)."""

    name: str
    allow_revisit: bool = False
    # How many times rollout_batch may quarter a batch as its episodes end
    # (core.jax_loop.shrinking_while). Worth it where episode lengths have a tail
    # (MAPP-DS: 12 epochs on average, 50 at most); it costs a copy of the epoch per
    # stage in the compiled program and a gather of the batch's data per stage, which
    # cost more than they saved on MAPP-AR (episodes of 7 to 10 epochs).
    shrink_stages: int = 0
    roles: Mapping[str, Mapping[str, Mapping[str, Getter]]]  # interface -> role -> param -> getter

    def compact(self, data: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The stacked batch with padding the whole batch does not use cut away (evaluator
        batches only: the functional envs keep one shape per ``N``). Default: as is."""
        return data

    @abc.abstractmethod
    def arrays(self, instance: RoutingInstance, dist: np.ndarray) -> dict[str, np.ndarray]:
        """The benchmark's static arrays (``coords``, ``dist`` and ``budget`` are added by :func:`stack`)."""

    @abc.abstractmethod
    def init_dynamic(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """Initial node state (twin of ``simulator.init_dynamic``)."""

    @abc.abstractmethod
    def arrive(self, data: Mapping[str, Any], dyn: dict[str, Any], node, t, on) -> dict[str, Any]:
        """Node state after an admitted arrival at ``node`` landing at time ``t`` where ``on``
        (a traced bool), else ``dyn`` unchanged bit for bit (new dict; :func:`play_epoch`
        relies on it). The benchmark applies ``on`` itself, to the entries the arrival
        touches: a select over every node state after each of the three arrivals of an
        epoch cost MAPP-DS a pass over its request grid each (``benchmarks/RESULTS.md``)."""

    @abc.abstractmethod
    def objective(self, data: Mapping[str, Any], dyn: Mapping[str, Any]):
        """Raw objective (higher is better)."""

    @abc.abstractmethod
    def node_view(self, data: Mapping[str, Any], dyn: Mapping[str, Any], t) -> dict[str, Any]:
        """Per-node attributes roles observe (twin of ``simulator.node_view``)."""

def stack(problem: JaxRoutingProblem, instances: Sequence[RoutingInstance]) -> Batch:
    """Stack same-size instances into a :class:`Batch`."""
    n_nodes = one_size(instances, lambda inst: inst.n_nodes, "size N")
    per_instance = []
    for inst in instances:
        dist = distances(inst.coords)
        arrays = {"coords": np.asarray(inst.coords, np.float64), "dist": dist, "budget": np.float64(inst.budget)}
        arrays.update(problem.arrays(inst, dist))
        per_instance.append(arrays)
    return Batch(stack_arrays(per_instance), len(instances), n_nodes)


def init(problem: JaxRoutingProblem, data: Mapping[str, Any]) -> JState:
    n = data["dist"].shape[0]
    return JState(
        pos=jnp.zeros(N_AGENTS, jnp.int32),
        budget=jnp.full(N_AGENTS, data["budget"], data["dist"].dtype),
        home=jnp.zeros(N_AGENTS, bool),
        visited=jnp.zeros((N_AGENTS, n), bool),
        t=jnp.int32(0),
        dyn=problem.init_dynamic(data),
    )


def feasible(problem: JaxRoutingProblem, data: Mapping[str, Any], state: JState, k: int):
    """``(N,)`` bool: the non-depot nodes agent ``k`` may move to now (twin of ``RoutingEpisode.feasible``)."""
    dist = data["dist"]
    cur = state.pos[k]
    ok = dist[cur] + dist[:, 0] <= state.budget[k]
    if not problem.allow_revisit:
        ok &= ~state.visited[k]
    idx = jnp.arange(dist.shape[0])
    return ok & (idx != 0) & (idx != cur) & ~state.home[k]


def view(problem: JaxRoutingProblem, data: Mapping[str, Any], state: JState, k: int, nodes=None) -> View:
    if nodes is None:
        nodes = problem.node_view(data, state.dyn, state.t)
    return View(k, state.t, data, state.pos, state.budget, state.home, state.visited, nodes,
                feasible(problem, data, state, k))


def observe(problem: JaxRoutingProblem, data: Mapping[str, Any], state: JState, role: str,
            interface: str = "paper", nodes=None) -> dict[str, Any]:
    """The role's observation: same keys and content as the PettingZoo env's."""
    v = view(problem, data, state, ROLES.index(role), nodes)
    obs = {name: get(v) for name, get in problem.role_table(interface)[role].items()}
    obs["action_mask"] = v.feasible.at[0].set(True).astype(jnp.int8)  # returning home is always allowed
    return obs


def as_node(role: str, value):
    """Trace-time check of a policy's answer: a scalar integer node id."""
    return integer_answer(role, value, (), "node id")


def admit(problem: JaxRoutingProblem, data: Mapping[str, Any], state: JState, k: int, j):
    """``(node, ok)``: the node agent ``k`` moves to (0 unless admitted) and whether it was admitted."""
    dist = data["dist"]
    n = dist.shape[0]
    cur = state.pos[k]
    in_range = (j > 0) & (j < n)  # the depot itself (j == 0) is not an admitted move: the route closes
    jc = jnp.clip(j, 0, n - 1).astype(jnp.int32)
    ok = in_range & (jc != cur)
    if not problem.allow_revisit:
        ok &= ~state.visited[k, jc]
    ok &= dist[cur, jc] + dist[jc, 0] <= state.budget[k]
    return jnp.where(ok, jc, 0), ok


def step(problem: JaxRoutingProblem, data: Mapping[str, Any], state: JState, actions: Mapping[str, Any], wait=None):
    """One decision epoch; returns ``(new state, moves)`` with ``moves`` (3,) the node each
    live agent appended to its route (-1 for an agent already home or waiting).

    ``wait`` (optional, (3,) bool): agents that hold their position this epoch (the env's
    ``WAIT``: the functional env's answer to a refused action); the evaluator has none.
    """
    dist = data["dist"]
    pos, budget, home, visited, dyn = state.pos, state.budget, state.home, state.visited, state.dyn
    landing = state.t + 1
    moves = []
    for k, role in enumerate(ROLES):  # deterministic rollout order A, B, C
        s = JState(pos, budget, home, visited, state.t, dyn)
        node, ok = admit(problem, data, s, k, as_node(role, actions[role]))
        live = ~home[k] if wait is None else ~home[k] & ~wait[k]
        cur = pos[k]
        budget = budget.at[k].set(jnp.where(live, budget[k] - dist[cur, node], budget[k]))
        pos = pos.at[k].set(jnp.where(live, node, cur))
        arrived = live & ok
        visited = visited.at[k, node].set(visited[k, node] | arrived)
        dyn = problem.arrive(data, dyn, node, landing, arrived)
        home = home.at[k].set(home[k] | (live & ~ok))
        moves.append(jnp.where(live, node, -1))
    # The horizon: routes still open after N epochs (MAPP-DS only) return home.
    close = (landing >= dist.shape[0]) & ~home
    budget = jnp.where(close, budget - dist[pos, 0], budget)
    pos = jnp.where(close, 0, pos)
    home = home | close
    return JState(pos, budget, home, visited, landing, dyn), jnp.stack(moves)


def objective(problem: JaxRoutingProblem, data: Mapping[str, Any], state: JState):
    return problem.objective(data, state.dyn)


class Outcome(NamedTuple):
    objective: Any  # () raw objective
    steps: Any  # () epochs until every route closed
    moves: Any  # (N, 3) node appended to each route per epoch, -1 once the agent is home
    budget: Any  # (3,) budget left at the end


def start(problem: JaxRoutingProblem, data: Mapping[str, Any]):
    """The loop's carry before the first epoch: (state, moves, epochs run)."""
    n = data["dist"].shape[0]
    return init(problem, data), jnp.full((n, N_AGENTS), -1, jnp.int32), jnp.int32(0)


def running(data: Mapping[str, Any], carry) -> Any:
    """Whether the episode goes on: some route is open and the horizon ``N`` not reached."""
    state = carry[0]
    return ~state.home.all() & (state.t < data["dist"].shape[0])


def play_epoch(problem: JaxRoutingProblem, policies: Mapping[str, Callable], interface: str,
               data: Mapping[str, Any], carry):
    """One decision epoch: every role observes the same pre-step state, then all move.

    A finished episode (every route closed) comes back unchanged, bit for bit, so the
    batched loop need not freeze it (``shrinking_while(idle_when_done=True)``): with every
    agent home, ``step`` moves no one, touches no node state (``arrive`` with ``on``
    false) and closes nothing; only the clock and the epoch count would advance.
    """
    state, moves, steps = carry
    nodes = problem.node_view(data, state.dyn, state.t)  # one pre-step state for all three roles
    actions = {r: policies[r](observe(problem, data, state, r, interface, nodes)) for r in ROLES}
    new, moved = step(problem, data, state, actions)
    done = state.home.all()  # ``running``'s horizon test is implied: the horizon closes every route
    new = new._replace(t=jnp.where(done, state.t, new.t))
    # Written back as it was when done (the index clamps to the last row after N epochs).
    moved = jnp.where(done, jax.lax.dynamic_index_in_dim(moves, steps, 0, keepdims=False), moved)
    return new, jax.lax.dynamic_update_index_in_dim(moves, moved, steps, 0), steps + (~done).astype(steps.dtype)


def outcome(problem: JaxRoutingProblem, data: Mapping[str, Any], carry) -> Outcome:
    final, moves, steps = carry
    return Outcome(objective(problem, data, final), steps, moves, final.budget)


def rollout_one(problem: JaxRoutingProblem, policies: Mapping[str, Callable], data: Mapping[str, Any],
                interface: str = "paper") -> Outcome:
    """Every epoch of one instance until every route is closed (at most ``N``).

    A ``lax.while_loop``, not a scan of all ``N`` epochs: episodes close long before the
    horizon (MAPP-PC test50: about 17 epochs of 50). :func:`make_evaluator` runs the same
    epochs over a batch with :func:`~relic_envs.core.jax_loop.shrinking_while`.
    """
    body = functools.partial(play_epoch, problem, policies, interface, data)
    return outcome(problem, data, jax.lax.while_loop(functools.partial(running, data), body, start(problem, data)))


def rollout_batch(problem: JaxRoutingProblem, policies: Mapping[str, Callable], data: Mapping[str, Any],
                  interface: str = "paper") -> Outcome:
    """:func:`rollout_one` over a batch (leading axis of ``data``), the same epochs and
    results, without paying for finished episodes: MAPP-DS episodes run 12 epochs on
    average and up to 50, and a plain vmapped loop runs the longest for the whole batch
    (``problem.shrink_stages``), nor for freezing them (:func:`play_epoch` idles)."""
    carry = jax.vmap(functools.partial(start, problem))(data)
    final = shrinking_while(running, functools.partial(play_epoch, problem, policies, interface), data, carry,
                            stages=problem.shrink_stages, idle_when_done=True)
    return jax.vmap(functools.partial(outcome, problem))(data, final)


def make_evaluator(problem: JaxRoutingProblem, policies: Mapping[str, Callable], *, interface: str = "paper",
                   x64: bool = True):
    """A compiled ``run(batch) -> Outcome`` (numpy arrays with a batch axis) for a fixed team.

    Compilation happens on the first call for a batch shape; reuse the returned
    function to amortise it.
    """
    problem.role_table(interface)  # fail now, not at trace time, on an unknown interface
    check_team(policies)
    return batch_runner(lambda data: rollout_batch(problem, policies, data, interface), x64=x64)


def routes(moves: np.ndarray) -> list[list[int]]:
    """The three routes of one instance from its ``(N, 3)`` moves (as ``RoutingEpisode.routes``).

    A route that did not end at the depot was closed by the horizon, which appends 0.
    """
    out = []
    for k in range(N_AGENTS):
        r = [0] + [int(v) for v in moves[:, k] if v >= 0]
        if r[-1] != 0:
            r.append(0)
        out.append(r)
    return out


# -- getters shared by the benchmarks' role tables (twins of those in _routing.py) ------
def current(v: View):
    return v.current


def budget_left(v: View):
    return v.budget[v.k]


def dist_mat(v: View):
    return v.data["dist"]


def dist_row(v: View):
    return v.data["dist"][v.current]


def teammate_positions(v: View):
    return v.pos[jnp.array(v.teammates)]


def my_state(v: View):
    return {"current": v.current, "visited": v.visited[v.k].astype(jnp.int8), "budget_left": budget_left(v)}


def graph(*attrs: str) -> Getter:
    """``{"dist_mat", "nodes": rows (node_id, x, y, *attrs)}``."""

    def get(v: View):
        dist, coords = v.data["dist"], v.data["coords"]
        cols = [jnp.arange(dist.shape[0], dtype=dist.dtype), coords[:, 0], coords[:, 1]]
        cols += [jnp.asarray(v.nodes[a], dist.dtype) for a in attrs]
        return {"dist_mat": dist, "nodes": jnp.stack(cols, axis=1)}

    return get


def sparse(mask_attr: str, *value_attrs: str) -> Getter:
    """``{"mask": int8 (N,), "value": (N,) or (N, k)}`` over the nodes where ``mask_attr`` holds."""

    def get(v: View):
        values = [v.nodes[a] for a in value_attrs]
        value = values[0] if len(values) == 1 else jnp.stack(values, axis=1)
        return {"mask": v.nodes[mask_attr].astype(jnp.int8), "value": value}

    return get


def attr(name: str) -> Getter:
    def get(v: View):
        return v.nodes[name]

    return get


def paper_roles(dict_param: str, mask_attr: str, graph_attrs: tuple[str, ...],
                vectors: Mapping[str, str]) -> dict[str, dict[str, Getter]]:
    """The paper-interface role table of one routing benchmark (Appendix B.1).

    ``dict_param`` names A's sparse dict (over ``mask_attr``, values ``graph_attrs``),
    ``vectors`` C's dense vectors (parameter name -> node attribute); the rest is shared.
    """
    return {
        "A": {"current": current, dict_param: sparse(mask_attr, *graph_attrs), "dist_mat": dist_mat,
              "budget_left": budget_left},
        "B": {"my_state": my_state, "teammate_positions": teammate_positions, "graph": graph(*graph_attrs),
              "budget_left": budget_left},
        "C": {"current": current, "dist_row": dist_row, **{p: attr(a) for p, a in vectors.items()},
              "remaining_budget": budget_left},
    }
