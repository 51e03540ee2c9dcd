"""Sandboxed execution of untrusted role programs (Appendix C.2, C.5; DESIGN §9).

A :class:`SandboxWorker` is one separate process, in its own session and process
group, that holds the simulator and plays whole rollouts of a batch: the team's
programs run inside it, so there is no round trip per decision. Inside the worker:

* every program call runs under a per-call time limit (``SIGALRM`` raising an
  exception programs cannot catch with ``except Exception``), with a memory cap
  (``RLIMIT_AS``), no file writes (``RLIMIT_FSIZE``), stdout/stderr sent to
  ``/dev/null``, and an audit hook that refuses file, process, socket, ``ctypes``,
  ``exec`` and import events while program code runs;
* inputs are fresh copies made read-only (arrays flagged read-only, which programs
  cannot undo since ``setflags``/``flags`` are forbidden; lists and dicts that refuse
  in-place changes);
* returns are reduced to plain data (arrays, numbers, lists, tuples, dicts) before
  the trusted simulator sees them, so no program-defined object runs code later;
* programs are loaded afresh for every instance, so no state leaks between
  instances; the ``numpy``/``math`` modules are checked for tampering after each job
  (a backstop: validated programs cannot assign attributes).

The parent enforces a wall limit per evaluation: a worker that does not answer in
time is killed with its whole process group and replaced. A worker that dies
(segfault, kill) is replaced too, and the evaluation goes on with the next instance.
"""

from __future__ import annotations

import dataclasses
import math
import mmap
import os
import resource
import signal
import subprocess
import sys
import tempfile
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
    "subprocess.Popen", "sys._getframe", "sys.setprofile", "sys.settrace", "builtins.input", "pty.spawn",
    "fcntl.ioctl", "mmap.__new__", "resource.setrlimit", "signal.pthread_kill",
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


def _prepare_worker(memory_mb: int) -> None:
    """Isolate this process (already in its own session): limits, silence, warm imports, audit hook."""
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

    signal.signal(signal.SIGALRM, _on_alarm)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file write fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _address_space() + memory_mb * 2**20
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    sys.addaudithook(_audit)


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


def _classify(exc: BaseException) -> tuple[str, str]:
    """The status reason of an exception that escaped program code."""
    if isinstance(exc, _CallTimeout):
        return "timeout", "the call exceeded its time limit"
    if isinstance(exc, _Blocked):
        return "forbidden", str(exc)
    if isinstance(exc, MemoryError):
        return "memory", "the program exceeded the memory limit"
    if isinstance(exc, ValueError) and ("read-only" in str(exc) or "WRITEABLE" in str(exc)):
        return "mutation", f"the program wrote to an input: {exc}"
    return "exception", f"{type(exc).__name__}: {str(exc)[:500]}"


class _Stats:
    """Program calls per role in one job (reported with the results)."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def add(self, role: str) -> None:
        self.calls[role] = self.calls.get(role, 0) + 1


def _guarded_call(function: Any, args: tuple, kwargs: dict, call_s: float) -> Any:
    """Run untrusted code under the time limit and audit hook; raise InvalidReturn on failure."""
    global _IN_PROGRAM
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, call_s, 0.05)  # re-fires until cleared
            _IN_PROGRAM = True
            return function(*args, **kwargs)
        finally:
            _IN_PROGRAM = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    except InvalidReturn:
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit/KeyboardInterrupt from programs too
        reason, detail = _classify(exc)
        raise InvalidReturn(reason, detail) from None


class _GuardedPolicy:
    """A program as a policy: fresh read-only inputs, limits, plain-data returns."""

    def __init__(self, function: Any, signature: Any, role: str, call_s: float, stats: _Stats, progress: Any):
        self.function, self.signature, self.role = function, signature, role
        self.call_s, self.stats, self.progress = call_s, stats, progress
        self._role_index = "ABC".index(role) if role in "ABC" else -1

    def __call__(self, obs: Mapping[str, Any]) -> Any:
        self.progress[1] = self._role_index
        kwargs = {k: _frozen(v) for k, v in self.signature.to_kwargs(obs).items()}
        value = _guarded_call(self.function, (), kwargs, self.call_s)
        self.stats.add(self.role)
        return _plain(value)


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
    code = cache[key]
    if isinstance(code, ProgramError):
        raise InvalidReturn(code.reason, str(code))
    return _guarded_call(load_function, (code, signature), {}, call_s)


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
        conn.send(("result", index, result))
    # Validated programs cannot assign attributes, so this is a backstop: checked once
    # per job; the parent voids the whole job and replaces the worker if it trips.
    tampered = guard.tampered()
    conn.send(("done", {"calls": stats.calls}, tampered))
    return tampered


def _worker_main(conn: Any, memory_mb: int, progress: Any) -> None:
    _prepare_worker(memory_mb)
    guard = _ModuleGuard()
    trees: dict = {}
    conn.send(("ready", os.getpid()))
    while True:
        try:
            message = conn.recv()
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
    """``python -c`` entry of a worker: ``argv = [read_fd, write_fd, progress_path, memory_mb]``."""
    read_fd, write_fd, progress_path, memory_mb = sys.argv[1:5]
    conn = Connection(int(read_fd), writable=False)
    out = Connection(int(write_fd), readable=False)
    with open(progress_path, "r+b") as f:
        shared = mmap.mmap(f.fileno(), _PROGRESS_BYTES)
    progress = np.frombuffer(shared, dtype=np.int32, count=2)
    _worker_main(_Duplex(conn, out), int(memory_mb), progress)


class _Duplex:
    """Two one-way pipe ends as one connection (``send`` out, ``recv``/``poll`` in)."""

    def __init__(self, incoming: Connection, outgoing: Connection):
        self.incoming, self.outgoing = incoming, outgoing

    def send(self, obj: Any) -> None:
        self.outgoing.send(obj)

    def recv(self) -> Any:
        return self.incoming.recv()

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


def _worker_env() -> dict[str, str]:
    env = dict(os.environ)
    # The worker imports exactly what this process imports, and runs BLAS single-threaded
    # (threads would share the memory cap and fight the pool for cores).
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = "1"
    env["JAX_PLATFORMS"] = "cpu"
    # A fresh process starts with glibc's dynamic mmap threshold at 128 KiB, so every
    # large temporary array is mmapped and unmapped (page faults on each allocation):
    # SHDS rollouts ran ~1.8x slower in a new worker than in a warmed-up process.
    env.setdefault("MALLOC_MMAP_THRESHOLD_", str(32 * 2**20))
    env.setdefault("MALLOC_TRIM_THRESHOLD_", str(64 * 2**20))
    return env


class SandboxWorker:
    """One sandbox process and its pipes; started on first use, replaced after a crash or kill.

    The worker is a fresh interpreter (``subprocess`` in a new session), not a
    ``multiprocessing`` child: it never re-imports the caller's ``__main__`` and never
    inherits the caller's threads.

    Attributes
    ----------
    restarts:
        How many times the process was replaced (kills and crashes).
    """

    def __init__(self, memory_mb: int = 1024, start_timeout_s: float = 120.0):
        self.memory_mb = memory_mb
        self.start_timeout_s = start_timeout_s
        self.restarts = 0
        self._process: subprocess.Popen | None = None
        self._conn: _Duplex | None = None
        progress_file = tempfile.NamedTemporaryFile(prefix="relic-sandbox-", delete=False)  # noqa: SIM115
        progress_file.write(bytes(_PROGRESS_BYTES))
        progress_file.close()
        self._progress_path = progress_file.name
        with open(self._progress_path, "r+b") as f:
            self._shared = mmap.mmap(f.fileno(), _PROGRESS_BYTES)
        self._progress = np.frombuffer(self._shared, dtype=np.int32, count=2)

    # -- lifecycle ---------------------------------------------------------------
    def _start(self) -> None:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        self._progress[:] = -1
        self._process = subprocess.Popen(
            [sys.executable, "-c", _WORKER_CODE, str(to_child_r), str(from_child_w), self._progress_path, str(self.memory_mb)],
            pass_fds=(to_child_r, from_child_w),
            start_new_session=True,  # own session and process group
            stdin=subprocess.DEVNULL,
            env=_worker_env(),
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._conn = _Duplex(Connection(from_child_r, writable=False), Connection(to_child_w, readable=False))
        try:
            ready = self._conn.poll(self.start_timeout_s)
            message = self._conn.recv() if ready else None
        except (EOFError, OSError):
            message = None
        if not (isinstance(message, tuple) and message[0] == "ready"):
            code = self._process.poll()
            self.kill()
            raise RuntimeError(
                f"sandbox worker did not start within {self.start_timeout_s} s (exit status {code}); "
                f"check that `{sys.executable} -c 'import relic_learner.sandbox'` works"
            )

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def kill(self) -> None:
        """Kill the worker's whole process group and reap it."""
        if self._process is None:
            return
        try:
            os.killpg(self._process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if self._conn is not None:
            self._conn.close()
        self._exitcode = self._process.returncode
        self._process = self._conn = None

    def close(self) -> None:
        """Stop the worker and release its files."""
        if self.alive:
            try:
                self._conn.send(None)
                self._process.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()
        if self._progress_path:
            try:
                os.unlink(self._progress_path)
            except FileNotFoundError:
                pass
            self._progress_path = ""

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
        deadline = time.monotonic() + wall_s
        results: list[RolloutResult | None] = [None] * len(job.instances)
        stats: dict = {}
        start = 0
        while start < len(job.instances):
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
                remaining = deadline - time.monotonic()
                try:
                    ready = remaining > 0 and self._conn.poll(remaining)
                    message = self._conn.recv() if ready else None
                except (EOFError, OSError):
                    message = "crashed"
                if message is None:  # wall limit: nothing more runs in this job
                    role, current = self._culprit(), start + max(self._index(), 0)
                    self._replace()
                    for i in range(start, len(results)):
                        if results[i] is None:
                            detail = "evaluation wall limit exceeded" if i == current else "not run: wall limit reached"
                            results[i] = RolloutResult(None, None, 0, Invalid(role, "timeout", detail))
                    return list(results), stats
                if message == "crashed":
                    role, current = self._culprit(), start + max(self._index(), 0)
                    self.kill()
                    self.restarts += 1
                    results[current] = RolloutResult(None, None, 0, Invalid(role, *self._death()))
                    start = current + 1
                    break
                if message[0] == "result":
                    results[start + message[1]] = message[2]
                    continue
                _, stats, tampered = message  # "done"
                if tampered:  # numpy/math were changed under the programs: nothing here is trusted
                    self._replace()
                    for i in range(start, len(results)):
                        results[i] = RolloutResult(None, None, 0, Invalid("?", "mutation", "a program modified the numpy/math module"))
                return list(results), stats
        return list(results), stats

    def _index(self) -> int:
        return int(self._progress[0])

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
