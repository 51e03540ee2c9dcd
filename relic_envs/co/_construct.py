"""The constructive solver shared by HMTSP, FSTSP, FJAGV and MRCPS (Appendix B.3).

B.3: "three specialized decision modules inside one constraint-owning constructive
solver. Policies nominate identifiers, while the evaluator enforces uniqueness,
precedence, capacity, and deterministic repair." This module is that solver's
skeleton; a benchmark supplies only its construction state (``simulator.State``) and
its role tables (``roles.py``).

**Decisions.** The construction is a sequence of decisions; one env step is one
decision, taken by exactly one role (``Episode.acting``). The benchmark's state says
which role decides next and offers a :class:`Decision`: the feasible identifiers
(ascending), whether ``-1`` (skip) is allowed, and the deterministic *fallback*, the
feasible choice the evaluator makes in the role's place when its answer is invalid.
A role that is not deciding observes its context with no candidates, and an action
mask that allows only ``-1``; its answer is ignored and not checked.

**The return contract** (B.3: "the evaluator replaces malformed outputs with a
deterministic feasible choice"): the deciding role's answer is *repaired*, never
voided, when it is an exception (``"exception"``), not an integer (``"type"``; ``bool``
and floats such as ``3.0`` included), ``-1`` where skipping is not allowed
(``"skip"``), an integer outside the role's identifier space (``"range"``), or an
identifier not among the candidates (``"infeasible"``). Repair
applies the decision's fallback. Every repair is counted per role
(``Episode.repairs``) and logged (``Episode.repair_log``: step, role, reason, the
value's repr, the choice applied); ``Episode.info()`` reports both (and the
benchmark's own counters, e.g. HMTSP's forced assignments). ``Episode.check`` names
exactly the answers ``step`` would repair, so the env's ``"raise"`` mode refuses them;
in ``"program"`` mode the env passes them through and they are repaired (and listed
in ``infos[agent]["invalid_actions"]``); in ``"penalize"`` mode they become
:data:`~relic_envs.core.benchmark.WAIT`, which means skip where skipping is allowed
and the fallback otherwise (not counted as a repair: the env charges the penalty).

**End.** The episode ends when the benchmark's state has no decision left (every
customer served, every job scheduled). Every answer is feasible after repair, so
every episode ends with a complete solution; the raw objective mid-episode is the
state's objective of the partial construction (e.g. routes closed at the depot).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from relic_envs.core import codecs as F
from relic_envs.core.benchmark import ROLES, WAIT, GeneratedProblem, Invalid
from relic_envs.core.codecs import INF, Codec
from relic_envs.core.declared import DeclaredBenchmark, DeclaredEpisode, as_id, checked_id
from relic_envs.core.instance import Instance
from relic_envs.errors import InvalidReturn

SKIP = -1
REASONS = {
    "exception": "the policy raised",
    "type": "an identifier must be an integer (or -1 to skip where allowed)",
    "range": "the identifier is outside -1..n-1 (the role's identifier space)",
    "skip": "-1 (skip) is not allowed in this decision",
    "infeasible": "the identifier is not one of the feasible candidates offered",
}


@dataclasses.dataclass(frozen=True)
class Decision:
    """One decision of the construction: who decides, among what, and the repair."""

    role: int  # index of the deciding role, 0=A, 1=B, 2=C
    ids: np.ndarray  # (m,) int64 feasible identifiers, ascending
    can_skip: bool  # whether -1 is a valid answer
    fallback: int  # the deterministic feasible choice applied on repair (-1 only when can_skip)

    def __post_init__(self) -> None:
        assert self.fallback == SKIP and self.can_skip or self.fallback in self.ids, self  # internal invariant

    @staticmethod
    def idle(role: int) -> Decision:
        """The context of a role that is not deciding: no candidates, only -1."""
        return Decision(role, np.zeros(0, dtype=np.int64), True, SKIP)


def cheapest(role: int, ids: np.ndarray, costs: np.ndarray, can_skip: bool) -> Decision:
    """A decision whose fallback is the candidate of least cost (ties: the lowest id)."""
    ids = np.asarray(ids, dtype=np.int64)
    fallback = int(ids[np.argmin(costs)]) if ids.size else SKIP  # argmin takes the first of ties; ids ascend
    return Decision(role, ids, can_skip or not ids.size, fallback)


# -- codecs of the candidate arrays -------------------------------------------------------
class Ids(Codec):
    """``np.ndarray`` (m,) int64: the candidate identifiers, ascending.

    Encoded as an ``(n,)`` int8 mask over the role's identifier space.
    """

    def space(self, n):
        return spaces.Box(0, 1, (n,), np.int8)

    def decode(self, value):
        return np.flatnonzero(np.asarray(value)).astype(np.int64)


class Aligned(Codec):
    """``np.ndarray`` (m,) aligned with the candidate ids (float64, or int64 with ``ints``).

    Encoded as ``{"mask": int8 (n,), "value": float64 (n,)}``; entries off the mask are 0.
    """

    def __init__(self, ints: bool = False, low: float = -INF, high: float = INF):
        self.ints, self.low, self.high = ints, low, high

    def space(self, n):
        return spaces.Dict({"mask": spaces.Box(0, 1, (n,), np.int8), "value": spaces.Box(self.low, self.high, (n,), np.float64)})

    def decode(self, value):
        out = np.asarray(value["value"])[np.asarray(value["mask"]).astype(bool)]
        return out.astype(np.int64) if self.ints else np.array(out, dtype=np.float64)


class OptionalId(Codec):
    """``int`` in ``-1..n-1`` (``-1``: none), as ``Discrete(n + 1, start=-1)``."""

    def space(self, n):
        return spaces.Discrete(n + 1, start=-1)

    def decode(self, value):
        return int(value)


class Node(Codec):
    """``int``: a node id in ``0..n+extra-1`` (the role's ids plus ``extra`` more, e.g. depots)."""

    def __init__(self, extra: int = 0):
        self.extra = extra

    def space(self, n):
        return spaces.Discrete(n + self.extra)

    def decode(self, value):
        return int(value)


class Index(Codec):
    """``int``: an identifier outside the role's own id space (``-1``: none), e.g. the
    operation a machine is chosen for. A 0-d ``int64`` ``Box`` in ``-1..2**31-1``,
    because its range is another role's id space, which ``space(n)`` does not see."""

    HIGH = 2**31 - 1

    def space(self, n):
        return spaces.Box(-1, self.HIGH, (), np.int64)

    def decode(self, value):
        return int(value)


def index(value: Callable[[Any], int]):
    """Getter of an :class:`Index` parameter; ``value(view)`` is consulted only when the
    role decides (otherwise ``-1``)."""

    def get(v: View):
        return np.array(value(v) if v.decision.ids.size else -1, dtype=np.int64)

    return get


class Vector(Codec):
    """``np.ndarray`` (k,) float64 of fixed length (one entry per role)."""

    def __init__(self, k: int, low: float = -INF):
        self.k, self.low = k, low

    def space(self, n):
        return spaces.Box(self.low, INF, (self.k,), np.float64)

    def decode(self, value):
        return np.array(value, dtype=np.float64)


def aligned(values: Callable[[Any], np.ndarray]):
    """Getter of an :class:`Aligned` parameter; ``values(view)`` is the ``(n,)`` array over all ids."""

    def get(v: View):
        return {"mask": v.mask(), "value": np.where(v.mask().astype(bool), np.asarray(values(v), dtype=np.float64), 0.0)}

    return get


def ids(v: View) -> np.ndarray:
    return v.mask()


@dataclasses.dataclass
class View:
    """What one role is shown: the construction state and the role's decision context."""

    state: Any  # the benchmark's simulator.State (read only)
    decision: Decision
    n: int  # size of the role's identifier space

    @property
    def instance(self) -> Instance:
        return self.state.instance

    def mask(self) -> np.ndarray:
        out = np.zeros(self.n, dtype=np.int8)
        out[self.decision.ids] = 1
        return out


# -- the problem a benchmark supplies -----------------------------------------------------
class ConstructiveProblem(GeneratedProblem):
    """What one constructive benchmark defines; episodes, spaces and the contract are shared.

    A benchmark names its ``generator`` module (``REGIMES``, ``generate(regime, rng)``),
    its ``simulator`` module (``State(instance)`` with ``decision() -> Decision | None``,
    ``apply(choice)``,
    ``objective()``, ``state_vector()`` and ``counters() -> dict``; and
    ``score_bounds(instance)``, ``state_space(instance)``, ``max_steps(instance)``),
    the size of each role's identifier space (``id_space(role, instance)``: actions are
    ``-1..id_space-1``) and its role tables.
    """

    name: str
    instance_type: type[Instance]
    roles: Mapping[str, Mapping[str, F.RoleSpec]]  # interface -> role -> spec
    generator: Any
    simulator: Any
    minimize: bool = True

    def id_space(self, role: str, instance: Instance) -> int:
        raise NotImplementedError

    def reference(self, role: str, obs: Mapping[str, Any]) -> int:
        """The fixed, non-learned behaviour of ``role`` (Reflect's credit map)."""
        raise NotImplementedError


class ConstructiveBenchmark(DeclaredBenchmark):
    """A constructive benchmark of the paper, from its :class:`ConstructiveProblem`."""

    family = "co"
    interfaces = ("paper",)
    # Exceptions reach Episode.step as the deciding role's action, which repairs them.
    void_on_exception = False

    def _returns_doc(self, role: str) -> str:
        return spec_returns(self.problem, role)

    def _check_return(self, function: str) -> Callable[[Any, Mapping[str, Any]], Any]:
        return lambda value, obs: checked_id(value, obs, function, SKIP, "infeasible",
                                             "not a feasible candidate (or an allowed -1)")

    def id_space(self, role: str, instance: Instance) -> int:
        return self.problem.id_space(role, instance)

    def action_space(self, role: str, instance: Instance, interface: str = "paper") -> spaces.Discrete:
        return spaces.Discrete(self.problem.id_space(role, instance) + 1, start=SKIP)

    def max_steps(self, instance: Instance) -> int:
        return int(self.problem.simulator.max_steps(instance))

    def score_bounds(self, instance: Instance) -> tuple[float, float]:
        lo, hi = self.problem.simulator.score_bounds(instance)
        return float(lo), float(hi)

    def state_space(self, instance: Instance) -> spaces.Box:
        return self.problem.simulator.state_space(instance)

    def reference_policy(self, role: str, interface: str = "paper"):
        self.check_interface(interface)
        problem = self.problem

        def reference(obs: Mapping[str, Any]) -> int:
            return problem.reference(role, obs)

        return reference

    def reference_text(self, role: str) -> str:
        return getattr(self.problem, "reference_text", {}).get(role, "the evaluator's deterministic fallback choice")


def spec_returns(problem: ConstructiveProblem, role: str) -> str:
    return getattr(problem, "returns_doc", {}).get(
        role, "an identifier (int) from candidate_ids, or -1 to skip where allowed; any other answer is repaired "
        "deterministically by the evaluator (and counted)",
    )


class ConstructiveEpisode(DeclaredEpisode):
    """One instance constructed by three roles, one decision per step."""

    def __init__(self, bench: ConstructiveBenchmark, instance: Instance, interface: str):
        super().__init__(bench, instance, interface)
        self.state = self.problem.simulator.State(instance)
        self.steps = 0
        self.repairs = {r: 0 for r in ROLES}
        self.repair_log: list[tuple[int, str, str, str, int]] = []  # (step, role, reason, repr(value), applied)
        self.decisions = {r: 0 for r in ROLES}  # decisions taken per role
        self.choices = {r: 0 for r in ROLES}  # ... of which offered a real choice (two or more valid answers)
        self._decision = self.state.decision()

    @property
    def decision(self) -> Decision | None:
        """The decision pending now (``None`` once the construction is complete)."""
        return self._decision

    @property
    def done(self) -> bool:
        return self._decision is None

    @property
    def step_count(self) -> int:
        return self.steps

    def acting(self, role: str) -> bool:
        return self._decision is not None and self._decision.role == ROLES.index(role)

    def reason(self, value: Any) -> str | None:
        """Why the deciding role's ``value`` would be repaired, or ``None``."""
        d = self._decision
        if isinstance(value, BaseException):
            return value.reason if isinstance(value, InvalidReturn) and value.reason in REASONS else "exception"
        j = as_id(value)
        if j is None:
            return "type"
        if j == SKIP:
            return None if d.can_skip else "skip"
        if not SKIP <= j < self.problem.id_space(ROLES[d.role], self.instance):
            return "range"
        return None if j in d.ids else "infeasible"  # ids are few; `in` on an ndarray compares values

    def check(self, role: str, action: Any) -> Invalid | None:
        if not self.acting(role) or action is WAIT:
            return None
        why = self.reason(action)
        if why is None:
            return None
        detail = str(action) if isinstance(action, BaseException) else REASONS[why]  # InvalidAction appends the value
        return Invalid(role, why, detail)

    def step(self, actions: Mapping[str, Any]) -> Invalid | None:
        if self.done:
            raise RuntimeError("the episode has ended")
        d = self._decision
        role = ROLES[d.role]
        action = actions.get(role, WAIT)
        if action is WAIT:
            choice = SKIP if d.can_skip else d.fallback
        else:
            why = self.reason(action)
            if why is None:
                choice = as_id(action)
            else:
                choice = d.fallback
                self.repairs[role] += 1
                self.repair_log.append((self.steps, role, why, _short(action), choice))
        self.decisions[role] += 1
        self.choices[role] += int(d.ids.size + d.can_skip >= 2)
        self.state.apply(choice)
        self.steps += 1
        self._obs = {}
        self._decision = self.state.decision()
        return None

    def objective(self) -> float:
        return float(self.state.objective())

    def state_vector(self) -> np.ndarray:
        return np.asarray(self.state.state_vector(), dtype=np.float64)

    def info(self) -> dict[str, Any]:
        """Repair and decision counts per role and the benchmark's counters (for ``infos`` and results):
        ``repairs[r] / decisions[r]`` is the share of role ``r``'s answers the evaluator repaired."""
        return {"repairs": dict(self.repairs), "decisions": dict(self.decisions), **self.state.counters()}

    # -- observations ------------------------------------------------------------------
    def context(self, k: int) -> Decision:
        d = self._decision
        if d is not None and d.role == k:
            return d
        return Decision.idle(k)

    def view(self, k: int) -> View:
        return View(self.state, self.context(k), self.problem.id_space(ROLES[k], self.instance))

    def action_mask(self, k: int, view: View) -> np.ndarray:
        """``(n + 1,)`` int8: index 0 is ``-1`` (skip), index ``j + 1`` the identifier ``j`` (read from the
        pending decision, which the view does not hold)."""
        n = self.problem.id_space(ROLES[k], self.instance)
        mask = np.zeros(n + 1, dtype=np.int8)
        d = self._decision
        if d is None or d.role != k:
            mask[0] = 1
            return mask
        mask[0] = d.can_skip
        mask[d.ids + 1] = 1
        return mask


ConstructiveBenchmark.episode_type = ConstructiveEpisode  # declared after the benchmark, which plays it


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
