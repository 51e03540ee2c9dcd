"""Playing a scheduling heuristic through the benchmark's own episode (FJAGV, MRCPS).

A heuristic here is a *chooser*: ``choose(state, decision) -> int``, called at every
decision of the constructive episode (``relic_envs.co._construct``) with the
benchmark's construction state (read only) and the pending :class:`Decision`; it
returns one of ``decision.ids``. :func:`play` drives an episode with it, so every
objective reported for these rows is the episode's own (the simulator's), and it
records the choices. :class:`PlanTeam` turns a named row into a team of the env: on
``reset(instance)`` it plays the row and then answers each role's decisions with the
recorded choices, which reproduces the same episode (the construction is
deterministic), so ``relic_envs.rollout`` and ``relic-baselines eval --team`` measure
the row in the env itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from baselines._team import RoleTeam
from relic_envs.co._construct import ConstructiveEpisode, Decision
from relic_envs.core.benchmark import ROLES
from relic_envs.core.instance import Instance
from relic_envs.core.registry import get_benchmark

Chooser = Callable[[Any, Decision], int]


def pick(ids: np.ndarray, *keys: np.ndarray) -> int:
    """The id with the least key, lexicographically over ``keys`` (last key most significant,
    as ``np.lexsort``); remaining ties: the lowest id (``ids`` ascend and lexsort is stable)."""
    return int(ids[np.lexsort(keys)[0]]) if keys else int(ids[0])


def play(name: str, instance: Instance, choose: Chooser) -> tuple[ConstructiveEpisode, list[int]]:
    """Run one episode of benchmark ``name`` with ``choose``; (the finished episode, its choices)."""
    episode = get_benchmark(name).new_episode(instance)
    choices = []
    while not episode.done:
        d = episode.decision
        choice = int(choose(episode.state, d))
        if choice not in d.ids:
            raise RuntimeError(f"chooser returned {choice}, not among the candidates {d.ids.tolist()}")  # internal invariant
        choices.append(choice)
        episode.step({ROLES[d.role]: choice})
    return episode, choices


class PlanTeam(RoleTeam):
    """A named row as a team of the env (module doc). ``solve(instance) -> choices`` plays the row."""

    def __init__(self, solve: Callable[[Instance], list[int]]):
        self.solve = solve
        self.choices: list[int] = []
        self.next = 0

    def reset(self, instance: Instance) -> None:
        self.choices, self.next = self.solve(instance), 0

    def _act(self, obs: Mapping[str, Any]) -> int:
        if not np.asarray(obs["action_mask"])[1:].any():
            return -1  # not this role's decision: the answer is ignored
        choice = self.choices[self.next]
        self.next += 1
        return choice

    def _policy(self, k: int):
        return self._act  # one sequence of choices, whichever role decides
