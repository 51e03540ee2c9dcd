"""Evaluation batches: the stream's batches and the fixed mixed batch of Eq. 3.

A :class:`Batch` is an ordered tuple of instances with a content digest (the key of
evaluation caches) and the provenance of each instance (which training batch and
position it came from), which Reflect's summary uses.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from functools import cached_property

import numpy as np

from relic_envs.core.instance import Instance

REPLAY_HORIZON = 2  # Appendix D: samples come only from the two preceding batches
REPLAY_PER_BATCH = 3  # Appendix C.1: at most three instances from each replayed batch


@dataclasses.dataclass(frozen=True)
class Batch:
    """Instances evaluated together, with where each came from.

    ``provenance[k] = (b, i)``: instance ``k`` is instance ``i`` of stream batch ``b``
    (1-based ``b``; ``0`` for instances that are not from the stream).
    """

    instances: tuple[Instance, ...]
    provenance: tuple[tuple[int, int], ...] = ()
    label: str = ""

    def __post_init__(self) -> None:
        if not self.instances:
            raise ValueError("a Batch needs at least one instance")
        if not self.provenance:
            object.__setattr__(self, "provenance", tuple((0, i) for i in range(len(self.instances))))
        if len(self.provenance) != len(self.instances):
            raise ValueError(f"provenance has {len(self.provenance)} entries for {len(self.instances)} instances")

    def __len__(self) -> int:
        return len(self.instances)

    @cached_property
    def digest(self) -> str:
        """sha256 of the instances' canonical bytes, in order."""
        h = hashlib.sha256()
        for instance in self.instances:
            h.update(_instance_digest(instance).encode())
        return h.hexdigest()


def _instance_digest(instance: Instance) -> str:
    cached = getattr(instance, "_relic_digest", None)
    if cached is None:
        h = hashlib.sha256(type(instance).kind.encode())
        for name, value in sorted(instance.arrays().items()):
            array = np.ascontiguousarray(value)
            h.update(f"{name}:{array.dtype.str}:{array.shape}".encode())
            h.update(array.tobytes())
        cached = h.hexdigest()
        object.__setattr__(instance, "_relic_digest", cached)  # frozen dataclass; a pure cache
    return cached


def stream_batch(stream: Sequence[Sequence[Instance]], b: int) -> Batch:
    """Batch ``b`` (1-based) of a stream of training batches."""
    _check_index(stream, b)
    return Batch(tuple(stream[b - 1]), tuple((b, i) for i in range(len(stream[b - 1]))), f"batch {b}")


def mixed_batch(
    stream: Sequence[Sequence[Instance]],
    b: int,
    seed: int,
    *,
    horizon: int = REPLAY_HORIZON,
    per_batch: int = REPLAY_PER_BATCH,
) -> Batch:
    """The fixed mixed batch of Eq. 3: batch ``b`` plus replay samples.

    From each of the ``horizon`` preceding batches (those that exist), at most
    ``per_batch`` instances are drawn without replacement. The draw depends only on
    ``(seed, b, t)``, so every comparison within batch ``b`` sees the same set and a
    resumed run draws it again identically.

    >>> stream = [["a1", "a2", "a3", "a4"], ["b1", "b2", "b3", "b4"], ["c1", "c2"]]
    >>> batch = mixed_batch(stream, 3, seed=0)
    >>> [p for p in batch.provenance if p[0] == 3]
    [(3, 0), (3, 1)]
    >>> sorted({p[0] for p in batch.provenance})
    [1, 2, 3]
    """
    _check_index(stream, b)
    if horizon < 0 or per_batch < 0:
        raise ValueError(f"horizon and per_batch must be >= 0, got {horizon} and {per_batch}")
    current = stream_batch(stream, b)
    instances, provenance = list(current.instances), list(current.provenance)
    for t in range(max(1, b - horizon), b):
        rng = np.random.default_rng([int(seed), b, t])
        size = len(stream[t - 1])
        for i in sorted(rng.choice(size, size=min(per_batch, size), replace=False).tolist()):
            instances.append(stream[t - 1][i])
            provenance.append((t, i))
    return Batch(tuple(instances), tuple(provenance), f"mixed batch {b}")


def _check_index(stream: Sequence[Sequence[Instance]], b: int) -> None:
    if not isinstance(b, int) or not 1 <= b <= len(stream):
        raise ValueError(f"batch index must be an int in 1..{len(stream)}, got {b!r}")
