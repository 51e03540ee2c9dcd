"""Play a team on instances and report the paper's objective per instance.

``rollout`` drives the same :class:`~relic_envs.core.benchmark.Episode` the PettingZoo
env drives, without the env's per-step dict plumbing, so a number printed by the
CLI and a return collected through PettingZoo agree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Generator, Mapping, Sequence
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
        The instances to play, e.g. ``relic_envs.splits("dgc").test_instances()`` (a sequence; ``.test`` is a dict by regime).
    interface:
        ``"paper"`` or ``"alt"`` (where the benchmark has it).
    progress:
        Show a progress bar.
    """
    bench = get_benchmark(benchmark) if isinstance(benchmark, str) else benchmark
    bench.check_interface(interface)
    if not isinstance(team, Mapping) and not hasattr(team, "__getitem__"):
        raise InvalidConfig(f"team must map each role {list(bench.roles)} to a policy (obs -> action), "
                            f"got {type(team).__name__}")
    if isinstance(instances, Mapping):
        raise InvalidConfig("instances must be a sequence of instances; for a split's test set use "
                            f"relic_envs.splits({bench.name!r}).test_instances(regime), not .test (a dict by regime)")
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
    return drive(play_requests(bench, instance, interface), team)


def _ask(policy: Policy, obs: Mapping[str, Any]) -> Any:
    """A policy's action, or the exception it raised (a user policy's bug is that policy's action)."""
    try:
        return policy(obs)
    except Exception as exc:  # noqa: BLE001 - play_requests judges it (voids the rollout, or the fallback)
        return exc


def drive(requests: Generator[dict[str, Any], dict[str, Any], RolloutResult], team: Mapping[str, Policy]) -> RolloutResult:
    """Answer every request of :func:`play_requests` with ``team``'s policies; the rollout's result."""
    try:
        asked = next(requests)
        while True:
            asked = requests.send({role: _ask(team[role], obs) for role, obs in asked.items()})
    except StopIteration as stop:
        return stop.value


def play_requests(bench: Benchmark, instance: Instance, interface: str = "paper", *, copies: bool = True,
                  ) -> Generator[dict[str, Any], dict[str, Any], RolloutResult]:
    """One rollout as a conversation: yields ``{role: observation}`` of the roles acting
    this step, receives ``{role: action or Exception}``, returns the :class:`RolloutResult`.

    The rules of a rollout live here once. :func:`rollout` answers from policies in
    this process; the learner's sandbox answers many instances' requests at once from
    isolated workers, so the simulator and the objective never run where a program does.
    An exception as an answer is judged as a raising policy is: it voids the rollout
    (naming the role; the first acting role in role order wins), or, where the
    benchmark maps failures to a fallback (MAPP, MAS, CO), it is that fallback.
    ``copies=False`` yields the episode's own arrays (:meth:`Episode.peek`), for a caller
    that only reads them and must not write them.
    """
    episode = bench.new_episode(instance, interface)
    look = episode.observe if copies else episode.peek
    while not episode.done:
        acting = [role for role in bench.roles if episode.acting(role)]  # a busy machine, an agent back home: not called
        answers = yield {role: look(role) for role in acting}
        actions = {role: WAIT for role in bench.roles if role not in acting}
        for role in acting:
            answer = answers[role]
            if isinstance(answer, Exception):
                if not bench.void_on_exception:
                    actions[role] = answer  # the episode applies the benchmark's fallback (MAPP: depot)
                    continue
                if isinstance(answer, InvalidReturn):
                    return RolloutResult(None, None, episode.step_count, Invalid(role, answer.reason, str(answer)))
                detail = f"{type(answer).__name__}: {answer}"
                return RolloutResult(None, None, episode.step_count, Invalid(role, "exception", detail))
            actions[role] = answer
        invalid = episode.step(actions)
        if invalid is not None:
            return RolloutResult(None, None, episode.step_count, invalid)
    raw = episode.objective()
    return RolloutResult(raw, bench.score(raw), episode.step_count, info=episode.info())


def repair_counts(results: Sequence[RolloutResult]) -> dict[str, tuple[int, int]] | None:
    """Per role, ``(repaired answers, answers)`` summed over ``results``; ``None`` where the
    benchmark repairs nothing (only the constructive benchmarks of B.3 repair: an answer
    that is not a valid id is replaced by the decision's fallback and counted).

    A repaired answer is the paper's semantics, not a failure: a program whose every answer
    is repaired still scores, as the fallback policy does. So every place a CO score is
    shown also shows these shares.

    >>> r = RolloutResult(1.0, 1.0, 3, info={"repairs": {"A": 1, "B": 0}, "decisions": {"A": 2, "B": 1}})
    >>> repair_counts([r, r])
    {'A': (2, 4), 'B': (0, 2)}
    """
    infos = [r.info for r in results if "repairs" in r.info and "decisions" in r.info]
    if not infos:
        return None
    return {role: (sum(int(i["repairs"][role]) for i in infos), sum(int(i["decisions"][role]) for i in infos))
            for role in infos[0]["repairs"]}


def repair_shares(results: Sequence[RolloutResult]) -> dict[str, float] | None:
    """Per role, the share of answers repaired (0 for a role that answered nothing); see :func:`repair_counts`."""
    counts = repair_counts(results)
    return None if counts is None else {r: (rep / n if n else 0.0) for r, (rep, n) in counts.items()}


def repair_text(results: Sequence[RolloutResult]) -> str | None:
    """``"answers repaired: A 0 of 412 (0.0%), ..."``, or ``None`` where nothing is ever repaired."""
    counts = repair_counts(results)
    if counts is None:
        return None
    return "answers repaired: " + ", ".join(
        f"{role} {rep} of {n} ({100 * rep / n:.1f}%)" if n else f"{role} 0 of 0" for role, (rep, n) in counts.items())
