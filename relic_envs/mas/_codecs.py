"""Codecs the scheduling roles add to the routing family's (``relic_envs.core.codecs``).

The size ``n`` a codec's space takes is the number of jobs (tasks) of the instance.
Pools are encoded as a job mask plus per-job values (``SparseDict`` from
``relic_envs.core.codecs``); the codecs here decode the same encoding into the dense
arrays role C receives, fixed-length vectors and per-agent records.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from relic_envs.core.codecs import INF, Codec, Record


class Vector(Codec):
    """``np.ndarray`` (k,) float64 of fixed length (e.g. one entry per machine)."""

    def __init__(self, k: int, low: float = -INF, high: float = INF):
        self.k, self.low, self.high = k, low, high

    def space(self, n):
        return spaces.Box(self.low, self.high, (self.k,), np.float64)

    def decode(self, value):
        return np.array(value, dtype=np.float64)


class SquareMatrix(Codec):
    """``np.ndarray`` (k, k) float64 (the skill matrix)."""

    def __init__(self, k: int, low: float = -INF, high: float = INF):
        self.k, self.low, self.high = k, low, high

    def space(self, n):
        return spaces.Box(self.low, self.high, (self.k, self.k), np.float64)

    def decode(self, value):
        return np.array(value, dtype=np.float64)


class PoolIds(Codec):
    """``np.ndarray`` (m,) int64: the ids whose mask entry is 1, ascending.

    Encoded as the ``(n,)`` int8 mask itself.
    """

    def space(self, n):
        return spaces.Box(0, 1, (n,), np.int8)

    def decode(self, value):
        return np.flatnonzero(np.asarray(value)).astype(np.int64)


class PoolRows(Codec):
    """``np.ndarray`` (m, width) float64: the rows of the masked ids, in id order.

    Encoded as ``{"mask": int8 (n,), "value": float64 (n, width)}`` (padding rows are 0).
    """

    def __init__(self, width: int):
        self.width = width

    def space(self, n):
        return spaces.Dict({"mask": spaces.Box(0, 1, (n,), np.int8), "value": spaces.Box(-INF, INF, (n, self.width), np.float64)})

    def decode(self, value):
        rows = np.asarray(value["value"], dtype=np.float64)
        return np.array(rows[np.asarray(value["mask"]).astype(bool)], dtype=np.float64).reshape(-1, self.width)


class Count(Codec):
    """``int`` in 0..n (a number of jobs)."""

    def space(self, n):
        return spaces.Discrete(n + 1)

    def decode(self, value):
        return int(value)


class Scalar(Codec):
    """``float`` in ``[low, high]`` (0-d float64 ``Box``); ``Real`` of ``relic_envs.core.codecs`` has no upper bound."""

    def __init__(self, low: float = -INF, high: float = INF):
        self.low, self.high = low, high

    def space(self, n):
        return spaces.Box(self.low, self.high, (), np.float64)

    def decode(self, value):
        return float(value)


class RecordList(Codec):
    """``list[dict]`` of ``k`` records with the same fields, each field stacked on a leading axis.

    ``fields`` maps a field name to the codec of one record's value; the encoding holds
    that value's array with a leading ``k`` axis.
    """

    def __init__(self, k: int, fields: dict[str, Codec]):
        self.k, self.record = k, Record(fields)

    def space(self, n):
        out = {}
        for name, codec in self.record.fields.items():
            one = codec.space(n)
            out[name] = spaces.Box(one.low.min(), one.high.max(), (self.k, *one.shape), np.float64)
        return spaces.Dict(out)

    def decode(self, value):
        return [self.record.decode({f: value[f][i] for f in self.record.fields}) for i in range(self.k)]
