"""A role worker: the only process that runs a role's program text (untrusted side).

One jail (:mod:`relic_learner.jail`) serves one role of one benchmark, so it never
holds a teammate's source. In it, a **zygote** (trusted: it never reads a program)
imports what a worker needs and measures the layers the jail holds; then, for every
job, the referee asks it over a control socket for a fresh **child**: the zygote kills
and reaps the previous child, forks a new one and hands it a new pair of pipes the
referee made. The child sets its hard rlimits and seccomp filter, says which held,
and only then reads its program. From that moment it is assumed compromised: whatever
it says is advisory and checked by the referee (:mod:`relic_learner.channel`), it never
sees the simulator or the score, and, since every job gets a fresh child on fresh
pipes, nothing it does outlives its job (a program that took over its process cannot
play the next program's part). The child cannot reach the control socket (closed
before its filter goes on), signal the zygote, or read its memory (not dumpable).

Inside, the Python-level guards of earlier versions stay as a first layer (cheap, and
they give clear reasons): a per-call alarm (a call in which it fired is a timeout,
whatever the program caught), an audit hook refusing file, process, socket and import
events while program code runs, read-only fresh inputs, plain-data returns, and a
check that numpy/math were not changed. Nothing trusted depends on them.

Control (referee <-> zygote, JSON on a Unix socket): ``"fork"`` with two pipe ends
(``SCM_RIGHTS``) -> ``{"forked": previous child's exit status}``, or ``{"altered": [what]}``
when the zygote's own state (:func:`relic_learner.jail.process_state`) is not what it was
at start, after which it exits; ``"reap"`` -> ``{"status": exit status}``. Data (referee <-> child, frames of
:mod:`relic_learner.channel`): the child's ``{"child": {"seccomp": .., "rlimits": ..}}``
first, then per referee pickle ``("load", program, slots, call_s, inject)`` (``program``: the
module's code, checked and compiled by the referee, :func:`relic_learner.sandbox.compiled_program`) or
``("act", [(slot, kwargs), ...])`` one :func:`~relic_learner.channel.encode_reply`.
"""

from __future__ import annotations

import ctypes
import gc
import json
import marshal
import math
import os
import pickle
import resource
import signal
import socket
import sys
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from relic_envs.core.program import load_named
from relic_envs.errors import InvalidReturn
from relic_learner import channel, fixed_clock, jail


class _CallTimeout(BaseException):
    """Raised by SIGALRM inside a program call; BaseException so ``except Exception`` misses it."""


class _Blocked(BaseException):
    """Raised by the audit hook when program code reaches for the outside world."""


_IN_PROGRAM = False  # True only while untrusted code runs in this worker
_ALARM_FIRED = False  # set by the alarm: the call is a timeout whatever the program caught
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
_TRUSTED_CODE: set = set()  # module code objects compiled by the referee from checked trees


def _audit(event: str, args: tuple) -> None:
    if not _IN_PROGRAM:
        return
    if event == "exec" and args and args[0] in _TRUSTED_CODE:
        return
    if event == "open" or event in _BLOCKED_EVENTS or event.startswith(_BLOCKED_PREFIXES):
        raise _Blocked(f"{event} is not allowed in a role program")


def _on_alarm(signum: int, frame: Any) -> None:
    global _ALARM_FIRED
    if _IN_PROGRAM:
        _ALARM_FIRED = True
        raise _CallTimeout()


class _ModuleGuard:
    """Detects and undoes changes a program made to the shared numpy/math modules.

    Checked once per message, so it must be cheap: keys and values compared as lists, in
    C, instead of a Python loop over ~1,000 names (about 110 us -> 30 us a message in a
    jailed child; a CO job sends ~1,000 messages).
    """

    def __init__(self) -> None:
        self._modules = [np, math, np.linalg, np.fft, np.ma, np.polynomial, np.lib]
        self._snapshots = [dict(vars(m)) for m in self._modules]
        self._keys = [list(s) for s in self._snapshots]
        self._values = [list(s.values()) for s in self._snapshots]

    def _changed(self, module: Any, keys: list, values: list) -> bool:
        current = vars(module)
        if len(current) != len(keys) or list(current) != keys:
            return True
        # List equality tests identity first, in C; only a replaced value reaches an ``==``.
        # Programs cannot define classes, so no value of theirs answers ``==`` falsely; an
        # array's ambiguous answer raises, and any doubt counts as a change.
        try:
            return list(current.values()) != values
        except BaseException:  # noqa: BLE001
            return True

    def tampered(self) -> bool:
        changed = False
        for module, snapshot, keys, values in zip(self._modules, self._snapshots, self._keys, self._values):
            if self._changed(module, keys, values):
                current = vars(module)
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


_PASS_THROUGH = frozenset({int, float, bool, str, tuple, type(None), np.float64, np.int64})


def _frozen(value: Any) -> Any:
    """A fresh input made read-only: arrays flagged read-only, lists and dicts that refuse changes.

    Inputs are fresh copies anyway (unpickled for this call), so a change could not
    reach the simulator; refusing it makes the attempt visible (reason ``mutation``).
    """
    if isinstance(value, np.ndarray):
        value.setflags(write=False)
        return value
    kind = type(value)
    if kind is dict:
        return _ReadOnlyDict((k, v if type(v) in _PASS_THROUGH else _frozen(v)) for k, v in value.items())
    if kind is list:
        return _ReadOnlyList(v if type(v) in _PASS_THROUGH else _frozen(v) for v in value)
    return value


_NUMPY_ERRORS = np.geterr()  # numpy's defaults, restored for every call
MAX_MESSAGE_CHARS = 500  # of a program's exception message, in a failure detail


def _describe(exc: BaseException) -> tuple[str, str]:
    """The reason and detail of an exception raised under the guard (runs under the guard too)."""
    if _ALARM_FIRED or isinstance(exc, _CallTimeout):
        return "timeout", "the call exceeded its time limit"
    if isinstance(exc, _Blocked):
        return "forbidden", str(exc)
    if isinstance(exc, channel.Unsendable):
        return "type", str(exc)
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
    (turning the return value into its wire form) and describing a failure. A call in
    which the alarm fired is a timeout even if the program caught the alarm and returned
    (otherwise the alarm is a clock a program can read).
    """
    global _IN_PROGRAM, _ALARM_FIRED
    failure = None
    _ALARM_FIRED = False
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, call_s, 0.05)  # re-fires until cleared
            _IN_PROGRAM = True
            try:
                value = function(*args, **kwargs)
                if finish is not None:
                    value = finish(value)
            except BaseException as exc:  # noqa: BLE001 - SystemExit/KeyboardInterrupt from programs too
                value = None
                failure = _describe(exc)
        finally:
            _IN_PROGRAM = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    except BaseException as exc:  # noqa: BLE001 - the alarm fired in our own code at the end of the call
        if failure is None:
            failure = _describe(exc if isinstance(exc, _CallTimeout | MemoryError) else _CallTimeout())
    if failure is None and _ALARM_FIRED:
        failure = ("timeout", "the call exceeded its time limit (the program caught the alarm)")
    if failure is not None:
        raise InvalidReturn(*failure)
    return value


class _Worker:
    """The worker's state: its role's function name, and the programs loaded per instance slot."""

    def __init__(self, in_fd: int, out_fd: int, function: str):
        self.in_fd, self.out_fd, self.function = in_fd, out_fd, function
        self.functions: dict[int, Any] = {}
        self.shared: dict[int, np.ndarray] = {}  # arrays the referee sent once (channel.ShareTable)
        self.call_s = 1.0
        self.guard = _GUARD if _GUARD is not None else _ModuleGuard()

    def load(self, program: bytes, slots: list[int], call_s: float, inject: str | None, perturb: int = 0) -> list[Any]:
        """``program``: the referee's :func:`~relic_learner.sandbox.compiled_program` (trusted).

        ``perturb`` > 0: before the program runs, this child's memory layout is shifted on
        purpose (objects of every small size class, and mapped pages, held for the job),
        so that anything a program computes from an address comes out different.
        """
        self.call_s = call_s
        if perturb:
            self.ballast = [bytearray(k % 509) for k in range(512 + 37 * perturb)]
            self.ballast.append(bytearray(4096 * (1 + perturb % 61)))
        self.functions.clear()
        _TRUSTED_CODE.clear()
        if inject is not None:  # test-only: reachable from the referee's Job, never from program text
            report = _run_injection(inject, self)
            if report is not None:
                return [["fail", "exception", f"injected: {report}"[:channel.MAX_DETAIL_CHARS]]]
        code = marshal.loads(program)
        _TRUSTED_CODE.add(code)
        try:
            for slot in slots:  # afresh per instance: no state leaks between instances
                self.functions[slot] = _guarded_call(load_named, (code, self.function), {}, call_s)
        except InvalidReturn as exc:
            self.functions.clear()
            return [["fail", exc.reason, f"while loading: {exc}"]]
        return [["ok", None]]

    def act(self, requests: list[tuple[int, Mapping[str, Any]]]) -> list[Any]:
        answers = []
        for slot, kwargs in requests:
            function = self.functions.get(slot)
            if function is None:
                answers.append(["fail", "exception", "no program loaded for this instance"])
                continue
            np.seterr(**_NUMPY_ERRORS)
            inputs = {k: _frozen(v) for k, v in channel.expand(kwargs, self.shared).items()}
            try:
                answers.append(["ok", _guarded_call(function, (), inputs, self.call_s, finish=channel.encode_value)])
            except InvalidReturn as exc:
                answers.append(["fail", exc.reason, str(exc).removeprefix(f"{exc.reason}: ")])
        if self.guard.tampered():  # a backstop: validated programs cannot assign attributes
            answers = [["fail", "mutation", "a program modified the numpy/math module"] for _ in requests]
        return answers


def _run_injection(code: str, worker: _Worker) -> str | None:
    """Test-only: arbitrary Python with the real builtins, after every layer is in place."""
    scope = {"__builtins__": __builtins__, "worker": worker, "report": None,
             "in_fd": worker.in_fd, "out_fd": worker.out_fd}
    try:
        exec(compile(code, "<injected>", "exec"), scope)  # noqa: S102 - the point of the test hook
    except BaseException as exc:  # noqa: BLE001 - the injection's own failure is its report
        return f"raised {type(exc).__name__}: {exc}"
    report = scope.get("report")
    return None if report is None else str(report)


_SECCOMP: jail.CompiledFilter | None = None  # the child's part of the filter, compiled by the zygote; each child loads it
_ZYGOTE_SECCOMP = False  # the zygote's part of the filter holds in the zygote (so in every child it forks)
_GUARD: _ModuleGuard | None = None  # the zygote's snapshot of numpy/math, inherited by each child


def _address_space() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * resource.getpagesize()
    except OSError:
        return 0


def _prepare(parent_ns: dict[str, int]) -> dict:
    """The zygote's set-up: imports, silence, and the layers the jail holds (measured, not assumed).

    Whatever every child would otherwise build for itself (the seccomp filter, the numpy
    snapshot) is built here once: a child then inherits it instead of paying for it in
    copy-on-write page faults at every job. The zygote loads every rule of the filter
    but those on its own work (fork, kill) and compiles those, which each child loads.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the worker
    sys.stderr = sys.stdout
    warnings.simplefilter("ignore")
    import numpy.fft  # noqa: F401 - numpy loads these lazily; load them while imports are allowed
    import numpy.linalg  # noqa: F401
    import numpy.ma  # noqa: F401
    import numpy.polynomial  # noqa: F401

    fixed_clock.stop()  # numpy's "now" and "today" answer 1970-01-01 in every child (issue 54)

    global _SECCOMP, _GUARD, _ZYGOTE_SECCOMP
    _SECCOMP = jail.CompiledFilter.build("child")
    _GUARD = _ModuleGuard()
    jail.no_new_privileges()
    layers = jail.measure(parent_ns)
    if sys.platform.startswith("linux"):  # PR_SET_DUMPABLE 0: a child cannot open the zygote's memory
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
    return layers


def _child(in_fd: int, out_fd: int, function: str, memory_bytes: int) -> None:
    """A fresh worker for one job: limits and filter first, then the referee's messages until EOF."""
    held = {"rlimits": jail.apply_rlimits(memory_bytes)}
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file write fails with EFBIG instead
    held["seccomp"] = _ZYGOTE_SECCOMP and _SECCOMP is not None and _SECCOMP.load()
    sys.addaudithook(_audit)
    channel.write_frame(out_fd, json.dumps({"child": held}).encode())
    worker = _Worker(in_fd, out_fd, function)
    while True:
        try:
            message = pickle.loads(channel.read_frame(in_fd, 1 << 31))  # from the referee, which the child trusts
        except (EOFError, OSError, channel.ChannelError):
            return
        if message[0] == "load":
            answers = worker.load(*message[1:])
        else:
            answers = worker.act(message[1])
        channel.write_frame(out_fd, channel.encode_reply(answers))


class _Template:
    """The zygote's handle on its **template**: the process every child is forked from.

    Issue 54: scores repeat by construction, so each child must start from the same
    memory, byte for byte, whatever job it is. The zygote's own loop cannot give that
    (it decodes commands, reads its state and answers in JSON, and its allocator's free
    lists come out a little different after every job: an object's address moved by
    16 bytes a job). The template is forked once, right after the zygote's set-up, and
    then does only this, over two pipes and a socket: read one byte, fork, wait for that
    child, write its status. Nothing it allocates lives across a fork, so after one
    warm-up round (its first status write is the only thing a first child would not
    share) every child starts from the same state. The child itself receives its job's
    pipes and reports its pid over the socket, before it reads any program.
    """

    def __init__(self, control: socket.socket, pair: tuple[socket.socket, socket.socket], function: str,
                 memory_bytes: int):
        """``pair``: a socket pair made before the zygote's filter went on (it refuses sockets)."""
        go_r, self._go = os.pipe()
        self._status, status_w = os.pipe()
        self._socket, theirs = pair
        pid = os.fork()
        if pid == 0:
            try:
                control.close()
                os.close(self._go)
                os.close(self._status)
                self._socket.close()
                _template_loop(go_r, status_w, theirs, function, memory_bytes)
            finally:
                os._exit(0)
        os.close(go_r)
        os.close(status_w)
        theirs.close()
        self._socket.settimeout(30.0)  # a child's first act; a template that is not answering is replaced
        self.pid = pid
        self.child: int | None = None
        self.warm_up()

    def warm_up(self) -> None:
        """One round with a job that ends at once: after it, every fork starts from the same state."""
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        self.fork((to_child_r, from_child_w))
        for fd in (to_child_r, from_child_w, to_child_w):  # the child reads EOF and exits
            os.close(fd)
        self.reap()
        os.close(from_child_r)

    def fork(self, fds: tuple[int, int] | list[int]) -> None:
        """Start the next child; it reports its pid itself, read when it is next needed (off the fork's path)."""
        os.write(self._go, b"f")
        socket.send_fds(self._socket, [b"p"], list(fds))
        self.child = -1  # forked, pid not read yet

    def reap(self) -> int | None:
        """Kill (if still running) the current child; its exit status, as its parent (the template) saw it."""
        if self.child is None:
            return None
        if self.child == -1:
            self.child = int.from_bytes(_read_exact(self._socket, 4), "big")
        try:
            os.kill(self.child, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.child = None
        status = b""
        while len(status) < 4:
            chunk = os.read(self._status, 4 - len(status))
            if not chunk:
                raise EOFError("the template is gone")
            status += chunk
        return int.from_bytes(status, "big", signed=True)


def _read_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError("the template's child is gone")
        data += chunk
    return data


def _template_loop(go: int, status: int, sock: socket.socket, function: str, memory_bytes: int) -> None:
    """The template's whole life: nothing it allocates outlives a round (see :class:`_Template`)."""
    while os.read(go, 1):
        if os.fork() == 0:
            try:
                os.close(go)
                os.close(status)
                _, fds, _, _ = socket.recv_fds(sock, 16, 2)
                sock.sendall(os.getpid().to_bytes(4, "big"))
                sock.close()  # before any program: the child keeps only its job's two pipes
                if len(fds) == 2:
                    _child(fds[0], fds[1], function, memory_bytes)
            finally:
                os._exit(0)
        os.write(status, os.waitstatus_to_exitcode(os.waitpid(-1, 0)[1]).to_bytes(4, "big", signed=True))


def main() -> None:
    """``python -c`` entry of the zygote: ``argv = [control_fd, function, memory_mb, parent_ns]``
    (``function``: the role's function name, the one thing of its benchmark it needs)."""
    control = socket.socket(fileno=int(sys.argv[1]))
    function, memory_mb = sys.argv[2], int(sys.argv[3])
    layers = _prepare(json.loads(sys.argv[4]))
    memory_bytes = _address_space() + memory_mb * 2**20
    # Everything the zygote holds moves to the collector's permanent generation: a child's
    # collections then never walk (and so never copy-on-write) the inherited heap.
    gc.collect()
    gc.freeze()
    pair = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    # After measure (its write probe must meet the read-only mounts, not the filter) and
    # before the template: it, and so every child, holds this part of the filter.
    global _ZYGOTE_SECCOMP
    _ZYGOTE_SECCOMP = jail.apply_seccomp(jail.build_seccomp("zygote"))
    template = _Template(control, pair, function, memory_bytes)
    # What a job must not change about this process or the template (issue 54): read now,
    # compared before each fork.
    baseline = jail.process_state()
    template_baseline = jail.other_process_state(template.pid)
    control.sendall(json.dumps({"ready": layers}).encode() + b"\n")
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(control, 256, 2)
        except OSError:
            break
        if not data:
            break
        command = data.decode(errors="replace").strip()
        try:
            if command == "fork" and len(fds) == 2:
                previous = template.reap()
                altered = jail.changed(baseline, jail.process_state(frozenset(fds)))
                altered += [f"template {k}" for k in jail.changed(template_baseline, jail.other_process_state(template.pid))]
                if altered:  # an earlier job reached this process: the referee starts a new jail
                    control.sendall(json.dumps({"altered": altered}).encode() + b"\n")
                    break
                template.fork(fds)
                reply = {"forked": previous}
            else:
                reply = {"status": template.reap()}
        except (OSError, EOFError):  # the template or its child stopped answering: no fork reply, replaced
            break
        finally:
            for fd in fds:
                os.close(fd)
        control.sendall(json.dumps(reply).encode() + b"\n")
    try:
        template.reap()
    except (OSError, EOFError):
        pass
