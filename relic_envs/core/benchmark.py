"""What every benchmark provides to the generic environment, rollout and CLI.

A :class:`Benchmark` binds one problem of the paper (its generator, simulator and
roles) to the suite's machinery. A family base (``relic_envs.dcop._sweep`` for the
DCOPs) implements most of it once; a benchmark module fills in what differs.
An :class:`Episode` is one instance being played: it owns the state, applies the
return contract, and reports the raw objective.
"""

from __future__ import annotations

import abc
import dataclasses
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np

from relic_envs.core.instance import Instance
from relic_envs.core.signature import Signature

ROLES: tuple[str, ...] = ("A", "B", "C")


@dataclasses.dataclass(frozen=True)
class Invalid:
    """Why a rollout was invalidated: the role at fault and the reason category."""

    role: str
    reason: str  # e.g. "exception", "shape", "domain", "dtype", "non-finite", "forbidden"
    detail: str = ""


class _Wait:
    """The type of :data:`WAIT`."""

    def __repr__(self) -> str:
        return "WAIT"


#: An action meaning "this role does nothing this step": a DCOP role holds its values,
#: a routing agent stays where it is and spends nothing. The env substitutes it for a
#: refused action in ``on_invalid="penalize"`` mode; it is not part of the paper's
#: return contracts, so programs cannot return it.
WAIT = _Wait()


class Episode(abc.ABC):
    """One instance being played by a team, one decision step at a time."""

    @abc.abstractmethod
    def observe(self, role: str) -> dict[str, Any]:
        """The role's observation now (fresh arrays the caller may keep)."""

    def peek(self, role: str) -> dict[str, Any]:
        """The role's observation now, for a caller that only reads it: an episode that caches
        its observations hands out the cached arrays, not copies (the sandbox's referee, which
        pickles them to a worker, saves a copy per array and per step)."""
        return self.observe(role)

    @abc.abstractmethod
    def step(self, actions: Mapping[str, Any]) -> Invalid | None:
        """Apply one step of checked actions; return the rejection if one was invalid.

        An action may be :data:`WAIT` (the role does nothing this step).
        """

    @abc.abstractmethod
    def check(self, role: str, action: Any) -> Invalid | None:
        """Why ``role``'s ``action`` breaks the return contract now, or ``None``.

        Pure: the state does not change. ``step`` applies the benchmark's semantics
        (void, depot fallback) to exactly the actions this refuses.
        """

    def check_team(self, actions: Mapping[str, Any]) -> Invalid | None:
        """A refusal that only all answers together show (MAS-JD/FS: the whole team idling
        when nothing else can happen), or ``None``. Pure, like :meth:`check`."""
        return None

    def info(self) -> dict[str, Any]:
        """Per-episode counters for ``infos`` and rollout results (CO: repairs per role)."""
        return {}

    def acting(self, role: str) -> bool:
        """Whether ``role``'s action matters this step (a routing agent back home does not act)."""
        return True

    @property
    @abc.abstractmethod
    def done(self) -> bool:
        """True once the episode has reached its natural end."""

    @property
    @abc.abstractmethod
    def step_count(self) -> int:
        """Steps taken so far."""

    @abc.abstractmethod
    def objective(self) -> float:
        """The raw objective of the current state, in the paper's units and direction."""

    @abc.abstractmethod
    def state_vector(self) -> np.ndarray:
        """A flat numpy view of the global state (PettingZoo's ``state()``)."""


class Benchmark(abc.ABC):
    """One benchmark of the paper, as the generic machinery sees it.

    Attributes
    ----------
    name:
        Registry name, e.g. ``"dgc"``.
    family:
        ``"dcop"``, ``"mapp"``, ``"mas"`` or ``"co"``.
    minimize:
        True when the raw objective is a cost (``score = -raw``).
    interfaces:
        Role interfaces the benchmark offers (``"paper"`` always; ``"alt"`` for MAPP/MAS).
    """

    name: str
    family: str
    minimize: bool
    interfaces: tuple[str, ...] = ("paper",)
    roles: tuple[str, ...] = ROLES
    # True: a policy that raises voids the rollout (DCOP strict rejection). False: the
    # exception object is passed to ``Episode.step`` as the role's action, which maps
    # it per the benchmark's contract (MAPP: return to the depot).
    void_on_exception: bool = True

    @abc.abstractmethod
    def signatures(self, interface: str = "paper") -> dict[str, Signature]:
        """The role signatures of an interface, keyed by role."""

    @abc.abstractmethod
    def regimes(self) -> Sequence[str]:
        """Names of the generator regimes (training batches and test sizes)."""

    @abc.abstractmethod
    def generate(self, regime: str, rng: np.random.Generator) -> Instance:
        """A fresh instance of a regime."""

    @abc.abstractmethod
    def new_episode(self, instance: Instance, interface: str = "paper") -> Episode:
        """Start playing an instance."""

    @abc.abstractmethod
    def observation_space(self, role: str, instance: Instance, interface: str = "paper") -> gymnasium.spaces.Dict:
        """The role's observation space for instances of this one's size."""

    @abc.abstractmethod
    def action_space(self, role: str, instance: Instance, interface: str = "paper") -> gymnasium.Space:
        """The role's action space for instances of this one's size."""

    @abc.abstractmethod
    def max_steps(self, instance: Instance) -> int:
        """The natural episode length (an upper bound where episodes end early)."""

    def reference_policy(self, role: str, interface: str = "paper"):
        """The fixed, non-learned behaviour of ``role`` for Reflect's credit map (Appendix C.2).

        The full team is compared with a reference team in which this policy stands in
        for the role: the role absent where resources are substitutable, a fixed
        fallback where the stage is mandatory.
        """
        raise NotImplementedError(f"{self.name}: no reference policy defined for Reflect's credit map yet")

    def reference_text(self, role: str) -> str:
        """One phrase naming the reference behaviour, for the Reflect summary."""
        return "the fixed reference behaviour"

    def score_bounds(self, instance: Instance) -> tuple[float, float]:
        """``(lo, hi)``: every valid episode of ``instance`` ends with a score in this range.

        The envs charge an invalid action ``hi - lo + 1`` (see ``RelicParallelEnv``), so
        an episode with one never returns as much as any valid episode.
        """
        raise NotImplementedError(f"{self.name}: no score bounds defined")

    def state_space(self, instance: Instance) -> gymnasium.spaces.Box:
        """The space of :meth:`Episode.state_vector` for instances of this one's size."""
        raise NotImplementedError(f"{self.name}: no state space defined")

    def check_instance(self, instance: Instance, interface: str = "paper") -> None:
        """Raise ``InvalidConfig`` unless ``interface`` exists and ``instance`` is this benchmark's kind."""
        from relic_envs.errors import InvalidConfig

        self.check_interface(interface)
        if not isinstance(instance, Instance):
            raise InvalidConfig(f"{self.name} needs an Instance, got {type(instance).__name__}")

    def score(self, raw: float) -> float:
        """Higher-is-better score of a raw objective: costs negated, rewards as is."""
        return -float(raw) if self.minimize else float(raw)

    def check_interface(self, interface: str) -> None:
        from relic_envs.errors import InvalidConfig

        if interface not in self.interfaces:
            raise InvalidConfig(
                f"benchmark {self.name!r} has no interface {interface!r}; allowed: {list(self.interfaces)}"
            )


class GeneratedProblem:
    """A family's problem whose instances come from the benchmark's ``generator`` module
    (``REGIMES``: regime name -> parameters, training batches first; ``generate(params, rng)``).

    A benchmark's problem names its instance class and simulator module in its class
    statement, ``class PCProblem(RoutingProblem, instance=PCInstance, simulator=simulator)``;
    the rest follows from the instance class, so no fact is written twice: ``name`` is the
    instance's ``kind`` tag, ``generator`` the module that defines the instance class.
    """

    name: str
    instance_type: type
    generator: Any
    simulator: Any

    def __init_subclass__(cls, instance: type | None = None, simulator: Any = None, **kwargs: Any):
        super().__init_subclass__(**kwargs)
        if instance is not None:
            if not getattr(instance, "kind", ""):
                raise TypeError(f"{cls.__name__}: instance class {instance.__name__} has no 'kind' tag")
            cls.instance_type, cls.name, cls.generator = instance, instance.kind, sys.modules[instance.__module__]
        if simulator is not None:
            cls.simulator = simulator

    def regimes(self) -> Mapping[str, Any]:
        """Regime name -> generator parameters; training batches first, test last."""
        return self.generator.REGIMES

    def generate(self, params: Any, rng: np.random.Generator) -> Instance:
        """A fresh instance for one regime's parameters."""
        return self.generator.generate(params, rng)


class ProblemBenchmark(Benchmark):
    """A benchmark built from a family's problem object (``DCOPProblem``, ``RoutingProblem``).

    The problem supplies ``name``, ``instance_type``, ``regimes()`` (regime name ->
    generator parameters) and ``generate(params, rng)``; what every family does with
    them (regime lookup, the instance-type check) lives here once.
    """

    def __init__(self, problem: Any):
        self.problem = problem
        self.name = problem.name

    def regimes(self) -> list[str]:
        return list(self.problem.regimes())

    def generate(self, regime: str, rng: np.random.Generator) -> Instance:
        from relic_envs.errors import InvalidConfig

        table = self.problem.regimes()
        if regime not in table:
            raise InvalidConfig(f"{self.name}: unknown regime {regime!r}; allowed: {list(table)}")
        return self.problem.generate(table[regime], rng)

    def check_instance(self, instance: Instance, interface: str) -> None:
        """Raise ``InvalidConfig`` unless ``interface`` exists and ``instance`` is this benchmark's kind."""
        from relic_envs.errors import InvalidConfig

        self.check_interface(interface)
        if not isinstance(instance, self.problem.instance_type):
            raise InvalidConfig(
                f"{self.name} needs a {self.problem.instance_type.__name__}, got {type(instance).__name__}"
            )
