"""A single-agent Gymnasium view: one role learns, its teammates follow fixed policies.

:func:`single_agent_env` makes a benchmark's parallel env and hands one role to the
learner. The teammates are policies (any callable ``Dict observation -> action``; by
default the benchmark's seed programs) that see their usual ``Dict`` observations; the
learner sees a flat ``Box`` (see :mod:`relic_envs.wrappers.flat`) or, with
``flat=False``, its ``Dict``. The reward is the team reward of the wrapped env (the
per-step change of the team score), so an episode's return is the team's final score.

Forced steps. A routing agent that is back at the depot has one legal action left
(the depot) while its teammates still travel. With ``skip_forced=True`` (default)
:meth:`SingleAgentEnv.step` plays such steps itself and adds up their rewards, so the
learner only sees states where it has a choice; the episode's return is unchanged.

Teammates likewise: a teammate whose ``action_mask`` leaves one legal action (a routing
agent back home, a busy machine, a role whose turn it is not) takes it without its
policy being called, as ``relic_envs.rollout`` does not call a role that does not act.

Actions. ``Discrete(n, start=s)`` actions are shifted to start at 0 in this view
(``Discrete(n)``, action ``k`` is the env's ``k + s``), since RL libraries assume it; the
scheduling and constructive benchmarks use ``start=-1`` for "idle". Index ``k`` of the
action mask is action ``k`` of this view. ``MultiDiscrete`` actions pass unchanged.

Action masks: :meth:`SingleAgentEnv.action_masks` (the method sb3-contrib's
``MaskablePPO`` calls) and ``info["action_mask"]``.

>>> env = single_agent_env("mapp_pc", "C", regime="test50")
>>> obs, info = env.reset(seed=0)
>>> env.observation_space.contains(obs), env.action_masks().shape
(True, (50,))
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from relic_envs.errors import InvalidConfig
from relic_envs.wrappers.flat import MASK_KEY, Flattener

Policy = Callable[[Any], Any]


class SingleAgentEnv(gymnasium.Env):
    """One agent of a PettingZoo ``ParallelEnv`` as a Gymnasium env; the others follow policies.

    Parameters
    ----------
    env:
        A ``ParallelEnv`` with ``Dict`` (or any flattenable) observations.
    role:
        The learner's agent id, one of ``env.possible_agents``.
    teammates:
        A policy for every other agent: ``observation -> action`` on that agent's own
        (unflattened) observation.
    flat:
        ``True``: the learner observes a flat ``Box`` (:class:`Flattener`); ``False``:
        the wrapped env's observation as is.
    dtype, bound:
        Of the flat view, see :class:`~relic_envs.wrappers.flat.Flattener`.
    skip_forced:
        Play the learner's forced steps (one legal action) without asking it.
    """

    def __init__(
        self,
        env: ParallelEnv,
        role: str,
        teammates: Mapping[str, Policy],
        *,
        flat: bool = True,
        dtype: Any = np.float64,
        bound: float | None = None,
        skip_forced: bool = True,
    ):
        if not isinstance(env, ParallelEnv):
            raise TypeError(f"env must be a PettingZoo ParallelEnv, got {type(env).__name__}")
        if role not in env.possible_agents:
            raise InvalidConfig(f"role must be one of {env.possible_agents}, got {role!r}")
        others = [a for a in env.possible_agents if a != role]
        missing = [a for a in others if a not in teammates]
        extra = [a for a in teammates if a not in others]
        if missing or extra:
            raise InvalidConfig(f"teammates needs a policy for exactly {others}; missing {missing}, unexpected {extra}")
        if not all(callable(teammates[a]) for a in others):
            raise InvalidConfig("every teammate policy must be callable: observation -> action")
        self.env = env
        self.role = role
        self.teammates = {a: teammates[a] for a in others}
        self.flattener = Flattener(env.observation_space(role), dtype=dtype, bound=bound) if flat else None
        self.observation_space = self.flattener.space if flat else env.observation_space(role)
        space = env.action_space(role)
        self._offset = int(space.start) if isinstance(space, spaces.Discrete) else 0
        self.action_space = spaces.Discrete(int(space.n)) if self._offset else space
        self.skip_forced = bool(skip_forced)
        self.metadata = dict(getattr(env, "metadata", {}))
        self.render_mode = getattr(env, "render_mode", None)
        self._obs: dict[str, Any] | None = None

    # -- what the learner sees ----------------------------------------------------------
    def _learner_obs(self) -> Any:
        obs = self._obs[self.role]
        return self.flattener.flatten(obs) if self.flattener is not None else obs

    def _mask(self, agent: str | None = None) -> np.ndarray | None:
        obs = self._obs.get(agent or self.role) if self._obs is not None else None
        if isinstance(obs, Mapping) and MASK_KEY in obs:
            return np.asarray(obs[MASK_KEY])
        return None

    def _info(self, info: Mapping) -> dict:
        out = dict(info)
        mask = self._mask()
        if mask is not None:
            out[MASK_KEY] = mask.copy()
        return out

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the learner's legal actions now (all ``True`` where the env has none).

        ``Discrete(n)``: shape ``(n,)``. ``MultiDiscrete``: the per-entry masks
        concatenated (sb3-contrib's format), all ``True`` here since the DCOPs accept
        every value of the domain.
        """
        if self._obs is None:
            raise RuntimeError("action_masks() called before reset()")
        mask = self._mask()
        if mask is not None:
            return mask.astype(bool).ravel()
        if isinstance(self.action_space, spaces.Discrete):
            return np.ones(int(self.action_space.n), dtype=bool)
        if isinstance(self.action_space, spaces.MultiDiscrete):
            return np.ones(int(self.action_space.nvec.sum()), dtype=bool)
        raise TypeError(f"no action mask for a {type(self.action_space).__name__} action space")

    def _forced_action(self, agent: str) -> int | None:
        """``agent``'s only legal action in the env's numbering, when its mask leaves exactly one."""
        mask, space = self._mask(agent), self.env.action_space(agent)
        if mask is None or not isinstance(space, spaces.Discrete):
            return None
        legal = np.flatnonzero(mask)
        return int(legal[0]) + int(space.start) if legal.size == 1 else None

    def _teammate_action(self, agent: str) -> Any:
        forced = self._forced_action(agent)
        return forced if forced is not None else self.teammates[agent](self._obs[agent])

    # -- Gymnasium API --------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        observations, infos = self.env.reset(seed=seed, options=options)
        self._obs = observations
        return self._learner_obs(), self._info(infos.get(self.role, {}))

    def _step_team(self, action: Any):
        """One env step with the learner's ``action`` in the env's numbering."""
        actions = {a: (action if a == self.role else self._teammate_action(a)) for a in self.env.agents}
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        self._obs = observations
        done = bool(terminations.get(self.role, False) or truncations.get(self.role, False))
        return float(rewards.get(self.role, 0.0)), bool(terminations.get(self.role, False)), \
            bool(truncations.get(self.role, False)), done, infos.get(self.role, {})

    def step(self, action: Any):
        if self._obs is None or self.role not in self.env.agents:
            raise RuntimeError("step() called before reset() or after the episode ended")
        if self._offset and _is_integer(action):
            action = int(action) + self._offset  # anything else goes to the env as is, which refuses it
        reward, terminated, truncated, done, info = self._step_team(action)
        while self.skip_forced and not done and self.role in self.env.agents:
            forced = self._forced_action(self.role)
            if forced is None:
                break
            more, terminated, truncated, done, info = self._step_team(forced)
            reward += more
        return self._learner_obs(), reward, terminated, truncated, self._info(info)

    def render(self):
        return self.env.render()

    def close(self) -> None:
        self.env.close()


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool | np.bool_):
        return False
    return isinstance(value, int | np.integer) or (isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu")


def seed_teammates(name: str, role: str, interface: str = "paper") -> dict[str, Policy]:
    """The seed programs of every role of ``name`` except ``role``."""
    from relic_envs.seeds import seed_team

    return {r: p for r, p in seed_team(name, interface).items() if r != role}


def single_agent_env(
    name: str,
    role: str,
    *,
    teammates: Mapping[str, Policy] | None = None,
    flat: bool = True,
    dtype: Any = np.float64,
    bound: float | None = None,
    skip_forced: bool = True,
    **make_kwargs: Any,
) -> SingleAgentEnv:
    """A benchmark as a single-agent Gymnasium env in which ``role`` learns.

    Parameters
    ----------
    name, role:
        A benchmark of ``relic_envs.names()`` and one of its roles ``"A"``, ``"B"``, ``"C"``.
    teammates:
        Policies of the other roles (default: the benchmark's seed programs for the
        chosen ``interface``).
    flat, dtype, bound, skip_forced:
        See :class:`SingleAgentEnv`.
    **make_kwargs:
        Passed to :func:`relic_envs.make` (``interface``, ``regime``, ``instances``,
        ``on_invalid``, ...); ``make`` rejects unknown keywords.
    """
    import relic_envs

    if "api" in make_kwargs:
        raise InvalidConfig("single_agent_env makes the parallel env itself; do not pass api")
    env = relic_envs.make(name, **make_kwargs)
    if teammates is None:
        teammates = seed_teammates(name, role, make_kwargs.get("interface", "paper")) if role in env.possible_agents else {}
    return SingleAgentEnv(env, role, teammates, flat=flat, dtype=dtype, bound=bound, skip_forced=skip_forced)


def vector_env(name: str, role: str, num_envs: int, *, asynchronous: bool = False, **kwargs: Any) -> gymnasium.vector.VectorEnv:
    """``num_envs`` copies of :func:`single_agent_env` as a Gymnasium vector env.

    ``asynchronous=False`` gives a ``SyncVectorEnv`` (one process), ``True`` an
    ``AsyncVectorEnv`` (one process per copy). ``kwargs`` go to :func:`single_agent_env`.
    Masks: ``vec.call("action_masks")`` returns one per copy. Gymnasium's vector envs
    reset a finished copy on the *next* ``step`` (autoreset mode ``NEXT_STEP``).
    """
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise InvalidConfig(f"num_envs must be a positive int, got {num_envs!r}")
    fns = [functools.partial(single_agent_env, name, role, **kwargs) for _ in range(num_envs)]
    return gymnasium.vector.AsyncVectorEnv(fns) if asynchronous else gymnasium.vector.SyncVectorEnv(fns)
