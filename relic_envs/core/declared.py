"""Benchmarks whose roles are declared as data: each role a function name, a purpose and
its parameters, every parameter a codec (:mod:`relic_envs.core.codecs`).

MAPP, MAS and CO are built this way: a role picks one identifier (a node, a job, a
candidate) among those its ``action_mask`` allows. What that takes is written here once:
the signatures a program is checked against, the observation spaces (the codecs' spaces
plus the mask), and the reading of a return value as an identifier. A family's benchmark
class says only what is its own: how many identifiers a role chooses among, whether the
mask has a slot for ``-1`` in front, and how it judges a return (MAPP never rejects one,
MAS and CO name the reason).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import numpy as np
from gymnasium import spaces

from relic_envs.core.benchmark import ROLES, Episode, ProblemBenchmark
from relic_envs.core.instance import Instance
from relic_envs.core.signature import Param, Signature
from relic_envs.errors import InvalidReturn


def as_id(value: Any) -> int | None:
    """The identifier a return value names, or ``None`` when it is not an integer.

    Python and numpy integers (and 0-d integer arrays) count; ``bool``, floats (even
    ``3.0``), strings, ``None`` and exceptions do not.
    """
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu":
        return int(value)
    return None


def copy_observation(obs: Any) -> Any:
    """A fresh copy of an observation (nested dicts of arrays): an episode hands out copies of
    the observation it caches, so a policy that writes into one changes nothing else."""
    if isinstance(obs, dict):
        return {k: copy_observation(v) for k, v in obs.items()}
    return obs.copy() if isinstance(obs, np.ndarray) else obs


def checked_id(value: Any, obs: Mapping[str, Any], function: str, lowest: int, reason: str, expected: str) -> int:
    """``value`` as an identifier the mask allows (index ``j + 1`` for ``j``), or :class:`InvalidReturn`.

    ``lowest`` is ``-1`` where the role may pass, else ``0``; ``reason`` and ``expected``
    name the failure for the benchmark's return contract.
    """
    j = as_id(value)
    if j is None:
        raise InvalidReturn("type", f"{function} returned {type(value).__name__}, not an int")
    mask = np.asarray(obs["action_mask"])
    if not lowest <= j < mask.size - 1 or not mask[j + 1]:
        raise InvalidReturn(reason, f"{function} returned {j}, {expected}")
    return j


class DeclaredBenchmark(ProblemBenchmark):
    """A benchmark from a problem whose ``roles[interface][role]`` are role specs
    (``function``, ``purpose``, ``params`` of ``name``/``annotation``/``doc``/``codec``)
    and whose ``minimize`` says the objective's direction.

    Subclasses give :meth:`_returns_doc` and :meth:`_check_return`, and set
    ``mask_slot_for_minus_one`` when index 0 of the mask stands for ``-1``.
    """

    mask_slot_for_minus_one = True
    episode_type: type[DeclaredEpisode]  # the family's episode, played by :meth:`new_episode`

    def __init__(self, problem: Any):
        super().__init__(problem)
        self.interfaces = tuple(problem.roles)
        self.minimize = problem.minimize  # per problem: MAS-ST maximises, its siblings minimise
        self._signatures = {i: {r: self._signature(i, r) for r in ROLES} for i in self.interfaces}

    def new_episode(self, instance: Instance, interface: str = "paper") -> DeclaredEpisode:
        self.check_instance(instance, interface)
        return self.episode_type(self, instance, interface)

    def _returns_doc(self, role: str) -> str:
        raise NotImplementedError(f"{type(self).__name__} must document what a role returns (_returns_doc)")

    def _check_return(self, function: str) -> Callable[[Any, Mapping[str, Any]], Any]:
        raise NotImplementedError(f"{type(self).__name__} must say how a return is judged (_check_return)")

    def _signature(self, interface: str, role: str) -> Signature:
        spec = self.problem.roles[interface][role]
        codecs = {p.name: p.codec for p in spec.params}

        def to_kwargs(obs: Mapping[str, Any]) -> dict[str, Any]:
            return {name: codec.decode(obs[name]) for name, codec in codecs.items()}

        return Signature(
            role=role, function=spec.function, params=tuple(Param(p.name, p.annotation, p.doc) for p in spec.params),
            returns="int", returns_doc=self._returns_doc(role), purpose=spec.purpose,
            to_kwargs=to_kwargs, check_return=self._check_return(spec.function),
        )

    def signatures(self, interface: str = "paper") -> dict[str, Signature]:
        self.check_interface(interface)
        return dict(self._signatures[interface])

    @cache  # noqa: B019 - benchmarks are module-level singletons; spaces must be identical objects
    def _observation_space(self, role: str, n: int, interface: str) -> spaces.Dict:
        """The role's codecs' spaces for ``n`` identifiers, and the ``action_mask``."""
        entries = {p.name: p.codec.space(n) for p in self.problem.roles[interface][role].params}
        entries["action_mask"] = spaces.Box(0, 1, (n + int(self.mask_slot_for_minus_one),), np.int8)
        return spaces.Dict(entries)

    def observation_space(self, role: str, instance: Instance, interface: str = "paper") -> spaces.Dict:
        self.check_interface(interface)
        return self._observation_space(role, self.id_space(role, instance), interface)

    def id_space(self, role: str, instance: Instance) -> int:
        """How many identifiers ``role`` chooses among on ``instance``."""
        raise NotImplementedError(f"{type(self).__name__} must give a role's number of identifiers (id_space)")


class CachedEpisode(Episode):
    """An episode that builds each role's observation once per step (``_observation``) and
    hands out copies (``observe``), or to a caller that only reads them the cached arrays (``peek``)."""

    def _observation(self, role: str) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} must build a role's observation (_observation)")

    def observe(self, role: str) -> dict[str, Any]:
        return copy_observation(self._observation(role))

    def peek(self, role: str) -> dict[str, Any]:
        return self._observation(role)


class DeclaredEpisode(CachedEpisode):
    """An episode of a :class:`DeclaredBenchmark`: a role's observation is its declared
    parameters read off the family's view of the state, plus its action mask.

    Subclasses give ``view(k)`` and ``action_mask(k, view)`` and keep ``self._obs``
    (emptied at every step); observations are built once per step and handed out as copies.
    """

    problem: Any
    interface: str
    _obs: dict[str, dict[str, Any]]

    def __init__(self, bench: DeclaredBenchmark, instance: Instance, interface: str):
        self.bench = bench
        self.problem = bench.problem
        self.instance = instance
        self.interface = interface
        self._obs = {}  # this step's observations, built on first request

    def view(self, k: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must give role {k}'s view of the state (view)")

    def action_mask(self, k: int, view: Any) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} must give role {k}'s action mask (action_mask)")

    def _observation(self, role: str) -> dict[str, Any]:
        if role not in self._obs:
            k = ROLES.index(role)
            view = self.view(k)
            obs = {p.name: p.get(view) for p in self.problem.roles[self.interface][role].params}
            obs["action_mask"] = self.action_mask(k, view)
            self._obs[role] = obs
        return self._obs[role]
