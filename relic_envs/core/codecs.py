"""How a routing observation carries the paper's Python arguments.

A role signature of Appendix B.1 passes ints, floats, arrays, dicts, lists and a
structured graph. An observation must be a fixed-shape gymnasium value, so every
parameter has a :class:`Codec`: its space (what the env exposes), and ``decode`` (what
``to_kwargs`` hands the program, in exactly the paper's Python types). Variable-size
data travels as padded arrays with a mask; ``decode`` turns them back into the dict or
list the paper's programs iterate over.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

INF = np.inf


class Codec:
    """Space and decoder of one parameter, for instances with ``n`` nodes."""

    def space(self, n: int) -> gymnasium.Space:
        raise NotImplementedError

    def decode(self, value: Any) -> Any:
        raise NotImplementedError


class NodeId(Codec):
    """``int``: a node id in 0..n-1 (``Discrete(n)``)."""

    def space(self, n):
        return spaces.Discrete(n)

    def decode(self, value):
        return int(value)


class Real(Codec):
    """``float``: a scalar (0-d float64 ``Box``)."""

    def __init__(self, low: float = -INF):
        self.low = low

    def space(self, n):
        return spaces.Box(self.low, INF, (), np.float64)

    def decode(self, value):
        return float(value)


class NodeVector(Codec):
    """``np.ndarray`` (n,) float64, one entry per node (a fresh copy per call)."""

    def __init__(self, low: float = -INF):
        self.low = low

    def space(self, n):
        return spaces.Box(self.low, INF, (n,), np.float64)

    def decode(self, value):
        return np.array(value, dtype=np.float64)


class Matrix(Codec):
    """``np.ndarray`` (n, n) float64: the distance matrix."""

    def space(self, n):
        return spaces.Box(0.0, INF, (n, n), np.float64)

    def decode(self, value):
        # Not copied: an episode's observe() already hands out a copy, and the sandbox's
        # referee (which reads the episode's read-only matrix) shares it with a worker by identity.
        return np.asarray(value, dtype=np.float64)


class NodeList(Codec):
    """``list[int]`` of fixed length ``k`` (e.g. the two teammates' positions)."""

    def __init__(self, k: int):
        self.k = k

    def space(self, n):
        return spaces.Box(0, n - 1, (self.k,), np.int64)

    def decode(self, value):
        return [int(v) for v in np.asarray(value)]


class SparseDict(Codec):
    """``dict`` ``{node: value}`` or ``{node: (v1, v2, ...)}`` over the masked nodes.

    Encoded as ``{"mask": int8 (n,), "value": float64 (n,) or (n, width)}``; the dict
    holds the nodes whose mask is 1, in ascending id order.
    """

    def __init__(self, width: int = 1, ints: tuple[int, ...] = ()):
        self.width = width
        self.ints = ints  # tuple positions decoded as int (e.g. a time-to-live)

    def space(self, n):
        shape = (n,) if self.width == 1 else (n, self.width)
        return spaces.Dict({"mask": spaces.Box(0, 1, (n,), np.int8), "value": spaces.Box(-INF, INF, shape, np.float64)})

    def decode(self, value):
        keys = np.flatnonzero(np.asarray(value["mask"]))
        vals = np.asarray(value["value"])[keys]
        if self.width == 1:
            return dict(zip(keys.tolist(), vals.tolist()))
        return dict(zip(keys.tolist(), _rows(vals, self.ints)))


class Graph(Codec):
    """``dict`` ``{"dist_mat": (n, n) array, "nodes": [(node_id, x, y, *attrs), ...]}``.

    ``nodes`` lists every node, depot first, as the case-study program of Appendix
    B.1 unpacks it (``for (node_id, _x, _y, unc) in graph["nodes"]``); ``node_id`` is
    an ``int``, the rest floats (ints at the positions in ``ints``).
    """

    def __init__(self, attrs: int, ints: tuple[int, ...] = ()):
        self.width = 3 + attrs
        self.ints = (0, *ints)

    def space(self, n):
        return spaces.Dict(
            {"dist_mat": spaces.Box(0.0, INF, (n, n), np.float64), "nodes": spaces.Box(-INF, INF, (n, self.width), np.float64)}
        )

    def decode(self, value):
        rows = np.asarray(value["nodes"])
        return {"dist_mat": np.asarray(value["dist_mat"], dtype=np.float64), "nodes": _rows(rows, self.ints)}  # as Matrix


class AgentState(Codec):
    """``dict`` ``{"current": int, "visited": list[int], "budget_left": float}`` of one agent.

    ``visited`` is the ascending list of non-depot nodes the agent has visited.
    """

    def space(self, n):
        return spaces.Dict(
            {
                "current": spaces.Discrete(n),
                "visited": spaces.Box(0, 1, (n,), np.int8),
                "budget_left": spaces.Box(0.0, INF, (), np.float64),
            }
        )

    def decode(self, value):
        return {
            "current": int(value["current"]),
            "visited": [int(i) for i in np.flatnonzero(np.asarray(value["visited"]))],
            "budget_left": float(value["budget_left"]),
        }


class Table(Codec):
    """``np.ndarray`` (n, width) float64: one row of named columns per node."""

    def __init__(self, width: int):
        self.width = width

    def space(self, n):
        return spaces.Box(-INF, INF, (n, self.width), np.float64)

    def decode(self, value):
        return np.array(value, dtype=np.float64)


class Record(Codec):
    """``dict`` of named fields, each with its own codec; fixed-length float lists as ``FloatList``."""

    def __init__(self, fields: dict[str, Codec]):
        self.fields = fields

    def space(self, n):
        return spaces.Dict({k: c.space(n) for k, c in self.fields.items()})

    def decode(self, value):
        return {k: c.decode(value[k]) for k, c in self.fields.items()}


class FloatList(Codec):
    """``list[float]`` of fixed length ``k`` (one entry per agent)."""

    def __init__(self, k: int):
        self.k = k

    def space(self, n):
        return spaces.Box(-INF, INF, (self.k,), np.float64)

    def decode(self, value):
        return [float(v) for v in np.asarray(value)]


def _rows(values: np.ndarray, ints: tuple[int, ...]) -> list[tuple]:
    """One tuple per row: Python ints at the positions in ``ints``, floats elsewhere.

    ``tolist`` converts the whole float64 table in one C loop (exactly ``float(v)`` of
    each entry); converting entry by entry was the largest cost of a MAPP observation.
    """
    rows = np.asarray(values, dtype=np.float64).tolist()
    if ints:
        for row in rows:
            for k in ints:
                row[k] = int(row[k])
    return [tuple(row) for row in rows]


@dataclasses.dataclass(frozen=True)
class ParamSpec:
    """One parameter of a routing role: the paper's name and type, its doc, codec and getter.

    ``get(view)`` returns the encoded value (what the observation holds) from a
    :class:`~relic_envs.mapp._routing.View`.
    """

    name: str
    annotation: str
    doc: str
    codec: Codec
    get: Callable[[Any], Any]


@dataclasses.dataclass(frozen=True)
class RoleSpec:
    """One role function: name, purpose and parameters in the paper's order."""

    function: str
    purpose: str
    params: tuple[ParamSpec, ...]
