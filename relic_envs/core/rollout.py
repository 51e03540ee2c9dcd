"""Play a team on instances and report the paper's objective per instance.

``rollout`` drives the same :class:`~relic_envs.core.benchmark.Episode` the PettingZoo
env drives, without the env's per-step dict plumbing, so a number printed by the
CLI and a return collected through PettingZoo agree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tqdm.auto import tqdm

from relic_envs.core.benchmark import WAIT, Benchmark, Invalid
from relic_envs.core.instance import Instance
from relic_envs.core.registry import get_benchmark
from relic_envs.errors import InvalidConfig, InvalidReturn

Policy = Callable[[Mapping[str, Any]], Any]


@dataclasses.dataclass(frozen=True)
class RolloutResult:
    """The outcome of one instance.

    ``objective`` is the raw objective in the paper's units and direction and
    ``score`` its higher-is-better form; both are ``None`` when the rollout was
    invalidated, and ``invalid`` then names the role and the reason.
    """

    objective: float | None
    score: float | None
    steps: int
    invalid: Invalid | None = None
    info: dict = dataclasses.field(default_factory=dict)  # the episode's counters (CO: repairs per role)

    @property
    def valid(self) -> bool:
        return self.invalid is None


def rollout(
    benchmark: str | Benchmark,
    team: Mapping[str, Policy],
    instances: Sequence[Instance],
    *,
    interface: str = "paper",
    progress: bool = False,
) -> list[RolloutResult]:
    """Play ``team`` on every instance; one :class:`RolloutResult` per instance.

    A policy that raises, or returns a value that breaks the return contract, voids
    that instance's rollout: the result names the role and the reason, and the
    remaining instances are still played.

    Parameters
    ----------
    benchmark:
        A benchmark name (``"dgc"``) or object.
    team:
        A policy per role (``{"A": ..., "B": ..., "C": ...}``); a policy is any callable
        ``obs -> action``. A team object with a ``reset(instance)`` method is told
        which instance starts, for policies that keep per-episode state.
    instances:
        The instances to play, e.g. ``relic_envs.splits("dgc").test``.
    interface:
        ``"paper"`` or ``"alt"`` (where the benchmark has it).
    progress:
        Show a progress bar.
    """
    bench = get_benchmark(benchmark) if isinstance(benchmark, str) else benchmark
    bench.check_interface(interface)
    missing = [r for r in bench.roles if r not in team]
    if missing:
        raise InvalidConfig(f"team needs a policy for every role {list(bench.roles)}; missing {missing}")
    results = []
    for instance in tqdm(instances, desc=f"{bench.name}", disable=not progress, leave=False):
        results.append(_play(bench, team, instance, interface))
    return results


def _play(bench: Benchmark, team: Mapping[str, Policy], instance: Instance, interface: str) -> RolloutResult:
    if hasattr(team, "reset"):
        team.reset(instance)
    episode = bench.new_episode(instance, interface)
    while not episode.done:
        actions = {}
        for role in bench.roles:
            if not episode.acting(role):  # a busy machine, an agent back home: its program is not called
                actions[role] = WAIT
                continue
            try:
                actions[role] = team[role](episode.observe(role))
            except Exception as exc:  # a user policy's bug voids its rollout (or is its action), not the batch
                if not bench.void_on_exception:
                    actions[role] = exc  # the episode applies the benchmark's fallback (MAPP: depot)
                    continue
                if isinstance(exc, InvalidReturn):
                    return RolloutResult(None, None, episode.step_count, Invalid(role, exc.reason, str(exc)))
                detail = f"{type(exc).__name__}: {exc}"
                return RolloutResult(None, None, episode.step_count, Invalid(role, "exception", detail))
        invalid = episode.step(actions)
        if invalid is not None:
            return RolloutResult(None, None, episode.step_count, invalid)
    raw = episode.objective()
    return RolloutResult(raw, bench.score(raw), episode.step_count, info=episode.info())
