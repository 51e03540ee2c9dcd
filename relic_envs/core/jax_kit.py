"""The JAX side's shared pieces: what every family's batch evaluator and functional env are built from.

- :class:`Batch` and :func:`stack_arrays`: the instances of a batch as one dict of arrays
  with a leading batch axis (a family adds its own per-instance arrays first);
- :func:`one_size`: the size key every instance of a batch shares (a batch has one shape);
- :func:`integer_answer`: the trace-time check of a JAX policy's answer (its shape and an
  integer dtype), the same :class:`~relic_envs.errors.InvalidReturn` reasons in every family;
- :class:`RoleTables`: a JAX problem's per-interface tables of observation getters;
- :func:`benchmark_module`: a family's lookup of its per-benchmark ``jax_eval`` module;
- :func:`check_team` and :func:`batch_runner`: what every ``make_evaluator`` does
  around its family's batch function (check the team, split the batch over the devices,
  compile, run in float64 or float32, hand back numpy arrays).

Needs ``pip install 'relic-envs[jax]'``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np

from relic_envs.core.benchmark import ROLES
from relic_envs.errors import InvalidConfig, InvalidReturn, MissingExtra

try:
    import jax
    import jax.numpy as jnp
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtra("jax", "jax") from exc

from relic_envs.core.jax_devices import over_devices  # noqa: E402  (after the jax check)


class Batch(NamedTuple):
    """Stacked static data of a batch: ``data[k]`` has a leading batch axis."""

    data: dict[str, Any]
    size: int
    shape: Any = None  # the benchmark's size key where it has one (MAPP: N nodes, MAS: N jobs, CO: a tuple)


def one_size(instances: Sequence[Any], size_of: Callable[[Any], Any], what: str = "size") -> Any:
    """The size key all ``instances`` share; :class:`InvalidConfig` for none or several."""
    if len(instances) == 0:
        raise InvalidConfig("instances: need at least one instance to stack, got an empty sequence")
    sizes = sorted({size_of(inst) for inst in instances})
    if len(sizes) != 1:
        raise InvalidConfig(f"instances: a batch needs one {what}; got sizes {sizes} (stack each size apart)")
    return sizes[0]


def stack_arrays(per_instance: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """Each key's arrays stacked on a new leading axis; ``ValueError`` naming a key whose shapes differ."""
    data = {}
    for key in per_instance[0]:
        shapes = {np.shape(a[key]) for a in per_instance}
        if len(shapes) != 1:
            raise ValueError(f"cannot stack field {key!r}: shapes differ across instances {sorted(shapes)}")
        data[key] = np.stack([a[key] for a in per_instance])
    return data


def integer_answer(role: str, value: Any, shape: tuple[int, ...], what: str) -> Any:
    """``value`` (a JAX policy's answer, or an action given to a functional env's ``step``) as
    an array once its shape is ``shape`` and its dtype an integer one, else
    :class:`InvalidReturn` (``"shape"`` or ``"dtype"``). Checked at trace time: under
    ``jit`` an answer has a static shape and dtype."""
    value = jnp.asarray(value)
    if value.shape != shape:
        expected = "a scalar" if shape == () else f"of shape {shape}:"
        raise InvalidReturn("shape", f"role {role}'s answer must be {expected} {what}, got shape {value.shape}")
    if not jnp.issubdtype(value.dtype, jnp.integer):
        raise InvalidReturn("dtype", f"role {role}'s answer must be an integer {what}, got {value.dtype}")
    return value


class RoleTables:
    """A JAX problem's observation getters per interface: ``roles[interface][role][param] = getter``."""

    name: str
    roles: Mapping[str, Mapping[str, Mapping[str, Callable]]]

    def role_table(self, interface: str) -> Mapping[str, Mapping[str, Callable]]:
        if interface not in self.roles:
            raise NotImplementedError(
                f"{self.name}: the JAX evaluator has no {interface!r} interface yet; available: {sorted(self.roles)} "
                "(the numpy env has both: use relic_envs.rollout)"
            )
        return self.roles[interface]


def benchmark_module(modules: Mapping[str, str], name: str, what: str) -> ModuleType:
    """The per-benchmark JAX module ``modules[name]`` of a family (``what``: its evaluators,
    e.g. ``"routing JAX evaluator"``), imported. :class:`NotImplementedError` naming the
    available ones for an unknown ``name``, or naming the module where it is not written yet."""
    if name not in modules:
        raise NotImplementedError(f"no {what} for {name!r}; available: {sorted(modules)}")
    try:
        return importlib.import_module(modules[name])
    except ModuleNotFoundError as exc:
        if not modules[name].startswith(str(exc.name)):
            raise  # a missing dependency inside the module is a real error, not a missing evaluator
        raise NotImplementedError(f"the JAX evaluator of {name!r} ({modules[name]}) is not written yet") from exc


def check_team(policies: Mapping[str, Callable]) -> None:
    """:class:`InvalidConfig` naming the roles a team of JAX policies lacks, before anything is traced."""
    missing = [r for r in ROLES if r not in policies]
    if missing:
        raise InvalidConfig(f"policies: need a JAX policy for every role {list(ROLES)}; missing {missing}")


def batch_runner(batched: Callable[[Any], Any], *, x64: bool,
                 prepare: Callable[[Mapping[str, Any]], Any] | None = None) -> Callable[[Batch], Any]:
    """``run(batch)``: ``batched(batch.data)`` (a whole batch in, every leaf of its result with
    the batch as leading axis) split over the devices (:func:`~relic_envs.core.jax_devices.over_devices`),
    compiled once per batch shape (``jax.jit``), traced and run with 64-bit types iff ``x64``;
    its result as the same pytree of numpy arrays. ``prepare`` (outside the compiled
    function) readies ``batch.data`` first, e.g. casts it to the run's precision.

    ``run.jitted`` is the compiled function of ``batch.data`` (``prepare`` included), with
    ``.lower`` for compile-time and memory measurements (``benchmarks/jax_throughput.py``).
    """
    compiled = jax.jit(over_devices(batched))
    if prepare is None:
        jitted = compiled
    else:
        def jitted(data):
            return compiled(prepare(data))

        jitted.lower = lambda data: compiled.lower(prepare(data))

    def run(batch: Batch) -> Any:
        with jax.enable_x64(x64):
            return jax.tree.map(np.asarray, jitted(batch.data))

    run.jitted = jitted
    return run
