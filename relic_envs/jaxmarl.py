"""The suite as JaxMARL environments: ``relic_envs.jaxmarl.make(name)`` is a ``jaxmarl.environments.MultiAgentEnv``.

Needs the ``jaxmarl`` extra (``pip install 'relic-envs[jaxmarl]'``); without it
:func:`make` raises :class:`~relic_envs.errors.MissingExtra` naming the extra, and the
rest of ``relic_envs`` imports as usual.

One adapter class (``relic_envs.jaxmarl.RelicMultiAgentEnv``, built on first use) serves all
fourteen benchmarks and both interfaces: it wraps the benchmark's functional JAX env
(:mod:`relic_envs.core.functional`) and the flat view's layout
(:mod:`relic_envs.wrappers.flat`), with no per-family code.

What a JaxMARL user gets
------------------------
``env.agents``
    The roles, ``["A", "B", "C"]`` (``num_agents == 3``); ``agent_classes`` puts each
    role in its own class (the roles observe different things, so no two share a shape).
``env.reset(key) -> (obs, state)``
    ``key`` draws one instance of the env's pool (uniformly; a pool of one is a fixed
    instance) and starts its episode.
``env.step(key, state, actions) -> (obs, state, rewards, dones, infos)``
    JaxMARL's own ``step``: the transition, then an automatic reset (a fresh draw from
    the pool) where ``dones["__all__"]``; ``rewards`` and ``dones`` are the returned
    step's, ``obs`` the new episode's first observation. Every agent gets the team's
    shared reward, so an episode's return (per agent) is the final team score, minus
    the penalties of refused actions (``hi - lo + 1`` each, as in the functional env).
    ``dones`` are equal for all agents (LogWrapper's assumption).
``obs[agent]``
    A flat ``float32`` vector (``dtype=`` to change), laid out exactly as the flat view
    ``relic_envs.wrappers.flatten_observations`` lays out the role's ``Dict``
    observation (Gymnasium's ``spaces.flatten``: sorted keys, nested dicts depth first,
    ``Box`` values row-major, ``Discrete`` one-hot, the ``action_mask`` kept as a
    field). ``env.layout(agent)`` lists the fields (the flat view's ``FlatField`` s);
    ``env.unflatten(agent, vector)`` gives the ``Dict`` back (numpy).
``env.action_space(agent)``
    A JaxMARL ``Discrete(n)`` where the role's space is ``Discrete(n, start)``: index
    ``i`` is the benchmark's action ``i + start`` (MAPP: node ``i``; MAS and CO:
    ``i - 1``, so index 0 is the idle/skip answer ``-1``). A JaxMARL ``MultiDiscrete``
    for the DCOPs (one value per owned variable, in the order of ``cur``).
``env.get_avail_actions(state)``
    ``{agent: bool array}``: the observation's ``action_mask`` (MAPP, MAS, CO), which
    lines up with the indices above; all true for the DCOPs, whose every value is legal
    (shape ``(m, d)``: variable by value; SensorDCSP's ``valid_mask`` is an observation
    feature, its padded values are legal and act like sleep).
``infos``
    ``"invalid"`` (refused actions at this step), ``"score"`` (the team score so far)
    and ``"truncated"`` (the time limit, below, ended the episode), each broadcast to
    shape ``(num_agents,)`` as JaxMARL's wrappers and baselines expect.

Instances
---------
An instance is data, not state: the env holds a fixed *pool* of same-size instances,
chosen when it is made, and every reset draws one of them with its key.

- ``instances="train"`` (default): the canonical training split (5 batches of 10,
  one size per benchmark);
- ``instances="test"``, ``"test50"``, ... : one canonical test set
  (``relic_envs.splits(name).test``);
- ``instances=[...]``: your own same-size instances (one is a fixed instance);
- ``regime=..., n_instances=..., seed=...``: that many fresh draws of a generator regime.

Time limit
----------
The functional env's episodes end naturally (the 50th DCOP sweep, every route closed,
every job or task done). A team that keeps answering refused actions (a routing agent
asking for a visited node waits where it is) could go on forever, so an episode also
ends after ``time_limit`` steps, with ``infos["truncated"]``. The default is the
instance's ``Benchmark.max_steps + 1``, the horizon the suite's own trainers and parity
checks use (``max_steps`` bounds the natural episode length).

>>> import relic_envs.jaxmarl  # the module imports without the extra; make() needs it
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from relic_envs.errors import InvalidAction, InvalidConfig, MissingExtra

__all__ = ["make", "pool"]

#: Top-level packages whose absence means the extra is missing (jaxmarl imports the others).
_EXTRA_MODULES = ("jaxmarl", "flax", "jaxtyping", "chex", "jax", "jaxlib")


def pool(name: str, interface: str = "paper", *, instances: Any = "train", regime: str | None = None,
         n_instances: int = 64, seed: int = 0) -> list:
    """The instances an env made with these arguments draws from (see the module docs)."""
    import numpy as np

    from relic_envs.core.instance import Instance
    from relic_envs.core.registry import get_benchmark
    from relic_envs.core.splits import splits

    bench = get_benchmark(name)
    bench.check_interface(interface)
    if regime is not None:
        if isinstance(n_instances, bool) or not isinstance(n_instances, int) or n_instances < 1:
            raise InvalidConfig(f"n_instances must be a positive int, got {n_instances!r}")
        if regime not in bench.regimes():
            raise InvalidConfig(f"{name}: unknown regime {regime!r}; allowed: {list(bench.regimes())}")
        rng = np.random.default_rng(seed)
        return [bench.generate(regime, rng) for _ in range(n_instances)]
    if isinstance(instances, str):
        canonical = splits(name)
        if instances == "train":
            return [i for batch in canonical.train for i in batch]
        if instances in canonical.test:
            return list(canonical.test[instances])
        raise InvalidConfig(f"{name}: instances must be 'train', a test regime {list(canonical.test)} "
                            f"or a sequence of instances, got {instances!r}")
    if isinstance(instances, Instance):
        instances = [instances]
    if not isinstance(instances, Sequence) or len(instances) == 0:
        raise InvalidConfig(f"instances must be a non-empty sequence of instances, got {type(instances).__name__}")
    return list(instances)


def make(name: str, interface: str = "paper", *, instances: Any = "train", regime: str | None = None,
         n_instances: int = 64, seed: int = 0, dtype: Any = "float32", time_limit: int | None = None):
    """Benchmark ``name`` as a ``jaxmarl.environments.MultiAgentEnv`` (see the module docs).

    Parameters
    ----------
    name, interface:
        A benchmark of ``relic_envs.names()`` and one of its interfaces (``"paper"``;
        ``"alt"`` for MAPP and MAS).
    instances, regime, n_instances, seed:
        The pool of same-size instances that resets draw from (see :func:`pool`).
    dtype:
        The flat observations' dtype (``"float32"``; ``"float64"`` under ``jax.enable_x64``).
    time_limit:
        Steps after which an episode ends regardless (default: ``max_steps + 1`` per instance).
    """
    env_class = _build()[1]  # first, so that a missing extra is said before anything is loaded
    members = pool(name, interface, instances=instances, regime=regime, n_instances=n_instances, seed=seed)
    return env_class(name, interface, members, dtype=dtype, time_limit=time_limit)


def __getattr__(attr: str):
    """``RelicMultiAgentEnv`` and ``RelicState``, built on first use (they subclass jaxmarl's classes)."""
    if attr in ("RelicState", "RelicMultiAgentEnv"):
        state, env = _build()
        return state if attr == "RelicState" else env
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


@functools.cache
def _build() -> tuple[type, type]:
    """Import jaxmarl and define the adapter's classes: ``(RelicState, RelicMultiAgentEnv)``.

    The classes subclass jaxmarl's, so they are defined here, on first use, and the module
    itself imports without the extra.
    """
    try:
        import jax
        import jax.numpy as jnp
        from flax import struct
        from jaxmarl.environments import spaces
        from jaxmarl.environments.multi_agent_env import MultiAgentEnv, State
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in _EXTRA_MODULES:
            raise MissingExtra(exc.name.split(".")[0], "jaxmarl") from exc
        raise
    import numpy as np
    from gymnasium import spaces as gym_spaces

    from relic_envs.core.functional import make as make_functional
    from relic_envs.wrappers.flat import MASK_KEY, FlatField, Flattener

    @struct.dataclass
    class RelicState(State):
        """JaxMARL's ``State`` (``done``, ``step``) with the functional env's state, its current
        ``Dict`` observations and the index of the pool's instance being played."""

        env_state: Any
        obs: Any
        instance: Any

    def flatten_fn(space, dtype):
        """A traceable ``obs -> vector`` equal to ``gymnasium.spaces.flatten(space, obs)`` (same order)."""
        if isinstance(space, gym_spaces.Dict):
            parts = [(key, flatten_fn(sub, dtype)) for key, sub in space.spaces.items()]
            return lambda obs: jnp.concatenate([f(obs[key]) for key, f in parts])
        if isinstance(space, gym_spaces.Discrete):
            n, start = int(space.n), int(space.start)
            return lambda x: jax.nn.one_hot(jnp.asarray(x) - start, n, dtype=dtype)
        if isinstance(space, gym_spaces.MultiDiscrete):
            nvec, start = space.nvec.reshape(-1), np.broadcast_to(space.start, space.nvec.shape).reshape(-1)
            if (nvec == nvec[0]).all():  # one block size: one one_hot
                return lambda x: jax.nn.one_hot(jnp.asarray(x).reshape(-1) - start, int(nvec[0]), dtype=dtype).reshape(-1)
            return lambda x: jnp.concatenate(
                [jax.nn.one_hot(v - s, int(n), dtype=dtype) for v, s, n in zip(jnp.asarray(x).reshape(-1), start, nvec)])
        if isinstance(space, gym_spaces.Box | gym_spaces.MultiBinary):
            return lambda x: jnp.asarray(x).reshape(-1).astype(dtype)
        raise TypeError(f"cannot flatten {space}")  # Flattener has refused it already

    class RelicMultiAgentEnv(MultiAgentEnv):
        """One benchmark and interface of the suite as a JaxMARL ``MultiAgentEnv`` over a pool of instances.

        Build it with :func:`relic_envs.jaxmarl.make`, whose docs give the contract.
        """

        def __init__(self, name: str, interface: str, instances, *, dtype: Any = "float32", time_limit: int | None = None):
            fenv = make_functional(name, interface)
            bench = fenv.benchmark
            super().__init__(num_agents=len(fenv.roles))
            self.agents = list(fenv.roles)
            self.fenv, self.benchmark, self.interface = fenv, bench, interface
            self.instances = tuple(instances)
            self.dtype = np.dtype(dtype)
            if self.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
                raise InvalidConfig(f"dtype must be float32 or float64, got {self.dtype}")
            if time_limit is not None and (isinstance(time_limit, bool) or not isinstance(time_limit, int) or time_limit < 1):
                raise InvalidConfig(f"time_limit must be a positive int or None, got {time_limit!r}")
            self._params = fenv.params(self.instances)  # checks the instances; leading axis = pool index
            limits = [bench.max_steps(i) + 1 if time_limit is None else time_limit for i in self.instances]
            self._limits = np.asarray(limits, dtype=np.int32)

            self._flatteners: dict[str, Flattener] = {}
            self._flatten, self._start, self._avail_const = {}, {}, {}
            for role in self.agents:
                obs_space, act_space, flat, low, high = self._role_spaces(role)
                self._flatteners[role] = flat
                self._flatten[role] = flatten_fn(obs_space, self.dtype)
                self.observation_spaces[role] = spaces.Box(low, high, (flat.size,), self.dtype)
                if isinstance(act_space, gym_spaces.Discrete):
                    n = int(act_space.n)
                    self.action_spaces[role] = spaces.Discrete(n)
                    self._start[role] = int(act_space.start)
                    has_mask = MASK_KEY in obs_space.spaces and obs_space[MASK_KEY].shape == (n,)
                    self._avail_const[role] = None if has_mask else np.ones((n,), bool)
                elif isinstance(act_space, gym_spaces.MultiDiscrete):
                    nvec = act_space.nvec.reshape(-1)
                    self.action_spaces[role] = spaces.MultiDiscrete([int(v) for v in nvec])
                    self._start[role] = np.asarray(act_space.start).reshape(-1).astype(np.int32)
                    self._avail_const[role] = np.arange(int(nvec.max()))[None, :] < nvec[:, None]
                else:
                    raise NotImplementedError(f"{name}: role {role}'s action space {act_space} has no JaxMARL "
                                              "counterpart here (Discrete and MultiDiscrete do)")

        def _role_spaces(self, role: str):
            """``(Dict observation space, action space, Flattener, low, high)`` of ``role``, checked to be one
            size over the pool; ``low``/``high`` bound the flat vector over every instance of the pool."""
            bench, first = self.benchmark, self.instances[0]
            obs_space, act_space = bench.observation_space(role, first, self.interface), bench.action_space(role, first, self.interface)
            flat = Flattener(obs_space, dtype=self.dtype)
            low, high = flat.space.low, flat.space.high
            for k, instance in enumerate(self.instances[1:], 1):
                other = Flattener(bench.observation_space(role, instance, self.interface), dtype=self.dtype)
                if other.layout != flat.layout or bench.action_space(role, instance, self.interface) != act_space:
                    raise InvalidConfig(f"{bench.name}: instances[{k}] is not the size of instances[0] (role {role}'s "
                                        "spaces differ); a pool holds instances of one size")
                low, high = np.minimum(low, other.space.low), np.maximum(high, other.space.high)
            return obs_space, act_space, flat, low, high

        # -- the pool ----------------------------------------------------------------------
        @property
        def n_instances(self) -> int:
            return len(self.instances)

        def _instance(self, k):
            """The functional env's params of pool instance ``k`` (a traced index)."""
            return jax.tree.map(lambda a: jnp.asarray(a)[k], self._params)

        # -- the flat layout -----------------------------------------------------------------
        def layout(self, agent: str) -> dict[str, FlatField]:
            """``{field name: FlatField}`` of ``agent``'s observation vector, in vector order (the flat view's)."""
            return dict(self._flatteners[agent].layout)

        def unflatten(self, agent: str, vector) -> Any:
            """The ``Dict`` observation (numpy) that ``agent``'s flat ``vector`` encodes."""
            return self._flatteners[agent].unflatten(np.asarray(vector))

        # -- MultiAgentEnv -------------------------------------------------------------------
        @functools.partial(jax.jit, static_argnums=(0,))
        def reset(self, key):
            key_instance, key_env = jax.random.split(key)
            k = jax.random.randint(key_instance, (), 0, self.n_instances)
            obs, env_state = self.fenv.reset(key_env, self._instance(k))
            state = RelicState(done=jnp.zeros((), bool), step=jnp.zeros((), jnp.int32), env_state=env_state, obs=obs,
                               instance=k)
            return self.get_obs(state), state

        def step_env(self, key, state: RelicState, actions):
            missing = [a for a in self.agents if a not in actions]
            if missing:  # a caller's bug, found while tracing
                raise InvalidAction(None, "agent", f"step() needs one action per agent {self.agents}: missing {missing}",
                                    list(actions))
            ours = {a: jnp.asarray(actions[a]).astype(jnp.int32) + self._start[a] for a in self.agents}
            obs, env_state, reward, done, info = self.fenv.step(key, state.env_state, ours, self._instance(state.instance))
            t = state.step + 1
            truncated = ~done & (t >= jnp.asarray(self._limits)[state.instance])
            over = done | truncated
            new = RelicState(done=over, step=t, env_state=env_state, obs=obs, instance=state.instance)
            rewards = {a: reward for a in self.agents}
            dones = {**{a: over for a in self.agents}, "__all__": over}
            n = self.num_agents
            infos = {"invalid": jnp.full((n,), info["invalid"]), "score": jnp.full((n,), info["score"]),
                     "truncated": jnp.full((n,), truncated)}
            return self.get_obs(new), new, rewards, dones, infos

        def get_obs(self, state: RelicState) -> dict[str, Any]:
            return {a: self._flatten[a](state.obs[a]) for a in self.agents}

        @functools.partial(jax.jit, static_argnums=(0,))
        def get_avail_actions(self, state: RelicState) -> dict[str, Any]:
            out = {}
            for a in self.agents:
                const = self._avail_const[a]
                out[a] = jnp.asarray(const) if const is not None else jnp.asarray(state.obs[a][MASK_KEY]).astype(bool)
            return out

        @property
        def name(self) -> str:
            return f"relic_{self.benchmark.name}" + ("" if self.interface == "paper" else f"_{self.interface}")

        @property
        def agent_classes(self) -> dict[str, list[str]]:
            return {a: [a] for a in self.agents}

        def __repr__(self) -> str:
            return f"<RelicMultiAgentEnv {self.benchmark.name} ({self.interface}), {self.n_instances} instances>"

    return RelicState, RelicMultiAgentEnv
