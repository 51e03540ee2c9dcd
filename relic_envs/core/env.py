"""The suite's one PettingZoo environment, built from a :class:`Benchmark`.

``RelicParallelEnv`` is native parallel (all roles act in one step, as the paper's
simulators do); the AEC form is derived with PettingZoo's ``parallel_to_aec``.

Reward is cooperative and shared: every agent gets the per-step change of the team
``score`` (costs negated), so a valid episode's return equals the final score, and the
last step's ``infos`` carry the raw objective.

Invalid actions (``on_invalid``)
--------------------------------
An action the benchmark cannot apply (wrong type, shape or dtype, a value outside the
domain, an entry the ``action_mask`` forbids) is handled in one of three ways:

``"penalize"`` (default)
    Refused, penalised and reported, never raised: the refused action becomes
    :data:`~relic_envs.core.benchmark.WAIT` and the episode goes on. What ``WAIT``
    does per family: a DCOP role holds its values; a MAPP agent stays where it is and
    spends nothing; a MAS resource idles until the next event (where a MAS-JD/FS team
    has only refused or idle answers and nothing else can happen, the episode ends and
    the unfinished jobs are charged at the horizon); a CO role skips where skipping is
    allowed, else the evaluator makes its deterministic fallback choice. This is what
    PettingZoo's classic games do with an illegal move, and what its test kit (which
    samples actions without the mask) and RL libraries sampling without masks need.
``"raise"`` (opt-in, for debugging)
    ``step`` raises :class:`~relic_envs.errors.InvalidAction` naming the agent, the
    reason and the value, before anything changes: the episode can go on.
``"program"``
    The paper's program semantics: a DCOP or MAS rollout is void (the episode ends
    there, ``infos["void"]`` names role and reason), a MAPP agent is sent home (the
    depot fallback), a CO answer is repaired (the deterministic fallback, counted in
    ``infos["repairs"]``).

In both non-raising modes every refused action costs the team ``penalty = hi - lo + 1``
where ``[lo, hi]`` bounds the score of every valid episode of the instance
(``Benchmark.score_bounds``), so an episode with an invalid action always returns less
than every valid episode. Every refusal is listed in that step's ``infos[agent]`` under
``"invalid_actions"`` (a list of ``{"role", "reason", "detail"}``), with the step's
total ``"penalty"``; a step without refusals has neither key. The raw ``objective`` in
the last step's ``infos`` is the paper's, without penalties.

Malformed ``step`` arguments (not a dict, actions for agents that are not live, a live
agent's action missing) are caller bugs, not actions, and raise ``InvalidAction`` in
every mode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec

from relic_envs.core.benchmark import WAIT, Benchmark, Episode, Invalid
from relic_envs.core.instance import Instance
from relic_envs.errors import InvalidAction, InvalidConfig

ON_INVALID = ("penalize", "raise", "program")  # the first is the default
RENDER_MODES = ("human", "rgb_array")


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
    render_mode:
        ``None``, ``"rgb_array"`` (``render()`` returns an ``(H, W, 3)`` uint8 frame) or
        ``"human"`` (a matplotlib window). Needs matplotlib.
    on_invalid:
        ``"penalize"`` (default: an illegal action is refused, penalised and reported in
        ``infos["invalid_actions"]``), ``"raise"`` (opt-in, for debugging) or
        ``"program"`` (the paper's program semantics): see the module docs.
    """

    metadata = {"render_modes": list(RENDER_MODES), "is_parallelizable": True, "render_fps": 4}

    def __init__(
        self,
        benchmark: Benchmark,
        *,
        instances: Sequence[Instance] | None = None,
        regime: str | None = None,
        interface: str = "paper",
        max_cycles: int | None = None,
        render_mode: str | None = None,
        on_invalid: str = "penalize",
    ):
        benchmark.check_interface(interface)
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise InvalidConfig(f"render_mode must be None or one of {list(RENDER_MODES)}, got {render_mode!r}")
        if on_invalid not in ON_INVALID:
            raise InvalidConfig(f"on_invalid must be one of {list(ON_INVALID)}, got {on_invalid!r}")
        if instances is not None:
            if isinstance(instances, Instance) or not isinstance(instances, Sequence) or len(instances) == 0:
                raise InvalidConfig(f"instances must be a non-empty sequence of instances or None, got {_kind(instances)}")
            for k, instance in enumerate(instances):
                _check_instance(benchmark, instance, interface, f"instances[{k}]")
        regimes = list(benchmark.regimes())
        self.regime = regime if regime is not None else regimes[-1]
        if self.regime not in regimes:
            raise InvalidConfig(f"regime {self.regime!r} is not one of {regimes}")
        if max_cycles is not None and (isinstance(max_cycles, bool) or not isinstance(max_cycles, int) or max_cycles < 1):
            raise InvalidConfig(f"max_cycles must be a positive int or None, got {max_cycles!r}")
        self.benchmark = benchmark
        self.interface = interface
        self.instances = list(instances) if instances is not None else None
        self.max_cycles = max_cycles
        self.render_mode = render_mode
        self.on_invalid = on_invalid
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
        self.state_space = benchmark.state_space(self._reference)
        self.episode: Episode | None = None
        self.instance: Instance | None = None
        self._penalty = 0.0

    def observation_space(self, agent: str):
        return self._observation_spaces[self._known(agent)]

    def action_space(self, agent: str):
        return self._action_spaces[self._known(agent)]

    def _known(self, agent: str) -> str:
        if agent not in self._action_spaces:
            raise InvalidConfig(f"unknown agent {agent!r}; agents are {self.possible_agents}")
        return agent

    # -- reset ---------------------------------------------------------------------------
    def _pick_instance(self, seed: int | None, options: Mapping | None) -> Instance:
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
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0):
            raise InvalidConfig(f"seed must be a non-negative int or None, got {seed!r}")
        if options is not None:
            if not isinstance(options, Mapping):
                raise InvalidConfig(f"options must be a dict or None, got {_kind(options)}")
            # Other keys are ignored, as Gymnasium envs do (PettingZoo's api test passes one).
        if seed is not None:
            self._np_random, _ = seeding.np_random(int(seed))
            # Distinct, reproducible streams per agent: one seed for all would make
            # every role sample the same actions.
            agent_seeds = np.random.SeedSequence(int(seed)).generate_state(len(self.possible_agents))
            for r, s in zip(self.possible_agents, agent_seeds):
                self._action_spaces[r].seed(int(s))
        instance = self._pick_instance(seed, options)
        _check_instance(self.benchmark, instance, self.interface, "options['instance']")
        for r in self.possible_agents:
            if self.benchmark.observation_space(r, instance, self.interface) != self._observation_spaces[r]:
                raise InvalidConfig(
                    f"instance size differs from the one the env was made for (role {r}); "
                    "make a new env for instances of another size"
                )
        self.instance = instance
        self.episode = self.benchmark.new_episode(instance, self.interface)
        lo, hi = self.benchmark.score_bounds(instance)
        self._penalty = float(hi - lo + 1.0)
        self.agents = list(self.possible_agents)
        self._last_score = 0.0
        observations = {r: self.episode.observe(r) for r in self.agents}
        return observations, {r: {} for r in self.agents}

    # -- step ----------------------------------------------------------------------------
    def _checked_actions(self, actions: Any) -> tuple[dict[str, Any], list[Invalid]]:
        """The actions to apply and the refused ones, after the boundary checks."""
        if not isinstance(actions, Mapping):
            raise InvalidAction(None, "type", "step() takes a dict {agent: action}", actions)
        extra = [a for a in actions if a not in self.agents]
        if extra:
            raise InvalidAction(None, "agent", f"actions for agents that are not live ({extra}); live: {self.agents}", actions)
        missing = [r for r in self.agents if r not in actions]
        if missing:
            raise InvalidAction(None, "agent", f"step() needs an action for every live agent; missing {missing}", actions)
        applied, refused = {}, []
        for role in self.agents:
            action = actions[role]
            if isinstance(action, list | tuple):  # Gymnasium accepts sequences for array spaces
                action = np.asarray(action)
            invalid = self.episode.check(role, action) if self.episode.acting(role) else None
            if invalid is not None:
                if self.on_invalid == "raise":
                    raise InvalidAction(role, invalid.reason, invalid.detail, actions[role])
                refused.append(invalid)
                if self.on_invalid == "penalize":
                    action = WAIT
            applied[role] = action
        # Joint rules are only visible on all answers together. In "penalize" mode each
        # blamed answer becomes WAIT, which check_team no longer blames, so this ends; in
        # "program" mode a refused answer already voids the step (checked once only).
        while not (refused and self.on_invalid == "program") and (invalid := self.episode.check_team(applied)):
            if self.on_invalid == "raise":
                raise InvalidAction(invalid.role, invalid.reason, invalid.detail, actions[invalid.role])
            refused.append(invalid)
            if self.on_invalid == "program":
                break  # the episode voids the rollout in step()
            applied[invalid.role] = WAIT
        return applied, refused

    def step(self, actions: dict[str, Any]):
        if self.episode is None or not self.agents:
            raise RuntimeError("step() called before reset() or after the episode ended")
        applied, refused = self._checked_actions(actions)
        agents = list(self.agents)
        void = self.episode.step(applied)  # "program" mode: a DCOP rollout may end void here
        score = self.benchmark.score(self.episode.objective())
        penalty = self._penalty * len(refused)
        reward = float(score - self._last_score - penalty)  # penalties are never paid back
        self._last_score = score
        terminated = bool(self.episode.done or void is not None)
        truncated = bool(not terminated and self.max_cycles is not None and self.episode.step_count >= self.max_cycles)
        info: dict[str, Any] = dict(self.episode.info())
        if refused:
            info["invalid_actions"] = [
                {"role": i.role, "reason": i.reason, "detail": i.detail} for i in refused
            ]
            info["penalty"] = penalty
        if void is not None:
            info["void"] = {"role": void.role, "reason": void.reason}
        elif terminated or truncated:
            raw = self.episode.objective()
            info.update(objective=float(raw), score=float(self.benchmark.score(raw)))
        if terminated or truncated:
            self.agents = []
        return (
            {r: self.episode.observe(r) for r in agents},
            {r: reward for r in agents},
            {r: terminated for r in agents},
            {r: truncated for r in agents},
            {r: dict(info) for r in agents},
        )

    def state(self) -> np.ndarray:
        """A flat view of the global state (the benchmark's ``state_vector``, in ``state_space``)."""
        if self.episode is None:
            raise RuntimeError("state() called before reset()")
        return self.episode.state_vector()

    def render(self) -> np.ndarray | None:
        if self.render_mode is None:
            return None
        if self.episode is None:
            raise RuntimeError("render() called before reset()")
        from relic_envs.core.render import render_frame, show_frame

        frame = render_frame(self.episode)
        if self.render_mode == "rgb_array":
            return frame
        show_frame(frame)
        return None

    def close(self) -> None:
        if self.render_mode == "human":
            from relic_envs.core.render import close_window

            close_window()


def _kind(value: Any) -> str:
    return type(value).__name__


def _check_instance(benchmark: Benchmark, instance: Any, interface: str, where: str) -> None:
    try:
        benchmark.check_instance(instance, interface)
    except InvalidConfig as exc:
        raise InvalidConfig(f"{where}: {exc}") from None


def to_aec(parallel: RelicParallelEnv):
    """The AEC form of a parallel env (PettingZoo's own conversion)."""
    return parallel_to_aec(parallel)
