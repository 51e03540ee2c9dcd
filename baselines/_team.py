"""A team played role by role from one object's state (a plan, a schedule, an online planner)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from relic_envs.core.benchmark import ROLES


class RoleTeam(Mapping):
    """``team[role]`` is ``self._policy(k)`` for the role's index ``k``; ``reset(instance)`` is the subclass's.

    The roles share the object (one plan holds all three routes), so it is a team
    for ``relic_envs.rollout`` and ``relic-baselines eval``, not three separate policies.
    """

    def _policy(self, k: int) -> Callable[[Mapping[str, Any]], Any]:
        raise NotImplementedError(f"{type(self).__name__} must say how role {ROLES[k]} acts (_policy)")

    def __getitem__(self, role: str) -> Callable[[Mapping[str, Any]], Any]:
        if role not in ROLES:
            raise KeyError(role)
        return self._policy(ROLES.index(role))

    def __iter__(self) -> Iterator[str]:
        return iter(ROLES)

    def __len__(self) -> int:
        return len(ROLES)
