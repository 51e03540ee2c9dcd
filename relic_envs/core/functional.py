"""Functional JAX environments: ``reset`` and ``step`` as pure functions (the gymnax habit).

A :class:`FunctionalEnv` is the JAX counterpart of :class:`~relic_envs.core.env.RelicParallelEnv`
for one benchmark and interface. Everything it does is a pure function of its arguments,
so a user can ``jit`` it, ``vmap`` it over a batch of instances and put it inside their own
training loop::

    import jax, relic_envs
    from relic_envs.core.functional import make

    fenv = make("dgc")
    instances = relic_envs.splits("dgc").test_instances()   # any same-size instances
    params = fenv.params(instances)                          # leading axis = instance
    keys = jax.random.split(jax.random.key(0), len(instances))
    obs, state = jax.vmap(fenv.reset)(keys, params)
    actions = {r: ... for r in fenv.roles}                   # one array per role, batched
    obs, state, reward, done, info = jax.jit(jax.vmap(fenv.step))(keys, state, actions, params)

Contract (every family implements it the same way)
--------------------------------------------------
``params(instances)``
    Same-size numpy instances -> a pytree of arrays with a leading batch axis. An
    instance is *params*, not state: a batch of instances is a ``vmap`` axis.
``reset(key, params) -> (obs, state)``
    ONE instance (``vmap`` for a batch). ``obs`` is ``{role: observation}`` with exactly
    the keys, nesting, shapes and values of the PettingZoo env's observation for that
    role (fixed shapes; where the numpy env pads, e.g. ``{"mask", "value"}`` pairs, the
    padding is the same); Python scalars become 0-d arrays.
``step(key, state, actions, params) -> (obs, state, reward, done, info)``
    ``actions`` is ``{role: array}`` shaped like the role's action space (a 0-d int for
    ``Discrete``, a vector for ``MultiDiscrete``); the actions of roles that do not act
    at this step are ignored, as in the numpy env. ``reward`` is the team's shared
    reward (a scalar: the PettingZoo env gives every agent this same value), ``done``
    a scalar bool, ``info`` a dict of fixed-shape arrays that always holds
    ``"invalid"`` (number of refused actions at this step) and ``"score"`` (the team
    score so far).
Invalid actions
    A jitted step cannot raise, so the functional env follows the numpy env's
    ``on_invalid="penalize"`` mode exactly: a refused action becomes ``WAIT`` and costs
    ``hi - lo + 1`` (``Benchmark.score_bounds``). Step-by-step parity is tested against
    the numpy env in that mode.
After ``done``
    ``step`` is the identity on the state with reward 0 and ``done`` true, so a batch of
    episodes of different lengths can run in one fixed-length ``scan``. There is no
    automatic reset: call ``reset`` with the next params.
``key``
    Every benchmark of the suite is deterministic given its instance (randomness lives
    in the generator and, for the DCOPs, in the instance's exploration seed), so ``key``
    is accepted for the gymnax signature and unused.
Precision
    Parity with the numpy env is exact under ``jax.enable_x64(True)``; in float32 the
    dynamics are the same but ties and sums may round differently.
"""

from __future__ import annotations

import abc
import importlib
from collections.abc import Mapping, Sequence
from typing import Any

from relic_envs.core.instance import Instance
from relic_envs.errors import InvalidConfig, MissingExtra

#: benchmark name -> module that defines ``make_functional(name, interface)``.
_FAMILY_MODULES = {
    **dict.fromkeys(("dgc", "dimes", "sensor_dcsp", "shds"), "relic_envs.dcop.functional"),
    **dict.fromkeys(("mapp_pc", "mapp_ar", "mapp_ds"), "relic_envs.mapp.functional"),
    **dict.fromkeys(("mas_jd", "mas_st", "mas_fs"), "relic_envs.mas.functional"),
    **dict.fromkeys(("hmtsp", "fstsp", "fjagv", "mrcps"), "relic_envs.co.functional"),
}


class FunctionalEnv(abc.ABC):
    """One benchmark and interface as pure JAX functions (see the module docs for the contract)."""

    name: str
    interface: str
    roles: tuple[str, ...]

    @abc.abstractmethod
    def params(self, instances: Sequence[Instance]) -> Any:
        """Stack same-size instances into a pytree of arrays with a leading batch axis."""

    @abc.abstractmethod
    def reset(self, key: Any, params: Any) -> tuple[dict[str, Any], Any]:
        """``(obs, state)`` at the start of the episode of ONE instance's ``params``."""

    @abc.abstractmethod
    def step(self, key: Any, state: Any, actions: dict[str, Any], params: Any) -> tuple[Any, Any, Any, Any, dict]:
        """``(obs, state, reward, done, info)`` after one joint step (see the module docs)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} ({self.interface})>"

    # -- what every family's env does the same way ------------------------------------
    def _bind(self, name: str, interface: str) -> None:
        """Set ``benchmark``, ``name``, ``interface``, ``roles`` and each role's observation leaf dtypes."""
        import numpy as np

        from relic_envs.core.benchmark import ROLES
        from relic_envs.core.registry import get_benchmark

        self.benchmark = get_benchmark(name)
        self.benchmark.check_interface(interface)
        self.name, self.interface, self.roles = name, interface, tuple(ROLES)
        # Leaf dtypes do not depend on the instance size: read them from any instance's spaces.
        reference = self.benchmark.generate(next(iter(self.benchmark.regimes())), np.random.default_rng(0))
        self._dtypes = {r: leaf_dtypes(self.benchmark.observation_space(r, reference, interface)) for r in ROLES}

    def _joint(self, actions: Any) -> dict[str, Any]:
        """``actions`` checked at trace time: a dict with exactly one action per role.

        A missing or unknown role is a structural mistake in the caller's code, not a
        refusable move, so it raises (once, while tracing) with the roles named.
        """
        from relic_envs.errors import InvalidAction

        if not isinstance(actions, Mapping):
            raise InvalidAction(None, "type", f"step() takes a dict {{role: action}} for roles {list(self.roles)}", actions)
        missing = [r for r in self.roles if r not in actions]
        extra = [r for r in actions if r not in self.roles]
        if missing or extra:
            what = "; ".join(
                part for part in (missing and f"missing {missing}", extra and f"unknown {extra}") if part
            )
            raise InvalidAction(None, "agent", f"step() needs one action per role {list(self.roles)}: {what}", list(actions))
        return dict(actions)

    def _penalties(self, instances: Sequence[Instance]):
        """Check the instances; ``(B,)`` the penalty of a refused action, ``hi - lo + 1``, per instance."""
        import numpy as np

        for instance in instances:
            self.benchmark.check_instance(instance, self.interface)
        return np.array([hi - lo + 1.0 for lo, hi in map(self.benchmark.score_bounds, instances)])

    @staticmethod
    def _close_step(live, moved: Any, state: Any, reward, refused) -> tuple[Any, Any, dict]:
        """``(state, reward, info)`` of a step: after ``done`` the identity with reward 0 and no refusal.

        ``moved`` and ``state`` are the env's state tuples (with a ``score`` field) after and
        before the step; ``live`` says whether the episode was still running.
        """
        import jax
        import jax.numpy as jnp

        new = jax.tree.map(lambda a, b: jnp.where(live, a, b), moved, state)
        info = {"invalid": jnp.where(live, refused, 0), "score": new.score}
        return new, jnp.where(live, reward, 0.0), info


def leaf_dtypes(space) -> Any:
    """The numpy dtype of every leaf of a (nested) ``gymnasium.spaces.Dict``, as the same nesting of dicts.

    Observation dtypes do not depend on the instance size, so a functional env reads them
    once from any instance's spaces and casts its observations with :func:`cast_leaves`.
    """
    sub = getattr(space, "spaces", None)
    if isinstance(sub, dict):
        return {k: leaf_dtypes(v) for k, v in sub.items()}
    return space.dtype


def cast_leaves(obs: Any, dtypes: Any) -> Any:
    """``obs`` with every leaf a JAX array of the dtype :func:`leaf_dtypes` gives for it (its 32-bit
    counterpart unless ``jax.enable_x64``)."""
    import jax
    import jax.numpy as jnp

    if isinstance(dtypes, dict):
        return {k: cast_leaves(obs[k], d) for k, d in dtypes.items()}
    # Without x64, JAX keeps 32-bit types: ask for those directly instead of a 64-bit
    # type it would truncate with a warning.
    return jnp.asarray(obs).astype(jax.dtypes.canonicalize_dtype(dtypes))


def make(name: str, interface: str = "paper") -> FunctionalEnv:
    """The functional env of benchmark ``name`` (needs the ``jax`` extra)."""
    if name not in _FAMILY_MODULES:
        raise InvalidConfig(f"unknown benchmark {name!r}; known: {sorted(_FAMILY_MODULES)}")
    try:
        module = importlib.import_module(_FAMILY_MODULES[name])
    except ModuleNotFoundError as exc:
        if exc.name in ("jax", "jaxlib"):
            raise MissingExtra("jax", "jax") from exc
        raise
    return module.make_functional(name, interface)


def assert_parity(
    fenv: FunctionalEnv, instance: Instance, rng, *, invalid_rate: float = 0.1, max_steps: int | None = None,
    float_tol: float = 0.0, reward_tol: float | None = None,
) -> int:
    """Play one episode of ``instance`` in the numpy env and in ``fenv`` side by side; raise on any difference.

    Actions are drawn from the numpy env's action spaces: from the action mask (when the
    observation has one) with probability ``1 - invalid_rate``, uniformly from the whole
    space otherwise; a ``MultiDiscrete`` sample gets one value just outside its domain
    with probability ``invalid_rate``. So refused actions and their penalties are
    exercised too. The numpy
    env runs with ``on_invalid="penalize"``. Every step compares every observation leaf
    (exact equality, as float64 under ``jax.enable_x64``), the shared reward, ``done`` and
    ``info["invalid"]``. Integer leaves must be equal; float leaves and rewards equal too,
    or within ``float_tol * (1 + |numpy value|)`` where a benchmark's costs are float sums
    that XLA adds in another order than numpy (the last bits differ; the actions taken
    from them, and so the episode, do not); rewards within ``reward_tol`` (default
    ``float_tol``) by the same rule. Returns the number of steps played.
    """
    import jax
    import numpy as np

    from relic_envs.core.env import RelicParallelEnv
    from relic_envs.core.registry import get_benchmark

    env = RelicParallelEnv(get_benchmark(fenv.name), instances=[instance], interface=fenv.interface,
                           on_invalid="penalize")
    params = jax.tree.map(lambda leaf: leaf[0], fenv.params([instance]))
    key = jax.random.key(0)
    obs_np, _ = env.reset(seed=0)
    obs_j, state = fenv.reset(key, params)
    _assert_obs_equal(obs_np, obs_j, step=0, tol=float_tol)
    step_fn = jax.jit(fenv.step)
    limit = max_steps if max_steps is not None else env.benchmark.max_steps(instance) + 1
    for t in range(1, limit + 1):
        actions = {r: _draw_action(env.action_space(r), obs_np[r], rng, invalid_rate) for r in env.agents}
        obs_np, rewards, terms, truncs, infos = env.step(actions)
        obs_j, state, reward, done, info = step_fn(key, state, {r: np.asarray(a) for r, a in actions.items()}, params)
        _assert_obs_equal(obs_np, obs_j, step=t, tol=float_tol)
        role = next(iter(rewards))
        if not _close(float(reward), rewards[role], float_tol if reward_tol is None else reward_tol):
            raise AssertionError(f"step {t}: reward {float(reward)!r} != numpy {rewards[role]!r}")
        if bool(done) != (terms[role] or truncs[role]):
            raise AssertionError(f"step {t}: done {bool(done)} != numpy {terms[role] or truncs[role]}")
        refused = len(infos[role].get("invalid_actions", ()))
        if int(info["invalid"]) != refused:
            raise AssertionError(f"step {t}: {int(info['invalid'])} refused actions != numpy {refused}")
        if not env.agents:
            return t
    raise AssertionError(f"the numpy episode did not end within {limit} steps")


def _draw_action(space, obs, rng, invalid_rate: float):
    import numpy as np

    mask = obs.get("action_mask") if isinstance(obs, dict) else None
    if mask is not None and rng.random() >= invalid_rate and np.any(mask):
        return int(rng.choice(np.flatnonzero(mask)))
    sample = space.sample()
    nvec = getattr(space, "nvec", None)
    if nvec is not None and sample.size and rng.random() < invalid_rate:
        sample = sample.copy()  # a value one past the domain: refused, so penalties are exercised too
        k = int(rng.integers(sample.size))
        sample.flat[k] = int(np.asarray(nvec).flat[k])
    return sample


def _close(a, b, tol: float) -> bool:
    import numpy as np

    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if tol == 0 or not np.issubdtype(b.dtype, np.floating):
        return bool(np.array_equal(a, b))
    return bool(np.all(np.abs(a.astype(np.float64) - b) <= tol * (1 + np.abs(b))))


def _assert_obs_equal(expected, got, *, step: int, tol: float = 0.0, path: str = "") -> None:
    import numpy as np

    if isinstance(expected, dict):
        if not isinstance(got, dict) or set(expected) != set(got):
            keys = sorted(got) if isinstance(got, dict) else type(got).__name__
            raise AssertionError(f"step {step}: {path or 'obs'} keys {sorted(expected)} != {keys}")
        for k in expected:
            _assert_obs_equal(expected[k], got[k], step=step, tol=tol, path=f"{path}/{k}")
        return
    a, b = np.asarray(expected), np.asarray(got)
    if not _close(b, a, tol):
        raise AssertionError(f"step {step}: {path} differs: numpy {a!r} vs functional {b!r}")
