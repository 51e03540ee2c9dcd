"""The suite's one PettingZoo environment, built from a :class:`Benchmark`.

``RelicParallelEnv`` is native parallel (all roles act in one step, as the paper's
simulators do); the AEC form is derived with PettingZoo's ``parallel_to_aec``.

Reward is cooperative and shared: every agent gets the per-step change of the team
``score`` (costs negated), so an episode's return equals the final score, and the
last step's ``infos`` carry the raw objective.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec

from relic_envs.core.benchmark import Benchmark, Episode
from relic_envs.core.instance import Instance
from relic_envs.errors import InvalidConfig


class RelicParallelEnv(ParallelEnv):
    """A benchmark of the suite as a PettingZoo ``ParallelEnv``.

    Parameters
    ----------
    benchmark:
        The benchmark to play.
    instances:
        Instances to play. ``reset(seed=k)`` plays ``instances[k % len]``;
        ``reset()`` without a seed plays them in order, cycling. When omitted, each
        reset draws a fresh instance of ``regime`` from the benchmark's generator.
    regime:
        Generator regime for fresh instances (default: the benchmark's test regime).
    interface:
        ``"paper"`` (the paper's A/B/C signatures) or ``"alt"`` where offered.
    max_cycles:
        Truncate after this many steps (default: the benchmark's natural length).
    """

    metadata = {"render_modes": [], "is_parallelizable": True}

    def __init__(
        self,
        benchmark: Benchmark,
        *,
        instances: Sequence[Instance] | None = None,
        regime: str | None = None,
        interface: str = "paper",
        max_cycles: int | None = None,
        render_mode: str | None = None,
    ):
        benchmark.check_interface(interface)
        if render_mode is not None:
            raise InvalidConfig(f"render_mode must be None (no rendering yet), got {render_mode!r}")
        if instances is not None and len(instances) == 0:
            raise InvalidConfig("instances must be a non-empty sequence or None")
        regimes = list(benchmark.regimes())
        self.regime = regime if regime is not None else regimes[-1]
        if self.regime not in regimes:
            raise InvalidConfig(f"regime {self.regime!r} is not one of {regimes}")
        if max_cycles is not None and (not isinstance(max_cycles, int) or max_cycles < 1):
            raise InvalidConfig(f"max_cycles must be a positive int or None, got {max_cycles!r}")
        self.benchmark = benchmark
        self.interface = interface
        self.instances = list(instances) if instances is not None else None
        self.max_cycles = max_cycles
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "name": f"relic/{benchmark.name}-v0"}
        self.possible_agents = list(benchmark.roles)
        self.agents: list[str] = []
        self._np_random, _ = seeding.np_random(None)
        self._cursor = 0
        # Spaces are fixed by the size of the first instance; later instances must match.
        self._reference = self.instances[0] if self.instances else benchmark.generate(self.regime, np.random.default_rng(0))
        self._observation_spaces = {
            r: benchmark.observation_space(r, self._reference, interface) for r in self.possible_agents
        }
        self._action_spaces = {r: benchmark.action_space(r, self._reference, interface) for r in self.possible_agents}
        self.episode: Episode | None = None
        self.instance: Instance | None = None

    def observation_space(self, agent: str):
        return self._observation_spaces[agent]

    def action_space(self, agent: str):
        return self._action_spaces[agent]

    def _pick_instance(self, seed: int | None, options: dict | None) -> Instance:
        if options and "instance" in options:
            return options["instance"]
        if self.instances is not None:
            if seed is not None:
                return self.instances[seed % len(self.instances)]
            instance = self.instances[self._cursor % len(self.instances)]
            self._cursor += 1
            return instance
        rng = np.random.default_rng(seed) if seed is not None else self._np_random
        return self.benchmark.generate(self.regime, rng)

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)
            for r in self.possible_agents:
                self._action_spaces[r].seed(seed)
        instance = self._pick_instance(seed, options)
        for r in self.possible_agents:
            if self.benchmark.observation_space(r, instance, self.interface) != self._observation_spaces[r]:
                raise InvalidConfig(
                    f"instance size differs from the one the env was made for (role {r}); "
                    "make a new env for instances of another size"
                )
        self.instance = instance
        self.episode = self.benchmark.new_episode(instance, self.interface)
        self.agents = list(self.possible_agents)
        self._last_score = 0.0
        observations = {r: self.episode.observe(r) for r in self.agents}
        return observations, {r: {} for r in self.agents}

    def step(self, actions: dict[str, Any]):
        if self.episode is None or not self.agents:
            raise RuntimeError("step() called before reset() or after the episode ended")
        missing = [r for r in self.agents if r not in actions]
        if missing:
            raise InvalidConfig(f"step() needs an action for every live agent; missing {missing}")
        invalid = self.episode.step(actions)
        agents = list(self.agents)
        if invalid is not None:
            # Strict rejection: the rollout is void, so the episode ends with no reward.
            info = {"invalid": {"role": invalid.role, "reason": invalid.reason, "detail": invalid.detail}}
            self.agents = []
            return (
                {r: self.episode.observe(r) for r in agents},
                {r: 0.0 for r in agents},
                {r: True for r in agents},
                {r: False for r in agents},
                {r: dict(info) for r in agents},
            )
        raw = self.episode.objective()
        score = self.benchmark.score(raw)
        reward = float(score - self._last_score)
        self._last_score = score
        terminated = bool(self.episode.done)
        truncated = bool(not terminated and self.max_cycles is not None and self.episode.step_count >= self.max_cycles)
        infos: dict[str, dict] = {r: {} for r in agents}
        if terminated or truncated:
            infos = {r: {"objective": float(raw), "score": float(score)} for r in agents}
            self.agents = []
        return (
            {r: self.episode.observe(r) for r in agents},
            {r: reward for r in agents},
            {r: terminated for r in agents},
            {r: truncated for r in agents},
            infos,
        )

    def state(self) -> np.ndarray:
        """A flat view of the global state (the benchmark's ``state_vector``)."""
        if self.episode is None:
            raise RuntimeError("state() called before reset()")
        return self.episode.state_vector()

    def render(self) -> None:
        return None

    def close(self) -> None:
        return None


def to_aec(parallel: RelicParallelEnv):
    """The AEC form of a parallel env (PettingZoo's own conversion)."""
    return parallel_to_aec(parallel)
