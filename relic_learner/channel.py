"""The one channel between trusted code and a role worker: its messages and their checks.

A role worker runs untrusted program text and must be assumed to run arbitrary native
code (docs/learner.md, "Threat model"). Whatever it sends is therefore data from an
adversary: the referee (trusted) reads it with :func:`decode_reply`, which accepts one
message shape only, bounded in size and made of numbers, booleans, short strings and
containers of them. Anything else is the role's ``protocol`` failure. Nothing a worker
sends is unpickled or executed, and nothing it sends is a score: the score is computed
by the referee's simulator from these actions.

Trusted -> worker messages are pickles (the worker trusts the referee; what a worker
does with them cannot reach back).

An action crosses as tagged JSON, so types survive exactly (the simulator's return
contract tells ``int`` from ``float``, arrays from lists, and names the difference):

======================  =============================================
value                   wire form
======================  =============================================
``None``, bool, int,    itself (an int within int64)
float (NaN, inf too)
list / tuple            ``["l", [...]]`` / ``["t", [...]]``
dict (int64 keys)       ``["d", [[key, value], ...]]``
numpy array             ``["a", dtype, shape, flat values]``
numpy scalar            ``["g", dtype, value]``
======================  =============================================

Only numeric and boolean numpy dtypes travel (no object, string, void or datetime).
Actions are numbers (every role returns an int or an array), so that is the whole layout:
no strings, and dict keys are int64 only (issue 54: keys that all hash alike made a 1.8 MB
reply cost the referee 25.8 s of CPU; an int64 collides with at most four others). A
program that returns anything else gets its role's ``type`` failure from its own worker.

What a reply may cost the referee is bounded before it is parsed: at most
:data:`MAX_REPLY_BYTES`, and at most :data:`MAX_REPLY_VALUES` JSON values, counted as
commas and brackets (:func:`wire_values`, an upper bound, in C), so no reply builds more
than about 64 bytes of Python objects per value (16 MiB of nested empty lists once took
the referee from 48 to 498 MB) and parsing stays linear in its bytes.
"""

from __future__ import annotations

import json
import math
import os
import re
import select
import time
from typing import Any

import numpy as np

MAX_REPLY_BYTES = 4 * 2**20  # a batch of actions (a DCOP sweep of 50 instances is ~100 KB); more is a protocol failure
MAX_REPLY_VALUES = 2**19  # JSON values in one reply (wire_values); also the most one action may hold
MAX_ITEMS = MAX_REPLY_VALUES  # values in one action
_INT64 = (-(2**63), 2**63 - 1)
MAX_DEPTH = 8  # nesting of one action
MAX_DETAIL_CHARS = 2000
# What a worker may say went wrong with a call. Its word only ever costs its own role.
WORKER_REASONS = frozenset({"exception", "timeout", "memory", "forbidden", "mutation", "type", "syntax", "signature"})
_DTYPE = re.compile(r"[<>|=]?(?:b1|[iu][1248]|f[248])")


class ChannelError(Exception):
    """A worker's message that is not a well-formed reply; the text says what was wrong."""


# -- referee -> worker: arrays sent once per child --------------------------------------

SHARE_MIN_BYTES = 4096  # smaller arrays cost less to send than to recognise
SHARE_PROBE = 64  # digests of one parameter before the table judges whether its arrays repeat


class Shared:
    """A large input array, sent to a child once: later requests name it by ``key`` alone.

    Static instance data (MAPP's distance matrix: 95% of an observation) would otherwise
    cross the pipe at every step. The child hands each call a fresh copy, as before.
    """

    __slots__ = ("key", "array")

    def __init__(self, key: int, array: np.ndarray | None):
        self.key, self.array = key, array

    def __reduce__(self):
        return (Shared, (self.key, self.array))


class ShareTable:
    """The referee's side: which arrays (by dtype, shape and content digest) a child already holds.

    Two shortcuts keep the digest (0.5-0.7 GB/s here, costlier than pickling the array:
    ``benchmarks/referee_work.py --digest-speed``)
    off the common paths: an array that cannot change (read-only and owning its memory, as
    every instance array is; this assumes no trusted code writes it through a view made
    before it was set read-only, and none does) and was shared before is known by identity; and a parameter
    whose arrays almost never repeat (DCOP's per-sweep uniforms ``u``) stops being digested
    once :data:`SHARE_PROBE` tries found it repeating less than one time in ten.
    """

    def __init__(self) -> None:
        self.keys: dict[tuple, int] = {}
        self._fixed: dict[int, tuple[np.ndarray, int]] = {}  # id -> (the unchangeable array, its key)
        self._tries: dict[str, list[int]] = {}  # parameter -> [digests, repeats]

    def compact(self, kwargs: dict[str, Any], depth: int = 0) -> dict[str, Any]:
        """``kwargs`` with each large array replaced by a :class:`Shared`; one level of
        nested dicts too (MAPP's ``graph["dist_mat"]``: without it, the whole matrix
        crossed the pipe for every instance at every step)."""
        out = {}
        for name, value in kwargs.items():
            if type(value) is np.ndarray and value.nbytes >= SHARE_MIN_BYTES and value.dtype.kind in "biuf":
                value = self._share(name, value)
            elif type(value) is dict and depth == 0:
                value = self.compact(value, 1)
            out[name] = value
        return out

    def _share(self, name: str, value: np.ndarray) -> Shared | np.ndarray:
        import hashlib

        fixed = not value.flags.writeable and value.flags.owndata
        if fixed:
            known = self._fixed.get(id(value))
            if known is not None and known[0] is value:
                return Shared(known[1], None)
        tries = self._tries.setdefault(name, [0, 0])
        if not fixed and tries[0] >= SHARE_PROBE and tries[1] * 10 < tries[0]:
            return value  # this parameter's arrays do not repeat: sent as they are
        data = np.ascontiguousarray(value)
        key = (data.dtype.str, data.shape, hashlib.blake2b(data.data, digest_size=16).digest())
        known = self.keys.get(key)
        tries[0] += 1
        if known is None:
            known = self.keys[key] = len(self.keys)
            shared = Shared(known, data)
        else:
            tries[1] += 1
            shared = Shared(known, None)
        if fixed:
            self._fixed[id(value)] = (value, known)  # held, so its id is not reused
        return shared


def expand(kwargs: dict[str, Any], held: dict[int, np.ndarray], depth: int = 0) -> dict[str, Any]:
    """The child's side of :class:`ShareTable`: shared arrays back, each call its own copy."""
    out = {}
    for name, value in kwargs.items():
        if type(value) is Shared:
            if value.array is not None:
                held[value.key] = value.array
            value = held[value.key].copy()
        elif type(value) is dict and depth == 0:
            value = expand(value, held, 1)
        out[name] = value
    return out


# -- worker side: encode --------------------------------------------------------------

class Unsendable(Exception):
    """A program's return value that has no wire form (its role's ``type`` failure)."""


def encode_value(value: Any, depth: int = 0) -> Any:
    """``value`` in its wire form; :class:`Unsendable` for what is not plain data.

    Exact types only: a program-defined subclass is refused, not converted.
    """
    kind = type(value)
    if value is None or kind in (bool, float):
        return value
    if kind is int:
        if not _INT64[0] <= value <= _INT64[1]:
            raise Unsendable("returned an int outside int64")
        return value
    if kind is np.ndarray:
        if value.dtype.kind not in "biuf" or value.size > MAX_ITEMS:
            raise Unsendable(f"returned array of dtype {value.dtype} and size {value.size} is not allowed")
        return ["a", value.dtype.str, list(value.shape), value.ravel().tolist()]
    if isinstance(value, np.generic) and kind.__module__ == "numpy":
        if value.dtype.kind not in "biuf":
            raise Unsendable(f"returned a numpy scalar of dtype {value.dtype}")
        return ["g", value.dtype.str, value.item()]
    if depth >= MAX_DEPTH:
        raise Unsendable(f"returned value nests deeper than {MAX_DEPTH} levels")
    if kind in (list, tuple):
        if len(value) > MAX_ITEMS:
            raise Unsendable(f"returned {kind.__name__} of {len(value)} items")
        return ["l" if kind is list else "t", [encode_value(v, depth + 1) for v in value]]
    if kind is dict:
        if len(value) > MAX_ITEMS:
            raise Unsendable(f"returned dict of {len(value)} items")
        if not all(type(k) is int and _INT64[0] <= k <= _INT64[1] for k in value):
            raise Unsendable("returned a dict with a key that is not an int64; actions are numbers")
        return ["d", [[k, encode_value(v, depth + 1)] for k, v in value.items()]]
    if kind is str:
        raise Unsendable("returned a str; actions are numbers")
    raise Unsendable(f"returned an object of type {kind.__name__}; return plain data")


def wire_values(raw: bytes) -> int:
    """An upper bound on the JSON values in ``raw``: each but the first follows a comma or
    opens a list (brackets and commas inside strings only add to it). Counted in C."""
    return raw.count(b",") + raw.count(b"[") + 1


def encode_reply(answers: list[Any]) -> bytes:
    """One batch reply: per request, ``["ok", wire value]`` or ``["fail", reason, detail]``.

    A reply over the referee's bounds would be refused whole as a protocol failure, so an
    honest worker sends each answer's ``type`` failure instead (no legitimate step comes near).
    """
    raw = json.dumps(answers, allow_nan=True, separators=(",", ":")).encode()
    if len(raw) <= MAX_REPLY_BYTES and wire_values(raw) <= MAX_REPLY_VALUES:
        return raw
    detail = f"the step's actions together exceed the reply limit ({MAX_REPLY_BYTES} bytes, {MAX_REPLY_VALUES} values)"
    return json.dumps([a if a[0] == "fail" else ["fail", "type", detail] for a in answers]).encode()


# -- referee side: decode -------------------------------------------------------------

class _Budget:
    """Counts decoded values so one reply cannot make the referee build more than it allows."""

    def __init__(self, items: int):
        self.left = items

    def take(self, n: int = 1) -> None:
        self.left -= n
        if self.left < 0:
            raise ChannelError("a reply holds more values than allowed")


def _decode(wire: Any, depth: int, budget: _Budget) -> Any:
    kind = type(wire)
    if wire is None or kind in (bool, float) or (kind is int and _INT64[0] <= wire <= _INT64[1]):
        budget.take()
        return wire
    if kind is not list or not wire or type(wire[0]) is not str:
        raise ChannelError(f"not a wire value ({kind.__name__})")
    tag, rest = wire[0], wire[1:]
    if tag == "a" and len(rest) == 3:
        return _decode_array(*rest, budget)
    if tag == "g" and len(rest) == 2 and type(rest[0]) is str and type(rest[1]) in (bool, int, float):
        budget.take()
        return _numpy_scalar(rest[0], rest[1])
    if depth >= MAX_DEPTH:
        raise ChannelError(f"a value nests deeper than {MAX_DEPTH} levels")
    if tag in ("l", "t") and len(rest) == 1 and type(rest[0]) is list:
        budget.take()
        items = [_decode(v, depth + 1, budget) for v in rest[0]]
        return items if tag == "l" else tuple(items)
    if tag == "d" and len(rest) == 1 and type(rest[0]) is list:
        budget.take()
        out = {}
        for pair in rest[0]:
            if type(pair) is not list or len(pair) != 2:
                raise ChannelError("a dict entry is not a [key, value] pair")
            key = pair[0]
            if type(key) is not int or not _INT64[0] <= key <= _INT64[1]:  # hashes that cannot all collide
                raise ChannelError("a dict key is not an int64")
            budget.take()
            out[key] = _decode(pair[1], depth + 1, budget)
        return out
    raise ChannelError(f"unknown wire tag {tag[:8]!r}")


def _checked_dtype(text: str) -> np.dtype:
    if not _DTYPE.fullmatch(text):
        raise ChannelError(f"dtype {text[:16]!r} may not cross the channel")
    return np.dtype(text)


def _numpy_scalar(dtype: str, value: Any) -> Any:
    kind = _checked_dtype(dtype)
    try:
        return kind.type(value)
    except (OverflowError, ValueError, TypeError):
        raise ChannelError(f"{value!r} is not a value of dtype {kind}") from None


def _decode_array(dtype: Any, shape: Any, flat: Any, budget: _Budget) -> np.ndarray:
    if type(dtype) is not str or type(shape) is not list or type(flat) is not list:
        raise ChannelError("a malformed array")
    if len(shape) > 32 or not all(type(n) is int and 0 <= n <= MAX_ITEMS for n in shape):
        raise ChannelError("a malformed array shape")
    size = math.prod(shape)
    if size != len(flat):
        raise ChannelError(f"an array of shape {shape} carries {len(flat)} values")
    budget.take(size)
    kind = _checked_dtype(dtype)
    try:
        # Parsed without a dtype first: a string or a nested list there comes out as a
        # string or object array (numpy would otherwise parse "1" as a number).
        if size and np.array(flat).dtype.kind not in "biuf":
            raise ChannelError("an array carries a value that is not a number")
        return np.array(flat, dtype=kind).reshape(shape)
    except (OverflowError, ValueError, TypeError):
        raise ChannelError(f"an array's values do not fit dtype {kind}") from None


def decode_reply(raw: bytes, n_requests: int) -> list[tuple[bool, Any]]:
    """A worker's batch reply, checked: per request ``(True, action)`` or ``(False, (reason, detail))``.

    Raises :class:`ChannelError` for anything but exactly ``n_requests`` well-formed answers.
    """
    if len(raw) > MAX_REPLY_BYTES:
        raise ChannelError(f"a reply of {len(raw)} bytes (at most {MAX_REPLY_BYTES})")
    if wire_values(raw) > MAX_REPLY_VALUES:  # before parsing: what the parse would build
        raise ChannelError(f"a reply of more than {MAX_REPLY_VALUES} values")
    try:
        answers = json.loads(raw)
    except (ValueError, RecursionError, MemoryError) as exc:  # all the sender's fault
        raise ChannelError(f"not JSON ({type(exc).__name__})") from None
    if type(answers) is not list or len(answers) != n_requests:
        raise ChannelError(f"expected a list of {n_requests} answers")
    budget = _Budget(MAX_ITEMS * max(1, n_requests))
    out: list[tuple[bool, Any]] = []
    for answer in answers:
        if type(answer) is list and len(answer) == 2 and answer[0] == "ok":
            try:
                out.append((True, _decode(answer[1], 0, budget)))
            except RecursionError:
                raise ChannelError("a value nests too deeply") from None
        elif (type(answer) is list and len(answer) == 3 and answer[0] == "fail" and answer[1] in WORKER_REASONS
              and type(answer[2]) is str):
            out.append((False, (answer[1], answer[2][:MAX_DETAIL_CHARS])))
        else:
            raise ChannelError("an answer is neither ['ok', value] nor ['fail', reason, detail]")
    return out


# -- framing: a 4-byte big-endian length, then the bytes --------------------------------

class FrameTimeout(Exception):
    """The other end did not send or take a whole frame before the deadline."""


def _wait(fd: int, writing: bool, deadline: float | None) -> None:
    remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
    ready = select.select([], [fd], [], remaining) if writing else select.select([fd], [], [], remaining)
    if not (ready[1] if writing else ready[0]):
        raise FrameTimeout("deadline passed")


def write_frame(fd: int, data: bytes, deadline: float | None = None) -> None:
    """Write one frame; with a deadline, ``fd`` must be non-blocking (a reader that stops reading cannot stall us).

    Without a deadline (the worker's side, blocking pipes) it simply writes.
    """
    view = memoryview(len(data).to_bytes(4, "big") + data)
    while view:
        try:  # try first: a pipe with room takes it at once (one syscall, not two)
            written = os.write(fd, view)
        except BlockingIOError:
            _wait(fd, True, deadline)
            continue
        view = view[written:]


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks, left = [], n
    while left:
        try:  # try first; wait (until the deadline) only when nothing is there yet
            chunk = os.read(fd, min(left, 1 << 20))
        except BlockingIOError:
            _wait(fd, False, deadline)
            continue
        if not chunk:
            raise EOFError("the other end closed the pipe")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, max_bytes: int, deadline: float | None = None) -> bytes:
    """Read one frame of at most ``max_bytes``; :class:`ChannelError` for a longer one, EOFError at the end."""
    size = int.from_bytes(_read_exact(fd, 4, deadline), "big")
    if size > max_bytes:
        raise ChannelError(f"a message of {size} bytes announced (at most {max_bytes})")
    return _read_exact(fd, size, deadline)
