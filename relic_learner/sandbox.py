"""Sandboxed execution of untrusted role programs (Appendix C.2, C.5; DESIGN §9).

A :class:`SandboxWorker` is one separate process, in its own session and process
group, that holds the simulator and plays whole rollouts of a batch: the team's
programs run inside it, so there is no round trip per decision. Inside the worker:

* every program call runs under a per-call time limit (``SIGALRM`` raising an
  exception programs cannot catch with ``except Exception``), with a memory cap
  (``RLIMIT_AS``), no file writes (``RLIMIT_FSIZE``), stdout/stderr sent to
  ``/dev/null``, and an audit hook that
  refuses file, process, socket, ``ctypes``, ``exec`` and import events while program
  code runs. Everything a program's objects do is program code too: turning an
  exception into text and dropping a refused return value happen under the same guard;
* the worker starts from an allowlisted environment (no API keys or tokens,
  ``PYTHONHASHSEED=0``, BLAS threads pinned) and, where the kernel lets an
  unprivileged process do it, in fresh user, mount and network namespaces: no
  network, every file system read-only, ``/proc`` hidden (:func:`_isolate`);
* inputs are fresh copies made read-only (arrays flagged read-only, which programs
  cannot undo since ``setflags``/``flags`` are forbidden; lists and dicts that refuse
  in-place changes);
* returns are reduced to plain data (arrays, numbers, lists, tuples, dicts) before
  the trusted simulator sees them, so no program-defined object runs code later;
* programs are loaded afresh for every instance, so no state leaks between
  instances; the ``numpy``/``math`` modules are checked for tampering after each job
  (a backstop: validated programs cannot assign attributes).

The parent never unpickles what a worker sends: results come back as length-limited
JSON messages checked against a fixed schema (numbers, short strings), and anything
else is a contained failure with reason ``protocol`` (the worker is replaced). The
parent enforces a wall limit per evaluation: a worker that does not answer in time is
killed with its whole process group and replaced. A worker that dies (segfault,
kill) is replaced too, and the evaluation goes on with the next instance.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import math
import mmap
import os
import re
import resource
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Mapping
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from relic_envs.core.benchmark import Invalid
from relic_envs.core.instance import Instance
from relic_envs.core.program import check_source, load_function
from relic_envs.core.registry import get_benchmark
from relic_envs.core.rollout import RolloutResult, rollout
from relic_envs.errors import InvalidReturn, ProgramError

# Per-call limits: the paper's 2 s per DCOP call and 0.25 s per CO decision (Appendix
# C.5). The paper gives none for MAPP/MAS; 1 s per decision is ours (a decision there
# scans a few hundred nodes or jobs, ~1 ms for the seeds).
CALL_LIMIT_S = {"dcop": 2.0, "co": 0.25, "mapp": 1.0, "mas": 1.0}


@dataclasses.dataclass(frozen=True)
class Limits:
    """Resource limits of sandboxed evaluation.

    Parameters
    ----------
    call_s:
        Time limit of one program call (one decision), in seconds.
    memory_mb:
        Address space a worker may add to what it holds after start-up, in MiB.
    wall_s:
        Wall limit of one evaluation request, enforced by the parent by killing the
        worker; ``None`` means ``30 s + 5 s`` per instance (a backstop for what the
        per-call alarm cannot interrupt, such as one long C-level numpy call).
    """

    call_s: float
    memory_mb: int = 1024
    wall_s: float | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.call_s, int | float) and 0 < self.call_s <= 600):
            raise ValueError(f"call_s must be a number in (0, 600] seconds, got {self.call_s!r}")
        if not (isinstance(self.memory_mb, int) and 16 <= self.memory_mb <= 1 << 20):
            raise ValueError(f"memory_mb must be an int in [16, 1048576], got {self.memory_mb!r}")
        if self.wall_s is not None and not (isinstance(self.wall_s, int | float) and self.wall_s > 0):
            raise ValueError(f"wall_s must be a positive number or None, got {self.wall_s!r}")

    def wall_for(self, n_instances: int) -> float:
        return self.wall_s if self.wall_s is not None else 30.0 + 5.0 * n_instances

    @classmethod
    def for_family(cls, family: str, **overrides: Any) -> Limits:
        if family not in CALL_LIMIT_S:
            raise ValueError(f"unknown family {family!r}; allowed: {sorted(CALL_LIMIT_S)}")
        return cls(**{"call_s": CALL_LIMIT_S[family], **overrides})


@dataclasses.dataclass(frozen=True)
class Job:
    """One evaluation request: a team (role -> source, ``None`` = reference policy) on instances."""

    benchmark: str
    interface: str
    sources: Mapping[str, str | None]
    instances: tuple[Instance, ...]
    call_s: float


# ----------------------------------------------------------------------------------
# Worker side. Everything below runs in the child process.
# ----------------------------------------------------------------------------------


class _CallTimeout(BaseException):
    """Raised by SIGALRM inside a program call; BaseException so ``except Exception`` misses it."""


class _Blocked(BaseException):
    """Raised by the audit hook when program code reaches for the outside world."""


_IN_PROGRAM = False  # True only while untrusted code runs in this worker
_BLOCKED_EVENTS = frozenset({
    "exec", "compile", "import", "os.system", "os.fork", "os.forkpty", "os.exec", "os.posix_spawn",
    "os.spawn", "os.kill", "os.killpg", "os.remove", "os.unlink", "os.rename", "os.rmdir", "os.mkdir",
    "os.chmod", "os.chown", "os.truncate", "os.symlink", "os.link", "os.chdir", "os.putenv", "os.unsetenv",
    "os.listdir", "os.scandir", "subprocess.Popen", "sys._getframe", "sys.setprofile", "sys.settrace",
    "sys.addaudithook", "builtins.input", "pty.spawn", "fcntl.ioctl", "mmap.__new__", "resource.setrlimit",
    "resource.prlimit", "signal.pthread_kill", "object.__setattr__", "object.__delattr__", "function.__new__",
    "code.__new__", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
})
_BLOCKED_PREFIXES = ("socket.", "ctypes.", "shutil.", "urllib.", "http.", "ftplib.", "smtplib.", "_winapi.")


_TRUSTED_CODE: set = set()  # module code objects the worker itself compiled from checked trees


def _audit(event: str, args: tuple) -> None:
    if not _IN_PROGRAM:
        return
    if event == "exec" and args and args[0] in _TRUSTED_CODE:
        return
    if event == "open" or event in _BLOCKED_EVENTS or event.startswith(_BLOCKED_PREFIXES):
        raise _Blocked(f"{event} is not allowed in a role program")


def _on_alarm(signum: int, frame: Any) -> None:
    if _IN_PROGRAM:
        raise _CallTimeout()


# Linux constants for _isolate (<sched.h>, <sys/mount.h>, <linux/mount.h>, <sys/prctl.h>).
_CLONE_NEWNS, _CLONE_NEWUSER, _CLONE_NEWNET = 0x00020000, 0x10000000, 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REMOUNT, _MS_BIND = 0x1, 0x2, 0x4, 0x8, 0x20, 0x1000
_MS_REC, _MS_PRIVATE = 0x4000, 0x40000
_SYS_MOUNT_SETATTR = 442  # one number on every architecture (syscalls added since 5.1 share them)
_AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = -100, 0x8000, 0x1
_PR_SET_NO_NEW_PRIVS = 38
ISOLATION_KEYS = ("network_namespace", "read_only_filesystem", "proc_hidden", "no_new_privileges")


def _isolate() -> dict[str, bool]:
    """Put this worker in what OS isolation an unprivileged Linux process can have; say what held.

    Fresh user + mount + network namespaces (``unshare``, as ``unshare -rmn`` does): the
    network namespace has only a loopback device that is down; in the mount namespace
    ``/proc`` is covered by an empty read-only tmpfs (no other process's environment or
    memory to read) and every mount is made read-only (no file can be created, changed
    or removed). Each step is skipped, and reported ``False``, where the kernel refuses
    it (user namespaces disabled, a seccomp policy, no ``mount_setattr`` before 5.12).
    Must run while the process is single-threaded and before anything needs ``/proc``.
    """
    held = dict.fromkeys(ISOLATION_KEYS, False)
    if not sys.platform.startswith("linux"):
        return held
    libc = ctypes.CDLL(None, use_errno=True)
    held["no_new_privileges"] = libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWNET) != 0:
        return held
    held["network_namespace"] = True
    try:  # map our own ids, as unprivileged unshare may (kept as they were: files stay readable)
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    except OSError:
        pass
    if libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return held  # keep the mounts as they are rather than propagate anything out
    flags = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    held["proc_hidden"] = libc.mount(b"none", b"/proc", b"tmpfs", flags, b"size=4k,mode=555") == 0
    attr = struct.pack("QQQQ", _MOUNT_ATTR_RDONLY, 0, 0, 0)  # struct mount_attr: set, clear, propagation, userns
    held["read_only_filesystem"] = libc.syscall(_SYS_MOUNT_SETATTR, _AT_FDCWD, b"/", _AT_RECURSIVE, attr, len(attr)) == 0
    if not held["read_only_filesystem"]:  # older kernels: at least the root file system
        libc.mount(None, b"/", None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY, None)
    return held


def _prepare_worker(memory_mb: int) -> dict[str, bool]:
    """Isolate this process (already in its own session): namespaces, limits, silence, warm imports, audit hook.

    Returns what :func:`_isolate` could do.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the worker
    sys.stderr = sys.stdout
    warnings.simplefilter("ignore")
    # numpy loads some submodules lazily; load them now, while imports are allowed.
    import numpy.fft  # noqa: F401
    import numpy.linalg  # noqa: F401
    import numpy.ma  # noqa: F401
    import numpy.polynomial  # noqa: F401

    base = _address_space()  # reads /proc, which _isolate hides
    isolation = _isolate()
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file write fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = base + memory_mb * 2**20
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    sys.addaudithook(_audit)
    return isolation


def _address_space() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


class _ModuleGuard:
    """Detects and undoes changes a program made to the shared numpy/math modules."""

    def __init__(self) -> None:
        self._modules = [np, math, np.linalg, np.fft, np.ma, np.polynomial, np.lib]
        self._snapshots = [dict(vars(m)) for m in self._modules]

    def tampered(self) -> bool:
        changed = False
        for module, snapshot in zip(self._modules, self._snapshots):
            current = vars(module)
            if len(current) != len(snapshot) or any(current.get(k) is not v for k, v in snapshot.items()):
                current.clear()
                current.update(snapshot)
                changed = True
        return changed


def _refuse(self: Any, *args: Any, **kwargs: Any) -> None:
    raise ValueError(f"this {type(self).__mro__[1].__name__} is a read-only input")


class _ReadOnlyList(list):
    """A list input: reads as a list, refuses in-place changes (reported as mutation)."""

    __slots__ = ()
    append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse


class _ReadOnlyDict(dict):
    """A dict input: reads as a dict, refuses in-place changes (reported as mutation)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = update = pop = popitem = clear = setdefault = _refuse


def _frozen(value: Any) -> Any:
    """A fresh input made read-only: arrays flagged read-only, lists and dicts that refuse changes.

    Inputs are fresh copies anyway, so a change could not reach the simulator; refusing
    it makes the program's attempt visible (reason ``mutation``) at no per-call cost.
    """
    if isinstance(value, np.ndarray):
        # Inputs are fresh copies made for this call, so marking them read-only is
        # enough; the validator forbids ``setflags``/``flags``, the only way back.
        value.setflags(write=False)
        return value
    kind = type(value)
    if kind is dict:
        return _ReadOnlyDict((k, v if type(v) in _PASS_THROUGH else _frozen(v)) for k, v in value.items())
    if kind is list:
        return _ReadOnlyList(v if type(v) in _PASS_THROUGH else _frozen(v) for v in value)
    return value  # scalars and tuples (immutable; what a tuple holds is a fresh copy anyway)


_PASS_THROUGH = frozenset({int, float, bool, str, tuple, type(None), np.float64, np.int64})


_NUMPY_ERRORS = np.geterr()  # numpy's defaults (underflow ignored), restored for every instance
_PLAIN_SCALARS = (int, float, bool, str, type(None))
MAX_RETURN_ITEMS = 1_000_000
MAX_MESSAGE_CHARS = 500  # of a program's exception message, in a status detail


def _plain(value: Any, depth: int = 0) -> Any:
    """``value`` reduced to plain data, or ``InvalidReturn('type')``.

    Exact types only: a program-defined subclass could run code when the simulator
    compares or converts it, outside the time limit.
    """
    kind = type(value)
    if kind is np.ndarray:
        if value.dtype.hasobject or value.size > MAX_RETURN_ITEMS:
            raise InvalidReturn("type", f"returned array of dtype {value.dtype} and size {value.size} is not allowed")
        return np.array(value)
    if kind in _PLAIN_SCALARS or (isinstance(value, np.generic) and kind.__module__ == "numpy" and not isinstance(value, np.object_)):
        return value
    if depth > 8:
        raise InvalidReturn("type", "returned value nests deeper than 8 levels")
    if kind in (list, tuple):
        if len(value) > MAX_RETURN_ITEMS:
            raise InvalidReturn("type", f"returned {kind.__name__} of {len(value)} items")
        return kind(_plain(v, depth + 1) for v in value)
    if kind is dict:
        return {_plain(k, depth + 1): _plain(v, depth + 1) for k, v in value.items()}
    raise InvalidReturn("type", f"returned an object of type {kind.__name__}; return plain data")


def _describe(exc: BaseException) -> tuple[str, str]:
    """The status reason and detail of an exception raised under the guard.

    Runs under the guard too: ``str(exc)`` may run code the program chose (the
    ``__str__``/``__repr__`` of what it put in the exception). If that raises or is cut
    by the alarm, the detail is the type name alone.
    """
    if isinstance(exc, _CallTimeout):
        return "timeout", "the call exceeded its time limit"
    if isinstance(exc, _Blocked):
        return "forbidden", str(exc)  # our own message
    if isinstance(exc, InvalidReturn):
        return exc.reason, str(exc).removeprefix(f"{exc.reason}: ")  # raised by _plain: ours too
    if isinstance(exc, MemoryError):
        return "memory", "the program exceeded the memory limit"
    name = type(exc).__name__
    try:
        message = str(exc)[:MAX_MESSAGE_CHARS]
    except BaseException:  # noqa: BLE001 - the alarm, or whatever the formatting raised
        message = None
    if type(name) is not str or type(message) is not str:
        return "exception", f"{name if type(name) is str else 'exception'} (message not shown)"
    if isinstance(exc, ValueError) and ("read-only" in message or "WRITEABLE" in message):
        return "mutation", f"the program wrote to an input: {message}"
    return "exception", f"{name}: {message}"


def _guarded_call(function: Any, args: tuple, kwargs: dict, call_s: float, finish: Any = None) -> Any:
    """Run untrusted code under the time limit and audit hook; raise InvalidReturn on failure.

    Everything that may run program code happens inside the guard: the call, ``finish``
    (which turns the return value into plain data, so a refused value is dropped
    there), and describing a failure (``str`` of the program's exception). Outside it
    only our own strings remain.
    """
    global _IN_PROGRAM
    failure = None
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, call_s, 0.05)  # re-fires until cleared
            _IN_PROGRAM = True
            try:
                value = function(*args, **kwargs)
                if finish is not None:
                    value = finish(value)
            except BaseException as exc:  # noqa: BLE001 - SystemExit/KeyboardInterrupt from programs too
                value = None  # a refused value goes here, under the guard
                failure = _describe(exc)
            # the program's exception and the frames it holds are released here, still under the guard
        finally:
            _IN_PROGRAM = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    except BaseException as exc:  # noqa: BLE001 - the alarm fired in our own code at the end of the call
        # What this may release outside the guard are objects of builtin types only
        # (programs cannot define classes), whose release runs no program code.
        if failure is None:
            failure = _describe(exc if isinstance(exc, _CallTimeout | MemoryError) else _CallTimeout())
    if failure is not None:
        raise InvalidReturn(*failure)
    return value


class _Stats:
    """Program calls per role in one job (reported with the results)."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def add(self, role: str) -> None:
        self.calls[role] = self.calls.get(role, 0) + 1


class _GuardedPolicy:
    """A program as a policy: fresh read-only inputs, limits, plain-data returns."""

    def __init__(self, function: Any, signature: Any, role: str, call_s: float, stats: _Stats, progress: Any):
        self.function, self.signature, self.role = function, signature, role
        self.call_s, self.stats, self.progress = call_s, stats, progress
        self._role_index = "ABC".index(role) if role in "ABC" else -1

    def __call__(self, obs: Mapping[str, Any]) -> Any:
        self.progress[1] = self._role_index
        kwargs = {k: _frozen(v) for k, v in self.signature.to_kwargs(obs).items()}
        value = _guarded_call(self.function, (), kwargs, self.call_s, finish=_plain)
        self.stats.add(self.role)
        return value


def _load(source: str, signature: Any, call_s: float, cache: dict) -> Any:
    """Check (once per source) and execute the module (afresh, under the limits)."""
    key = (signature.role, source)
    if key not in cache:
        try:
            code = compile(check_source(source, signature), f"<role {signature.role}>", "exec")
            _TRUSTED_CODE.add(code)
            cache[key] = code
        except ProgramError as exc:
            cache[key] = exc
        except (RecursionError, MemoryError):  # check_source bounds the depth; a backstop
            cache[key] = ProgramError("syntax", "the program is too deeply nested to compile")
    code = cache[key]
    if isinstance(code, ProgramError):
        raise InvalidReturn(code.reason, str(code).removeprefix(f"{code.reason}: "))
    return _guarded_call(load_function, (code, signature), {}, call_s)


# ----------------------------------------------------------------------------------
# The wire format, worker -> parent. Plain JSON of a fixed shape, so nothing a worker
# sends can make the parent run code (pickle would: issue 22).
# ----------------------------------------------------------------------------------

MAX_MESSAGE_BYTES = 64 * 1024  # a result is well under 4 KiB
MAX_DETAIL_CHARS = 2000
_ROLE_NAMES = frozenset({"A", "B", "C", "?"})
_REASON = re.compile(r"[a-z][a-z-]{0,31}")


def _is_int(value: Any) -> bool:
    return type(value) is int


def _is_number_or_none(value: Any) -> bool:
    return value is None or type(value) in (int, float)


def _is_invalid(value: Any) -> bool:
    return value is None or (
        type(value) is list and len(value) == 3 and all(type(v) is str for v in value)
        and value[0] in _ROLE_NAMES and _REASON.fullmatch(value[1]) is not None and len(value[2]) <= MAX_DETAIL_CHARS
    )


def _is_calls(value: Any) -> bool:
    return type(value) is dict and all(k in _ROLE_NAMES and _is_int(v) for k, v in value.items())


def _is_isolation(value: Any) -> bool:
    return type(value) is dict and set(value) == set(ISOLATION_KEYS) and all(type(v) is bool for v in value.values())


_SCHEMA = {
    "ready": {"pid": _is_int, "isolation": _is_isolation},
    "result": {"index": _is_int, "objective": _is_number_or_none, "score": _is_number_or_none, "steps": _is_int, "invalid": _is_invalid},
    "done": {"calls": _is_calls, "tampered": lambda v: type(v) is bool},
}


class ProtocolError(Exception):
    """A worker's message that is not one of the messages of :data:`_SCHEMA`."""


def _encode(kind: str, **fields: Any) -> bytes:
    return json.dumps({"kind": kind, **fields}, allow_nan=True).encode()


def decode_message(raw: bytes) -> dict[str, Any]:
    """A worker's message, checked against the schema; ``ProtocolError`` for anything else."""
    try:
        message = json.loads(raw)
    except Exception as exc:  # noqa: BLE001 - ValueError, RecursionError, MemoryError: all the sender's fault
        raise ProtocolError(f"not JSON ({type(exc).__name__})") from None
    if type(message) is not dict or message.get("kind") not in _SCHEMA:
        raise ProtocolError("not a known message")
    fields = _SCHEMA[message["kind"]]
    if message.keys() != {"kind", *fields} or not all(check(message[name]) for name, check in fields.items()):
        raise ProtocolError(f"a malformed {message['kind']!r} message")
    return message


def _result_message(index: int, result: RolloutResult) -> bytes:
    invalid = result.invalid
    return _encode(
        "result", index=index,
        objective=None if result.objective is None else float(result.objective),
        score=None if result.score is None else float(result.score),
        steps=int(result.steps),
        invalid=None if invalid is None else [
            invalid.role if invalid.role in _ROLE_NAMES else "?",
            invalid.reason if _REASON.fullmatch(invalid.reason) else "exception",
            str(invalid.detail)[:MAX_DETAIL_CHARS],
        ],
    )


def _result_of(message: dict[str, Any]) -> RolloutResult:
    invalid = message["invalid"]
    return RolloutResult(message["objective"], message["score"], message["steps"], None if invalid is None else Invalid(*invalid))


def _play_job(job: Job, conn: Any, progress: Any, guard: _ModuleGuard, trees: dict) -> bool:
    """Play every instance of ``job``, sending each result as it completes; True if modules were tampered."""
    bench = get_benchmark(job.benchmark)
    signatures = bench.signatures(job.interface)
    stats = _Stats()
    for index, instance in enumerate(job.instances):
        progress[0], progress[1] = index, -1
        np.seterr(**_NUMPY_ERRORS)  # a program may have changed numpy's error state
        team: dict[str, Any] = {}
        result = None
        for role in bench.roles:
            source = job.sources.get(role)
            if source is None:
                team[role] = bench.reference_policy(role, job.interface)
                continue
            try:
                progress[1] = "ABC".index(role)
                function = _load(source, signatures[role], job.call_s, trees)
            except InvalidReturn as exc:
                result = RolloutResult(None, None, 0, Invalid(role, exc.reason, f"while loading: {exc}"))
                break
            team[role] = _GuardedPolicy(function, signatures[role], role, job.call_s, stats, progress)
        if result is None:
            (result,) = rollout(bench, team, [instance], interface=job.interface)
        conn.send_bytes(_result_message(index, result))
    # Validated programs cannot assign attributes, so this is a backstop: checked once
    # per job; the parent voids the whole job and replaces the worker if it trips.
    tampered = guard.tampered()
    conn.send_bytes(_encode("done", calls=stats.calls, tampered=tampered))
    return tampered


def _worker_main(conn: Any, memory_mb: int, progress: Any) -> None:
    isolation = _prepare_worker(memory_mb)
    guard = _ModuleGuard()
    trees: dict = {}
    conn.send_bytes(_encode("ready", pid=os.getpid(), isolation=isolation))
    while True:
        try:
            message = conn.recv()  # a pickled Job from the parent, which the worker trusts
        except (EOFError, OSError):
            return  # the parent is gone
        if message is None:
            return
        if _play_job(message, conn, progress, guard, trees):
            return  # a tampered worker is not reused; the parent starts a fresh one
        if len(trees) > 256:
            trees.clear()
            _TRUSTED_CODE.clear()


def _worker_entry() -> None:
    """``python -c`` entry of a worker: ``argv = [read_fd, write_fd, progress_fd, memory_mb]``."""
    read_fd, write_fd, progress_fd, memory_mb = (int(a) for a in sys.argv[1:5])
    conn = Connection(read_fd, writable=False)
    out = Connection(write_fd, readable=False)
    shared = mmap.mmap(progress_fd, _PROGRESS_BYTES)
    os.close(progress_fd)  # the mapping stays; no file is left open for writing
    progress = np.frombuffer(shared, dtype=np.int32, count=2)
    _worker_main(_Duplex(conn, out), memory_mb, progress)


class _Duplex:
    """Two one-way pipe ends as one connection (``send`` out, ``recv``/``poll`` in)."""

    def __init__(self, incoming: Connection, outgoing: Connection):
        self.incoming, self.outgoing = incoming, outgoing

    def send(self, obj: Any) -> None:
        self.outgoing.send(obj)

    def send_bytes(self, data: bytes) -> None:
        self.outgoing.send_bytes(data)

    def recv(self) -> Any:
        return self.incoming.recv()

    def recv_bytes(self, maxlength: int) -> bytes:
        return self.incoming.recv_bytes(maxlength)

    def poll(self, timeout: float) -> bool:
        return self.incoming.poll(timeout)

    def close(self) -> None:
        self.incoming.close()
        self.outgoing.close()


# ----------------------------------------------------------------------------------
# Parent side.
# ----------------------------------------------------------------------------------

_PROGRESS_BYTES = 8  # two int32: instance index within the job, role index (0..2, -1 none)
_WORKER_CODE = "from relic_learner.sandbox import _worker_entry; _worker_entry()"
# What a worker inherits from this process's environment: how to run Python and read
# text, nothing else (no API keys, tokens, proxies, credentials paths).
_INHERITED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "LD_LIBRARY_PATH", "PYTHONHOME", "TMPDIR")
_MALLOC_DEFAULTS = {"MALLOC_MMAP_THRESHOLD_": str(32 * 2**20), "MALLOC_TRIM_THRESHOLD_": str(64 * 2**20)}


def _worker_env() -> dict[str, str]:
    env = {k: os.environ[k] for k in _INHERITED_ENV if k in os.environ}
    # The worker imports exactly what this process imports, and runs BLAS single-threaded
    # (threads would share the memory cap and fight the pool for cores).
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
        env[name] = "1"
    env["PYTHONHASHSEED"] = "0"  # str/bytes hashes, hence set iteration order, the same in every worker
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["JAX_PLATFORMS"] = "cpu"
    # A fresh process starts with glibc's dynamic mmap threshold at 128 KiB, so every
    # large temporary array is mmapped and unmapped (page faults on each allocation):
    # SHDS rollouts ran ~1.8x slower in a new worker than in a warmed-up process.
    for name, default in _MALLOC_DEFAULTS.items():
        env[name] = os.environ.get(name, default)
    return env


def _progress_memory() -> tuple[int, mmap.mmap]:
    """A shared two-int32 page and a file descriptor for the worker to map it.

    An anonymous memory file where Linux has them, so no file on disk is held open for
    writing (which would keep the worker from making its file systems read-only).
    """
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("relic-sandbox-progress", os.MFD_CLOEXEC)
    else:
        handle, path = tempfile.mkstemp(prefix="relic-sandbox-")
        os.unlink(path)
        fd = handle
    os.ftruncate(fd, _PROGRESS_BYTES)
    return fd, mmap.mmap(fd, _PROGRESS_BYTES)


class SandboxWorker:
    """One sandbox process and its pipes; started on first use, replaced after a crash or kill.

    The worker is a fresh interpreter (``subprocess`` in a new session), not a
    ``multiprocessing`` child: it never re-imports the caller's ``__main__`` and never
    inherits the caller's threads, memory or environment.

    Attributes
    ----------
    restarts:
        How many times the process was replaced (kills, crashes, protocol failures).
    isolation:
        What OS isolation the last started worker reported (keys :data:`ISOLATION_KEYS`);
        empty before the first start.
    """

    def __init__(self, memory_mb: int = 1024, start_timeout_s: float = 120.0):
        self.memory_mb = memory_mb
        self.start_timeout_s = start_timeout_s
        self.restarts = 0
        self.isolation: dict[str, bool] = {}
        self._process: subprocess.Popen | None = None
        self._reading: subprocess.Popen | None = None  # the worker being read from, for the watchdog
        self._conn: _Duplex | None = None
        self._progress_fd, self._shared = _progress_memory()
        self._progress = np.frombuffer(self._shared, dtype=np.int32, count=2)

    # -- lifecycle ---------------------------------------------------------------
    def _start(self) -> None:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        self._progress[:] = -1
        self._process = subprocess.Popen(
            [sys.executable, "-c", _WORKER_CODE, str(to_child_r), str(from_child_w), str(self._progress_fd), str(self.memory_mb)],
            pass_fds=(to_child_r, from_child_w, self._progress_fd),
            start_new_session=True,  # own session and process group
            stdin=subprocess.DEVNULL,
            env=_worker_env(),
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._conn = _Duplex(Connection(from_child_r, writable=False), Connection(to_child_w, readable=False))
        try:
            ready = self._conn.poll(self.start_timeout_s)
            message = decode_message(self._conn.recv_bytes(MAX_MESSAGE_BYTES)) if ready else None
        except (EOFError, OSError, ProtocolError):
            message = None
        if message is None or message["kind"] != "ready":
            code = self._process.poll()
            self.kill()
            raise RuntimeError(
                f"sandbox worker did not start within {self.start_timeout_s} s (exit status {code}); "
                f"check that `{sys.executable} -c 'import relic_learner.sandbox'` works"
            )
        self.isolation = message["isolation"]

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _kill_group(self) -> None:
        """SIGKILL the worker's process group (safe from any thread; reaping is :meth:`kill`'s)."""
        process = self._process
        if process is not None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def kill(self) -> None:
        """Kill the worker's whole process group and reap it."""
        if self._process is None:
            return
        self._kill_group()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if self._conn is not None:
            self._conn.close()
        self._exitcode = self._process.returncode
        self._process = self._conn = None

    def close(self) -> None:
        """Stop the worker and release its shared memory."""
        if self.alive:
            try:
                self._conn.send(None)
                self._process.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()
        if self._progress_fd >= 0:
            os.close(self._progress_fd)
            self._progress_fd = -1

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    # -- evaluation ----------------------------------------------------------------
    def run(self, job: Job, wall_s: float) -> tuple[list[RolloutResult], dict]:
        """Play ``job``; one result per instance, whatever the programs do.

        Returns the results and the worker's program calls per role (empty after a kill).
        """
        # A worker that sent part of a message would block the read forever; past the
        # deadline this kills it, which ends the read.
        watchdog = threading.Timer(wall_s + 1.0, self._end_stuck_read)
        watchdog.daemon = True
        watchdog.start()
        try:
            return self._run(job, time.monotonic() + wall_s)
        finally:
            watchdog.cancel()

    def _end_stuck_read(self) -> None:
        process = self._reading
        if process is not None and process is self._process:
            self._kill_group()

    def _run(self, job: Job, deadline: float) -> tuple[list[RolloutResult], dict]:
        results: list[RolloutResult | None] = [None] * len(job.instances)
        stats: dict = {}
        start = 0
        while start < len(job.instances):
            if time.monotonic() >= deadline:  # no fresh worker for a job already out of time
                self._void(results, start, "timeout", "not run: wall limit reached")
                return list(results), stats
            if not self.alive:
                if self._process is not None:
                    self.kill()
                self._start()
            part = dataclasses.replace(job, instances=job.instances[start:])
            try:
                self._conn.send(part)
            except OSError:
                self._replace()
                continue
            while True:
                message = self._receive(deadline)
                if message is None:  # wall limit: nothing more runs in this job
                    role, current = self._culprit(), self._current(start, len(results))
                    self._replace()
                    for i in range(start, len(results)):
                        if results[i] is None:
                            detail = "evaluation wall limit exceeded" if i == current else "not run: wall limit reached"
                            results[i] = RolloutResult(None, None, 0, Invalid(role, "timeout", detail))
                    return list(results), stats
                if isinstance(message, dict) and message["kind"] == "result":
                    index = start + message["index"]
                    if start <= index < len(results) and results[index] is None:
                        results[index] = _result_of(message)
                        continue
                    message = "malformed message from the sandbox worker: a result for an instance not asked for"
                if isinstance(message, str):  # "crashed", or a protocol failure: the worker is not trusted further
                    role, current = self._culprit(), self._current(start, len(results))
                    self.kill()
                    self.restarts += 1
                    failure = self._death() if message == "crashed" else ("protocol", message)
                    results[current] = RolloutResult(None, None, 0, Invalid(role, *failure))
                    start = current + 1
                    break
                if message["kind"] != "done" or any(r is None for r in results[start:]):
                    self._replace()  # out of order: void what is left of this job
                    self._void(results, start, "protocol", "the worker's messages came out of order")
                    return list(results), stats
                stats = {"calls": message["calls"]}
                if message["tampered"]:  # numpy/math were changed under the programs: nothing here is trusted
                    self._replace()
                    self._void(results, start, "mutation", "a program modified the numpy/math module", every=True)
                return list(results), stats
        return list(results), stats

    def _receive(self, deadline: float) -> dict | str | None:
        """The next checked message; ``None`` at the deadline, ``"crashed"``, or a protocol-failure text."""
        remaining = deadline - time.monotonic()
        try:
            if not (remaining > 0 and self._conn.poll(remaining)):
                return None
            self._reading = self._process
            try:
                raw = self._conn.recv_bytes(MAX_MESSAGE_BYTES)
            finally:
                self._reading = None
        except (EOFError, OSError) as exc:
            if time.monotonic() >= deadline:
                return None  # the watchdog's kill ended a read that would not finish
            if isinstance(exc, EOFError) or not self.alive:
                return "crashed"
            return f"malformed message from the sandbox worker ({exc})"  # "bad message length"
        try:
            return decode_message(raw)
        except ProtocolError as exc:
            return f"malformed message from the sandbox worker: {exc}"

    @staticmethod
    def _void(results: list, start: int, reason: str, detail: str, every: bool = False) -> None:
        for i in range(start, len(results)):
            if every or results[i] is None:
                results[i] = RolloutResult(None, None, 0, Invalid("?", reason, detail))

    def _current(self, start: int, n: int) -> int:
        """The instance the worker was on (its own report, so clamped to this job)."""
        return min(max(start + int(self._progress[0]), start), n - 1)

    def _culprit(self) -> str:
        role = int(self._progress[1])
        return "ABC"[role] if 0 <= role < 3 else "?"

    def _death(self) -> tuple[str, str]:
        code = self._exitcode
        if code is not None and code < 0:
            name = signal.Signals(-code).name
            if -code == signal.SIGXCPU:
                return "timeout", f"worker killed by {name}"
            if -code == signal.SIGKILL:
                return "memory", "worker killed by SIGKILL (likely the kernel's out-of-memory killer)"
            return "exception", f"worker crashed with {name}"
        return "exception", f"worker exited with status {code}"

    def _replace(self) -> None:
        self.kill()
        self.restarts += 1
