"""The synchronous-sweep DCOP simulator shared by DGC, DiMES, SensorDCSP and SHDS.

One episode is 50 synchronous sweeps (Appendix B.4). At sweep ``t`` every role sees
the same assignment ``x_t``: its owned variables' current values ``cur``, their local
cost landscape ``delta`` (``delta[k, v]`` = sum of the cost terms that involve variable
``idx[k]`` when it takes value ``v`` and every other variable keeps its value, so
``delta[k, v] - delta[k, cur[k]]`` is the exact change of the global cost of that
unilateral move), the exploration tensor ``u`` and ``t``, plus role features. All
roles answer at once and ``x_{t+1}`` takes each role's answer for its variables.

Strict rejection (the paper's DCOP return contract): a return that is not an
integer ``np.ndarray`` of shape ``(m,)`` with entries in ``{0..domain-1}`` voids the
rollout. The raw objective is the global cost of the assignment after the last sweep.

A benchmark supplies a :class:`DCOPProblem`: its instance type, regimes, generator,
cost, landscape and role features. Everything else lives here once.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from relic_envs.core.benchmark import ROLES, WAIT, GeneratedProblem, Invalid, ProblemBenchmark
from relic_envs.core.declared import CachedEpisode
from relic_envs.core.instance import Instance
from relic_envs.core.signature import Param, Signature
from relic_envs.dcop._explore import exploration
from relic_envs.errors import InvalidReturn

SWEEPS = 50

COMMON_PARAMS: tuple[tuple[str, str, str], ...] = (
    ("cur", "np.ndarray", "int64 (m,): current values of the role's m owned variables"),
    ("delta", "np.ndarray", "float64 (m, domain): local cost of each value, others fixed (lower is better)"),
    ("u", "np.ndarray", "float64 (m, domain+1) in [0,1): deterministic uniforms; use instead of any RNG"),
    ("t", "int", "sweep index, 0..49"),
)


@dataclasses.dataclass(frozen=True)
class Feature:
    """A role feature the paper's signature names: its meaning, shape and dtype.

    ``shape`` receives ``(m, problem)`` and returns the array shape; ``kind`` is
    ``"float"``, ``"int"`` or ``"bool"`` (bools travel as int8 in observations).
    """

    name: str
    doc: str
    shape: Callable[[int, DCOPProblem], tuple[int, ...]]
    kind: str = "float"
    low: float = -np.inf
    high: float = np.inf


def per_var(m: int, problem: DCOPProblem) -> tuple[int, ...]:
    return (m,)


def per_value(m: int, problem: DCOPProblem) -> tuple[int, ...]:
    return (m, problem.domain)


class SweepContext:
    """Everything observable at one sweep, computed lazily and shared by the roles."""

    def __init__(self, problem: DCOPProblem, instance: Instance, x: np.ndarray, x_prev: np.ndarray, t: int, prev: SweepContext | None):
        self.problem = problem
        self.instance = instance
        self.x = x
        self.x_prev = x_prev
        self.t = t
        self.prev = prev  # the previous sweep's context (for trends); None at t = 0
        # Values that depend on the instance only, shared by every sweep of the episode.
        self._episode_cache: dict[str, Any] = prev._episode_cache if prev is not None else {}

    @cached_property
    def landscape(self) -> np.ndarray:
        return self.problem.landscape(self.instance, self.x)

    @cached_property
    def local_cost(self) -> np.ndarray:
        """Each variable's local cost at its current value, ``delta[i, x_i]``."""
        return self.landscape[np.arange(self.x.size), self.x]

    @cached_property
    def u(self) -> np.ndarray:
        return exploration(int(self.instance.seed), self.t, self.x.size, self.problem.domain + 1)

    def cache(self, key: str, compute: Callable[[], Any]) -> Any:
        """Memoise a benchmark-specific intermediate (e.g. coverage) for this sweep."""
        store = self.__dict__.setdefault("_cache", {})
        if key not in store:
            store[key] = compute()
        return store[key]

    def instance_cache(self, key: str, compute: Callable[[], Any]) -> Any:
        """Memoise a value that depends on the instance only (e.g. peer lists) for the episode."""
        if key not in self._episode_cache:
            self._episode_cache[key] = compute()
        return self._episode_cache[key]


class DCOPProblem(GeneratedProblem, abc.ABC):
    """What one DCOP benchmark declares; the sweep machinery does the rest.

    A benchmark is data: its name, domain, instance type, role purposes and role
    features, plus its ``generator`` and ``simulator`` modules. The generator module gives
    ``REGIMES`` and ``generate(params, rng)``; the simulator module gives ``cost``,
    ``landscape``, ``peers`` and, where constraints and preferences differ, ``violation``.
    What is left to write per benchmark is what is its own: ``worst_cost`` and the role
    ``features``.
    """

    name: str
    domain: int
    instance_type: type[Instance]
    purposes: Mapping[str, str]  # role -> what it specialises in (prompt text)
    role_features: Mapping[str, Sequence[Feature]]  # role -> features after (cur, delta, u, t)
    generator: Any  # the benchmark's generator module
    simulator: Any  # the benchmark's simulator module

    def cost(self, instance: Instance, x: np.ndarray) -> float:
        """The paper's global cost of assignment ``x``."""
        return self.simulator.cost(instance, x)

    def landscape(self, instance: Instance, x: np.ndarray) -> np.ndarray:
        """``(N, domain)`` local cost of every value of every variable (see module doc)."""
        return self.simulator.landscape(instance, x)

    def violation(self, instance: Instance, x: np.ndarray) -> np.ndarray:
        """``(N, domain)`` constraint-penalty part of the landscape (default: all of it).

        DSA-B's lateral move and role A's features count a variable as "in conflict"
        when this is positive at its current value.
        """
        own = getattr(self.simulator, "violation", None)
        return own(instance, x) if own is not None else self.landscape(instance, x)

    @abc.abstractmethod
    def worst_cost(self, instance: Instance) -> float:
        """An upper bound of ``cost(instance, x)`` over every assignment ``x`` (costs are >= 0)."""

    def peers(self, instance: Instance) -> np.ndarray:
        """``(P, 2)`` pairs of variables that share a cost term (each pair once)."""
        return self.simulator.peers(instance)

    def coupled(self, instance: Instance) -> np.ndarray:
        """``(P, 2)`` every pair of variables that share a cost term (each pair once).

        The constraint graph that algorithms exchanging messages with their neighbours
        (MGM, MGM-2, Max-Sum) need: two variables not listed here never change each
        other's local cost. Defaults to :meth:`peers`; a benchmark whose ``peers`` is a
        semantic subset of that graph (SHDS) overrides it.
        """
        return self.peers(instance)

    @abc.abstractmethod
    def features(self, ctx: SweepContext, role: str, idx: np.ndarray) -> dict[str, np.ndarray]:
        """The role's features (names of ``role_features[role]``) for variables ``idx``."""

    def pick(self, role: str, available: Mapping[str, Callable[[], np.ndarray]]) -> dict[str, np.ndarray]:
        """``role``'s features from ``available`` (name -> how to compute it): only those it declares are computed."""
        return {f.name: available[f.name]() for f in self.role_features[role]}

    def n_vars(self, instance: Instance) -> int:
        return int(instance.x0.shape[0])


def balanced_ownership(scores: np.ndarray) -> np.ndarray:
    """Assign variables to roles A, B, C in balanced thirds by semantic scores.

    ``scores[:, r]`` ranks variables for role ``r`` (A: risk, B: opportunity,
    C: coupling). The roles take turns A, B, C, each taking its highest-scoring
    unassigned variable (ties by lowest index), so each role ends with ``N // 3`` or
    ``N // 3 + 1`` variables. Returns ``owner`` of shape ``(N,)`` with values 0, 1, 2.
    """
    n = scores.shape[0]
    orders = [np.argsort(-scores[:, r], kind="stable") for r in range(3)]
    owner = np.full(n, -1, dtype=np.int8)
    cursor = [0, 0, 0]
    for k in range(n):
        r = k % 3
        while owner[orders[r][cursor[r]]] >= 0:
            cursor[r] += 1
        owner[orders[r][cursor[r]]] = r
    return owner


def _return_checker(domain: int) -> Callable[[Any, Mapping[str, Any]], np.ndarray]:
    def check_return(value: Any, obs: Mapping[str, Any]) -> np.ndarray:
        m = np.shape(obs["cur"])[0]
        if not isinstance(value, np.ndarray):
            raise InvalidReturn("type", f"must return a numpy array, got {type(value).__name__}")
        if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
            raise InvalidReturn("non-finite", "returned array has NaN or inf entries")
        if value.dtype.kind not in "iu":
            raise InvalidReturn("dtype", f"must return an integer array, got dtype {value.dtype}")
        if value.shape != (m,):
            raise InvalidReturn("shape", f"must return shape ({m},), got {value.shape}")
        if m and (value.min() < 0 or value.max() >= domain):
            raise InvalidReturn("domain", f"values must lie in 0..{domain - 1}, got [{value.min()}, {value.max()}]")
        return value.astype(np.int64)

    return check_return


def _to_kwargs_factory(names: tuple[str, ...], kinds: Mapping[str, str]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    def to_kwargs(obs: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in names:
            value = obs[name]
            if name == "t":
                out[name] = int(value)
            elif kinds.get(name) == "bool":
                out[name] = np.array(value, dtype=bool)
            elif name == "cur" or kinds.get(name) == "int":
                out[name] = np.array(value, dtype=np.int64)
            else:  # fresh float64 copies: a program may scribble on its inputs harmlessly
                out[name] = np.array(value, dtype=np.float64)
        return out

    return to_kwargs


def _hold(obs: Mapping[str, Any]) -> np.ndarray:
    return np.asarray(obs["cur"], dtype=np.int64)


class DCOPBenchmark(ProblemBenchmark):
    """A DCOP benchmark of the paper, from its :class:`DCOPProblem`."""

    family = "dcop"
    minimize = True

    def __init__(self, problem: DCOPProblem):
        super().__init__(problem)
        self._signatures = {r: self._make_signature(r) for r in ROLES}

    def _make_signature(self, role: str) -> Signature:
        features = self.problem.role_features[role]
        params = tuple(Param(n, a, d) for n, a, d in COMMON_PARAMS)
        params += tuple(Param(f.name, "np.ndarray", f.doc) for f in features)
        names = tuple(p.name for p in params)
        return Signature(
            role=role,
            function=f"select_values_{role}",
            params=params,
            returns="np.ndarray",
            returns_doc=(
                f"integer array of shape (m,) with values in 0..{self.problem.domain - 1}; any other "
                "return, or an exception, voids the rollout (strict rejection)"
            ),
            purpose=self.problem.purposes[role],
            to_kwargs=_to_kwargs_factory(names, {f.name: f.kind for f in features}),
            check_return=_return_checker(self.problem.domain),
        )

    # -- Benchmark API ---------------------------------------------------------------
    def signatures(self, interface: str = "paper") -> dict[str, Signature]:
        self.check_interface(interface)
        return dict(self._signatures)

    def new_episode(self, instance: Instance, interface: str = "paper") -> SweepEpisode:
        self.check_instance(instance, interface)
        return SweepEpisode(self, instance)

    def owned(self, instance: Instance, role: str) -> np.ndarray:
        """Indices of the variables a role owns, ascending."""
        return np.flatnonzero(np.asarray(instance.owner) == ROLES.index(role))

    def observation_space(self, role: str, instance: Instance, interface: str = "paper") -> spaces.Dict:
        m = self.owned(instance, role).size
        d = self.problem.domain
        entries: dict[str, gymnasium.Space] = {
            "cur": spaces.Box(0, d - 1, (m,), np.int64),
            "delta": spaces.Box(-np.inf, np.inf, (m, d), np.float64),
            "u": spaces.Box(0.0, 1.0, (m, d + 1), np.float64),
            "t": spaces.Discrete(SWEEPS + 1),
        }
        for f in self.problem.role_features[role]:
            shape = f.shape(m, self.problem)
            if f.kind == "bool":
                entries[f.name] = spaces.Box(0, 1, shape, np.int8)
            elif f.kind == "int":
                entries[f.name] = spaces.Box(f.low, f.high, shape, np.int64)
            else:
                entries[f.name] = spaces.Box(f.low, f.high, shape, np.float64)
        return spaces.Dict(entries)

    def action_space(self, role: str, instance: Instance, interface: str = "paper") -> spaces.MultiDiscrete:
        m = self.owned(instance, role).size
        return spaces.MultiDiscrete(np.full(m, self.problem.domain, dtype=np.int64))

    def state_space(self, instance: Instance) -> spaces.Box:
        """The global assignment ``x``: one value per variable."""
        return spaces.Box(0, self.problem.domain - 1, (self.problem.n_vars(instance),), np.int64)

    def score_bounds(self, instance: Instance) -> tuple[float, float]:
        """Costs lie in ``[0, worst_cost]``, so scores lie in ``[-worst_cost, 0]``."""
        return -float(self.problem.worst_cost(instance)), 0.0

    def reference_policy(self, role: str, interface: str = "paper"):
        """Hold: the role's variables keep their current values (a mandatory stage's
        fixed fallback: every variable needs a value, so the role cannot be absent)."""
        self.check_interface(interface)
        return _hold

    def reference_text(self, role: str) -> str:
        return "holding your variables at their current values"

    def max_steps(self, instance: Instance) -> int:
        return SWEEPS


class SweepEpisode(CachedEpisode):
    """One DCOP instance played for 50 synchronous sweeps."""

    def __init__(self, bench: DCOPBenchmark, instance: Instance):
        self.bench = bench
        self.problem = bench.problem
        self.instance = instance
        self.owned = {r: bench.owned(instance, r) for r in ROLES}
        x0 = np.asarray(instance.x0, dtype=np.int64)
        self.ctx = SweepContext(self.problem, instance, x0, x0.copy(), 0, None)
        self._obs: dict[str, dict[str, Any]] = {}

    @property
    def x(self) -> np.ndarray:
        """The current assignment (a copy)."""
        return self.ctx.x.copy()

    @property
    def done(self) -> bool:
        return self.ctx.t >= SWEEPS

    @property
    def step_count(self) -> int:
        return self.ctx.t

    def _observation(self, role: str) -> dict[str, Any]:
        if role not in self._obs:
            ctx, idx = self.ctx, self.owned[role]
            obs: dict[str, Any] = {
                "cur": ctx.x[idx].copy(),
                "delta": ctx.landscape[idx].copy(),
                "u": ctx.u[idx].copy(),
                "t": np.int64(min(ctx.t, SWEEPS)),
            }
            kinds = {f.name: f.kind for f in self.problem.role_features[role]}
            for name, value in self.problem.features(ctx, role, idx).items():
                dtype = {"bool": np.int8, "int": np.int64}.get(kinds[name], np.float64)
                obs[name] = np.asarray(value, dtype=dtype)
            self._obs[role] = obs
        return self._obs[role]

    def check(self, role: str, action: Any) -> Invalid | None:
        try:
            self.bench._signatures[role].check_return(action, self._observation(role))
        except InvalidReturn as exc:
            return Invalid(role, exc.reason, exc.message)
        return None

    def step(self, actions: Mapping[str, Any]) -> Invalid | None:
        if self.done:
            raise RuntimeError("the episode has ended")
        x_new = self.ctx.x.copy()
        for role in ROLES:
            if actions[role] is WAIT:  # the role holds its values
                continue
            signature = self.bench._signatures[role]
            try:
                value = signature.check_return(actions[role], self._observation(role))
            except InvalidReturn as exc:
                return Invalid(role, exc.reason, str(exc))
            x_new[self.owned[role]] = value
        self.ctx = SweepContext(self.problem, self.instance, x_new, self.ctx.x, self.ctx.t + 1, self.ctx)
        self.ctx.prev.prev = None  # keep one sweep of history, not the whole chain
        self._obs = {}
        return None

    def objective(self) -> float:
        return float(self.problem.cost(self.instance, self.ctx.x))

    def state_vector(self) -> np.ndarray:
        return self.ctx.x.copy()
