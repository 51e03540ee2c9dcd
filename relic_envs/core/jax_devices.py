"""Batch evaluators over every local XLA device: each device runs the whole compiled
program on its share of the instances.

On a CPU, JAX makes one device by default, and XLA runs a program's operations one
after another with a pool of threads inside some of them; a scatter, a gather or a
small loop body then keeps one core busy. Split into several host devices, the CPU runs
one copy of the program per device at the same time::

    import jax
    jax.config.update("jax_num_cpu_devices", 2)  # before JAX first touches the CPU
    # or: XLA_FLAGS=--xla_force_host_platform_device_count=2 in the environment

The evaluators of every family (``relic_envs.*.jax_eval.evaluator``) wrap their batch
function in :func:`over_devices`, so nothing else changes for a user: on one device (the
default, and one GPU) it is the plain function. ``benchmarks/RESULTS.md`` has the
figures (DGC with DSA-B, 2 cores: 1.17 -> 0.78 ms per sweep at batch 1024).

Each device's share is explicit (:func:`jax.shard_map`), not left to XLA's automatic
partitioning: a batch flattened into one scatter (DGC's landscape) has indices the
partitioner cannot prove local, and it ran the whole scatter on every device.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from relic_envs.errors import MissingExtra

try:
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtra("jax", "jax") from exc


def batch_devices(size: int) -> list:
    """The devices a batch of ``size`` instances is split over: the first ``k`` local
    devices, with ``k`` the largest number of them that divides the batch evenly (1 on
    one device)."""
    devices = jax.devices()
    k = max(k for k in range(1, len(devices) + 1) if size % k == 0)
    return devices[:k]


def over_devices(batched: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``batched(data)`` (every leaf of ``data`` and of its result has the batch as its
    leading axis) with the batch split evenly over :func:`batch_devices`.

    With one device (the default, and a single GPU) the function runs as it is. Each
    instance's result is the same either way: each device runs the same per-instance
    code. Use inside ``jax.jit``; a batch already placed with :func:`batch_sharding`
    is not moved.
    """

    def run(data):
        sharding = batch_sharding(jax.tree.leaves(data)[0].shape[0])
        if sharding.mesh.size < 2:
            return batched(data)
        # check_vma=False: the per-device programs carry loop state (scan, while_loop)
        # that starts from constants, which shard_map's type check would ask to cast.
        return jax.shard_map(batched, mesh=sharding.mesh, in_specs=sharding.spec, out_specs=sharding.spec,
                             check_vma=False)(data)

    return run


def batch_sharding(size: int) -> NamedSharding:
    """Where to place a batch of ``size`` instances (``jax.device_put(data,
    batch_sharding(size))``) so that :func:`over_devices` finds each share on its device."""
    return NamedSharding(Mesh(np.array(batch_devices(size)), ("batch",)), PartitionSpec("batch"))
