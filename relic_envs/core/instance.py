"""Instances: frozen dataclasses of numpy arrays and scalars, stored as ``.npz``.

An instance is pure data. Every exogenous random draw a rollout needs is either a
field or derived deterministically from a field (the DCOP exploration tensor ``u``
comes from the instance's ``seed``), so the same instance always replays the same way.
"""

from __future__ import annotations

import dataclasses
import io
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np

from relic_envs.errors import InvalidInstance

T = TypeVar("T", bound="Instance")

# Instance classes by their ``kind`` tag, so ``load`` can rebuild the right class.
_KINDS: dict[str, type[Instance]] = {}


@dataclasses.dataclass(frozen=True)
class Instance:
    """Base class of every benchmark instance.

    Subclasses declare their fields with shape and dtype in a trailing comment, set
    ``kind`` to a unique tag, and implement ``validate`` to raise
    :class:`~relic_envs.errors.InvalidInstance` naming the bad field.
    """

    kind: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.kind:
            _KINDS[cls.kind] = cls

    def __post_init__(self) -> None:
        # Arrays are made read-only so a policy or simulator cannot edit an instance.
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
        self.validate()

    def validate(self) -> None:
        """Raise ``InvalidInstance`` if a field has the wrong shape, dtype or range."""

    def arrays(self) -> dict[str, Any]:
        """The fields as a plain dict (arrays and scalars)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def save(self, path: str | Path) -> None:
        """Write the instance to an ``.npz`` file."""
        save_instances([self], path)

    @classmethod
    def load(cls: type[T], path: str | Path) -> T:
        """Read one instance written by :meth:`save`."""
        (inst,) = load_instances(path)
        if not isinstance(inst, cls):
            raise InvalidInstance(f"{path} holds a {type(inst).__name__}, not a {cls.__name__}")
        return inst


def check_array(name: str, value: Any, shape: tuple[int | None, ...], kinds: str) -> None:
    """Raise ``InvalidInstance`` unless ``value`` is an array of that shape and dtype kind.

    ``None`` in ``shape`` matches any length; ``kinds`` is a string of numpy dtype
    kinds (``"iu"`` for integers, ``"f"`` for floats, ``"b"`` for booleans).
    """
    if not isinstance(value, np.ndarray):
        raise InvalidInstance(f"field {name!r} must be a numpy array, got {type(value).__name__}")
    if value.ndim != len(shape) or any(s is not None and s != v for s, v in zip(shape, value.shape)):
        raise InvalidInstance(f"field {name!r} must have shape {shape}, got {value.shape}")
    if value.dtype.kind not in kinds:
        raise InvalidInstance(f"field {name!r} must have dtype kind in {kinds!r}, got {value.dtype}")
    if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
        raise InvalidInstance(f"field {name!r} has non-finite entries")


def check_range(name: str, value: np.ndarray, low: float, high: float) -> None:
    """Raise ``InvalidInstance`` unless every entry lies in ``[low, high]``."""
    if value.size and (value.min() < low or value.max() > high):
        raise InvalidInstance(
            f"field {name!r} must lie in [{low}, {high}], got [{value.min()}, {value.max()}]"
        )


def save_instances(instances: Sequence[Instance], path: str | Path) -> None:
    """Write same-kind instances to one ``.npz`` (fields stacked on a leading axis).

    Instances of one file must share the shape of every field; the bytes written are
    deterministic, so a file's sha256 pins its content.
    """
    if not instances:
        raise InvalidInstance("save_instances needs at least one instance")
    kinds = {type(i).kind for i in instances}
    if len(kinds) != 1:
        raise InvalidInstance(f"one file holds one kind of instance, got {sorted(kinds)}")
    stacked = stack(instances)
    payload = {name: np.asarray(v) for name, v in stacked.items()}
    payload["__kind__"] = np.array(instances[0].kind)
    Path(path).write_bytes(_npz_bytes(payload))


def _npz_bytes(payload: dict[str, np.ndarray]) -> bytes:
    """An ``.npz`` archive with fixed timestamps, so equal data gives equal bytes.

    ``np.savez`` stamps each entry with the current time, which would make the sha256
    of a canonical split change on every regeneration.
    """
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(payload):
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            array_bytes = io.BytesIO()
            np.lib.format.write_array(array_bytes, np.require(payload[name], requirements="C"), allow_pickle=False)
            archive.writestr(info, array_bytes.getvalue())
    return buffer.getvalue()


def load_instances(path: str | Path) -> list[Instance]:
    """Read instances written by :func:`save_instances`."""
    with np.load(path, allow_pickle=False) as data:
        kind = str(data["__kind__"])
        if kind not in _KINDS:
            raise InvalidInstance(f"{path}: unknown instance kind {kind!r}")
        cls = _KINDS[kind]
        fields = {f.name: data[f.name] for f in dataclasses.fields(cls)}
    count = len(next(iter(fields.values())))
    out = []
    for k in range(count):
        values = {}
        for name, arr in fields.items():
            item = arr[k]
            values[name] = item.item() if item.ndim == 0 else np.array(item)
        out.append(cls(**values))
    return out


def stack(instances: Sequence[Instance]) -> dict[str, np.ndarray]:
    """Stack same-size instances field by field into a batch (leading axis = instance)."""
    first = instances[0]
    out = {}
    for f in dataclasses.fields(first):
        values = [getattr(i, f.name) for i in instances]
        shapes = {np.shape(v) for v in values}
        if len(shapes) != 1:
            raise InvalidInstance(f"cannot stack field {f.name!r}: shapes differ {sorted(shapes)}")
        out[f.name] = np.stack([np.asarray(v) for v in values])
    return out
