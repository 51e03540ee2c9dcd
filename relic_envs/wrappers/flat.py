"""A flat view of the suite's observations: each role's ``Dict`` becomes one fixed-size ``Box``.

Every role's observation is a ``gymnasium.spaces.Dict`` keyed by its signature's
parameter names (DESIGN contract 5), sometimes nested, with ``Discrete`` entries and
``Box`` entries of several dtypes. SuperSuit's observation wrappers and most RL
libraries want one flat float vector. :class:`Flattener` does that for one space with
Gymnasium's own ``flatten_space`` / ``flatten`` / ``unflatten``, so the layout is
Gymnasium's, documented per field by :attr:`Flattener.layout`:

- fields in the ``Dict``'s key order (Gymnasium sorts a ``Dict``'s keys), nested
  ``Dict``s depth first, each field named by its dotted path (``"graph.dist_mat"``);
- a ``Box`` field: its values in row-major (C) order, cast to the flat dtype;
- a ``Discrete(n, start)`` field: ``n`` entries, one-hot at ``value - start``;
- a ``MultiDiscrete`` field: one one-hot block per entry; ``MultiBinary``: its bits.

:class:`FlatObservations` applies it to every agent of a PettingZoo ``ParallelEnv``
(:func:`flatten_observations` also takes the AEC form). The ``action_mask`` field stays
in the vector (so :meth:`Flattener.unflatten` inverts the whole observation) and is also
copied, as the env's ``int8`` array, into that agent's ``infos[agent]["action_mask"]``,
where observation wrappers (frame stacking, normalisation, padding) cannot change it.

Exactness and bounds. With the default ``dtype=np.float64`` and ``bound=None`` the view
is exact: ``unflatten(flatten(obs))`` gives back every value (integers up to 2**53,
``inf`` included). ``dtype=np.float32`` halves the memory and is what neural networks
use; integers up to 2**24 stay exact, floats round to float32. Several fields have
infinite bounds (costs, prizes, distances), so the flat ``Box`` has infinite bounds
too, and a few observations hold ``inf`` itself (the alternative interface's
``teammate_dist`` when both teammates are home). ``bound=b`` replaces every infinite
bound by ``-b``/``+b`` and clips values into the new bounds: the vector is then finite
and SuperSuit's ``normalize_obs_v0`` (which maps ``[low, high]`` linearly and refuses
infinite bounds) applies; a constant field (``Box(c, c)``, MAS-FS's ``dummy``) gets the
bounds ``[c, c + 1]`` so that no normalisation divides by zero. Clipping changes values
beyond ``b``: choose ``b`` above the
largest finite value the benchmark produces (see ``docs/rl.md``), and for learning
prefer a running normalisation (Stable-Baselines3's ``VecNormalize``), which needs no
bounds at all.

>>> import relic_envs
>>> env = flatten_observations(relic_envs.make("dgc"))
>>> obs, infos = env.reset(seed=0)
>>> obs["A"].shape == env.observation_space("A").shape
True
>>> env.layout("A")["cur"]
FlatField(name='cur', start=0, stop=40, shape=(40,), encoding='values')
>>> (env.unflatten("A", obs["A"])["delta"] == env.unwrapped.episode.observe("A")["delta"]).all()
np.True_
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import BaseParallelWrapper
from pettingzoo.utils.conversions import aec_to_parallel, parallel_to_aec

from relic_envs.errors import InvalidConfig

MASK_KEY = "action_mask"


@dataclasses.dataclass(frozen=True)
class FlatField:
    """Where one leaf of a ``Dict`` observation lies in the flat vector.

    Attributes
    ----------
    name:
        Dotted path of the leaf in the ``Dict`` (``"my_state.budget_left"``).
    start, stop:
        The leaf's slice of the flat vector, ``vector[start:stop]``.
    shape:
        The leaf's shape in the ``Dict`` observation (``()`` for scalars and ``Discrete``).
    encoding:
        ``"values"`` (a ``Box`` or ``MultiBinary`` in row-major order), ``"one-hot"``
        (a ``Discrete``: ``n`` entries, 1 at ``value - start``) or ``"one-hot per entry"``
        (a ``MultiDiscrete``: one one-hot block per entry, in order).
    """

    name: str
    start: int
    stop: int
    shape: tuple[int, ...]
    encoding: str

    @property
    def slice(self) -> slice:
        return slice(self.start, self.stop)

    @property
    def size(self) -> int:
        return self.stop - self.start


def _leaves(space: spaces.Space, prefix: str) -> list[tuple[str, spaces.Space]]:
    """The leaves of a (nested) space in Gymnasium's flattening order."""
    if isinstance(space, spaces.Dict):
        out = []
        for key, sub in space.spaces.items():
            out += _leaves(sub, f"{prefix}.{key}" if prefix else str(key))
        return out
    if isinstance(space, spaces.Tuple):
        out = []
        for k, sub in enumerate(space.spaces):
            out += _leaves(sub, f"{prefix}.{k}" if prefix else str(k))
        return out
    return [(prefix, space)]


_ENCODING = {
    spaces.Box: ("values", lambda s: s.shape),
    spaces.MultiBinary: ("values", lambda s: tuple(np.atleast_1d(s.n))),
    spaces.Discrete: ("one-hot", lambda s: ()),
    spaces.MultiDiscrete: ("one-hot per entry", lambda s: s.shape),
}


def flat_layout(space: spaces.Space) -> dict[str, FlatField]:
    """Field-by-field layout of ``gymnasium.spaces.flatten`` for ``space``, in vector order.

    >>> from gymnasium import spaces
    >>> s = spaces.Dict({"b": spaces.Box(0, 1, (2, 3)), "a": spaces.Discrete(4)})
    >>> [(f.name, f.start, f.stop, f.encoding) for f in flat_layout(s).values()]
    [('a', 0, 4, 'one-hot'), ('b', 4, 10, 'values')]
    """
    layout: dict[str, FlatField] = {}
    start = 0
    for name, leaf in _leaves(space, ""):
        kind = next((v for k, v in _ENCODING.items() if isinstance(leaf, k)), None)
        if kind is None or not leaf.is_np_flattenable:
            raise TypeError(f"cannot flatten field {name or '<root>'!r}: {leaf} (Box, Discrete, MultiDiscrete, "
                            "MultiBinary, and Dict/Tuple of them, flatten to a fixed size)")
        size = spaces.flatdim(leaf)
        layout[name] = FlatField(name, start, start + size, tuple(int(d) for d in kind[1](leaf)), kind[0])
        start += size
    return layout


class Flattener:
    """Flattens observations of one space into a fixed-size ``Box``, and back.

    Parameters
    ----------
    space:
        The observation space (a ``Dict`` in this suite; any flattenable space works).
    dtype:
        Floating dtype of the flat vector: ``np.float64`` (exact, default) or ``np.float32``.
    bound:
        ``None`` (keep infinite bounds, exact) or a positive number: infinite bounds become
        ``-bound``/``+bound``, zero-width bounds ``[c, c]`` become ``[c, c + 1]``, and values
        are clipped into the flat space's bounds.

    Attributes
    ----------
    space:
        The flat ``Box``.
    layout:
        ``{dotted field name: FlatField}`` in vector order (see :func:`flat_layout`).
    """

    def __init__(self, space: spaces.Space, *, dtype: Any = np.float64, bound: float | None = None):
        dtype = np.dtype(dtype)
        if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise InvalidConfig(f"dtype must be np.float32 or np.float64, got {dtype}")
        if bound is not None:
            if isinstance(bound, bool) or not isinstance(bound, int | float | np.number) or not 0 < bound < np.inf:
                raise InvalidConfig(f"bound must be None or a finite number > 0, got {bound!r}")
        self.source = space
        self.layout = flat_layout(space)
        self.dtype = dtype
        self.bound = None if bound is None else float(bound)
        box = spaces.flatten_space(space)
        low, high = box.low.astype(np.float64), box.high.astype(np.float64)
        if self.bound is not None:
            low = np.where(np.isneginf(low), -self.bound, low)
            high = np.where(np.isposinf(high), self.bound, high)
            high = np.where(high == low, low + 1.0, high)  # a constant field: a linear map must not divide by 0
        self.space = spaces.Box(low.astype(dtype), high.astype(dtype), dtype=dtype)
        self._low, self._high = self.space.low, self.space.high

    @property
    def size(self) -> int:
        return int(self.space.shape[0])

    def flatten(self, observation: Any) -> np.ndarray:
        """The flat vector of one observation (a fresh array of :attr:`space`'s dtype)."""
        vector = np.asarray(spaces.flatten(self.source, observation), dtype=np.float64)
        if self.bound is not None:
            vector = np.clip(vector, self._low, self._high)
        return vector.astype(self.dtype)

    def unflatten(self, vector: Any) -> Any:
        """The observation a flat vector encodes: the inverse of :meth:`flatten`.

        Exact for vectors from :meth:`flatten` with ``float64`` and no ``bound``; with
        ``float32`` or ``bound`` it returns the rounded or clipped values.
        """
        vector = np.asarray(vector)
        if vector.shape != (self.size,):
            raise ValueError(f"vector must have shape ({self.size},), got {vector.shape}")
        if vector.dtype.kind not in "fiub":
            raise TypeError(f"vector must be numeric, got dtype {vector.dtype}")
        return spaces.unflatten(self.source, vector.astype(np.float64))

    def field(self, vector: Any, name: str) -> np.ndarray:
        """The slice of ``vector`` that holds field ``name`` (see :attr:`layout`)."""
        if name not in self.layout:
            raise KeyError(f"no field {name!r}; fields: {list(self.layout)}")
        return np.asarray(vector)[..., self.layout[name].slice]


class FlatObservations(BaseParallelWrapper):
    """A PettingZoo ``ParallelEnv`` whose observations are flat ``Box`` vectors.

    Build it with :func:`flatten_observations`. Actions, rewards, terminations and the
    agents are the wrapped env's; each agent's observation is its :class:`Flattener`'s
    vector, and where the ``Dict`` observation has an ``action_mask`` it is also in
    ``infos[agent]["action_mask"]`` (a copy; ``int8``).
    """

    def __init__(self, env: ParallelEnv, *, dtype: Any = np.float64, bound: float | None = None):
        if not isinstance(env, ParallelEnv):
            raise TypeError(f"env must be a PettingZoo ParallelEnv, got {type(env).__name__}")
        super().__init__(env)
        self.flatteners = {a: Flattener(env.observation_space(a), dtype=dtype, bound=bound) for a in env.possible_agents}

    def observation_space(self, agent: str) -> spaces.Box:
        return self._flattener(agent).space

    def _flattener(self, agent: str) -> Flattener:
        if agent not in self.flatteners:
            raise KeyError(f"unknown agent {agent!r}; agents are {list(self.flatteners)}")
        return self.flatteners[agent]

    def layout(self, agent: str) -> dict[str, FlatField]:
        """``{field name: FlatField}`` of ``agent``'s flat vector, in vector order."""
        return dict(self._flattener(agent).layout)

    def flatten(self, agent: str, observation: Any) -> np.ndarray:
        """``agent``'s flat vector of a ``Dict`` observation of the wrapped env."""
        return self._flattener(agent).flatten(observation)

    def unflatten(self, agent: str, vector: Any) -> Any:
        """The wrapped env's ``Dict`` observation that ``vector`` encodes for ``agent``."""
        return self._flattener(agent).unflatten(vector)

    def _convert(self, observations: Mapping, infos: Mapping) -> tuple[dict, dict]:
        flat, out_infos = {}, {k: v for k, v in infos.items() if k not in observations}
        for agent, obs in observations.items():
            flat[agent] = self.flatten(agent, obs)
            info = dict(infos.get(agent, {}))
            if isinstance(obs, Mapping) and MASK_KEY in obs:
                info[MASK_KEY] = np.array(obs[MASK_KEY], copy=True)
            out_infos[agent] = info
        return flat, out_infos

    def reset(self, seed: int | None = None, options: dict | None = None):
        observations, infos = self.env.reset(seed=seed, options=options)
        return self._convert(observations, infos)

    def step(self, actions: dict[str, Any]):
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        flat, infos = self._convert(observations, infos)
        return flat, rewards, terminations, truncations, infos

    def __str__(self) -> str:
        return f"FlatObservations<{self.env}>"


def flatten_observations(env: ParallelEnv | AECEnv, *, dtype: Any = np.float64, bound: float | None = None):
    """Flat ``Box`` observations for every agent of a PettingZoo env.

    Parameters
    ----------
    env:
        A ``ParallelEnv`` (e.g. ``relic_envs.make("mapp_pc")``) or its AEC form.
    dtype, bound:
        See :class:`Flattener`.

    Returns
    -------
    A :class:`FlatObservations` for a parallel env; for an AEC env, PettingZoo's
    ``parallel_to_aec`` of the flat parallel view (``aec_to_parallel`` of it gives the
    :class:`FlatObservations` back, with ``layout`` and ``unflatten``).
    """
    if isinstance(env, AECEnv):
        return parallel_to_aec(FlatObservations(aec_to_parallel(env), dtype=dtype, bound=bound))
    return FlatObservations(env, dtype=dtype, bound=bound)
