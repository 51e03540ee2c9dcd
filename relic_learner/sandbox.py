"""Sandboxed evaluation of untrusted role programs (Appendix C.2, C.5; DESIGN §9).

Threat model (docs/learner.md): a program may run arbitrary native code in the process
that runs it. So the process that runs it never computes a score:

* A **referee** (:class:`SandboxWorker`, one per pool slot: trusted code only) holds the
  simulator. It plays every instance of a job in lockstep
  (:func:`relic_envs.core.rollout.play_requests`): each step it sends each role's worker
  the observations of every instance where that role acts, in one message, and reads
  back one action per instance through :mod:`relic_learner.channel` (fixed layout,
  bounded, numbers only; anything else is that role's ``protocol`` failure). The
  objective and every validity check run in the referee, on its own episode state.
* A **role worker** (:mod:`relic_learner.role_worker`) per role runs that role's program
  and nothing else, so it never holds a teammate's source. It runs in the jail of
  :mod:`relic_learner.jail` (bubblewrap namespaces, a minimal read-only file system, no
  capabilities, a seccomp filter, hard rlimits), set up before its first program. The
  referee enforces a deadline on every message (the per-call limit times the calls,
  plus a second); a worker that misses it, crashes or sends garbage is killed with its
  namespace and replaced, and the requests it held are that role's failure.
* Where the kernel refuses a layer, untrusted code is not run unless the caller
  accepts reduced isolation (``Limits(isolation="reduced")``); the layers that held are
  reported with every evaluation (:attr:`SandboxWorker.isolation`).

The orchestrator talks to referees with pickled jobs and fixed-shape JSON results
(the referee is trusted, but it is a separate process: nothing it sends is unpickled).
The orchestrator enforces a wall limit per job and replaces a referee that misses it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import marshal
import mmap
import os
import pickle
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from relic_envs.core.benchmark import Invalid
from relic_envs.core.declared import copy_observation
from relic_envs.core.instance import Instance
from relic_envs.core.program import check_source
from relic_envs.core.registry import get_benchmark
from relic_envs.core.rollout import RolloutResult, _ask, play_requests
from relic_envs.errors import InvalidReturn, ProgramError
from relic_learner import channel, jail
from relic_learner.jail import LAYERS, IsolationUnavailable

ISOLATION_KEYS = LAYERS  # what SandboxWorker.isolation reports (docs/learner.md lists each layer)

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
        referee; ``None`` means ``30 s + 5 s`` per instance (a backstop; each role
        worker's messages have their own deadlines).
    isolation:
        ``"full"`` (default): a program runs only where every layer of
        :data:`ISOLATION_KEYS` holds, else :class:`~relic_learner.jail.IsolationUnavailable`
        is raised. ``"reduced"``: run with what the kernel allows (the caller accepted it).
    """

    call_s: float
    memory_mb: int = 1024
    wall_s: float | None = None
    isolation: str = "full"

    def __post_init__(self) -> None:
        if not (isinstance(self.call_s, int | float) and 0 < self.call_s <= 600):
            raise ValueError(f"call_s must be a number in (0, 600] seconds, got {self.call_s!r}")
        if not (isinstance(self.memory_mb, int) and 16 <= self.memory_mb <= 1 << 20):
            raise ValueError(f"memory_mb must be an int in [16, 1048576], got {self.memory_mb!r}")
        if self.wall_s is not None and not (isinstance(self.wall_s, int | float) and self.wall_s > 0):
            raise ValueError(f"wall_s must be a positive number or None, got {self.wall_s!r}")
        if self.isolation not in ("full", "reduced"):
            raise ValueError(f"isolation must be 'full' or 'reduced', got {self.isolation!r}")

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
    memory_mb: int = 1024
    isolation: str = "full"
    # Test-only: per role, Python run with the real builtins inside that role's worker
    # after every layer is in place (tests/learner/test_sandbox_attacks.py). Set only by
    # code that builds a Job; program text never reaches it.
    inject: Mapping[str, str] | None = None
    # Non-zero: each child shifts its own memory layout by this much before it loads its
    # program (the determinism check of relic_learner.evaluate); 0, the usual layout.
    perturb: int = 0



# ----------------------------------------------------------------------------------
# The referee's side: role workers, and the lockstep play. Trusted code only.
# ----------------------------------------------------------------------------------

_ROLE_CODE = "from relic_learner.role_worker import main; main()"
START_TIMEOUT_S = 120.0
# A zygote forks in milliseconds; one that has not answered in this long is stopped,
# stalled or changed (issue 54) and is replaced, the fork retried: never the team's failure.
FORK_REPLY_S = 10.0
_FORK_TRIES = 3  # the zygote asked first, then fresh ones
_CHILD_LAYERS = ("seccomp", "rlimits")  # set by each fresh child itself, reported in its first message
# A message's deadline is a backstop for a worker that stopped keeping its own per-call
# alarm (a program that owns its process); an honest worker answers long before it. It
# is generous so that a loaded machine never turns an honest answer into a timeout:
# twice the calls' limits plus a slack (loading: unmarshalling the referee's code once).
_LOAD_SLACK_S = 10.0
_SLACK_S = 5.0


class _Lost(Exception):
    """A role worker that missed its deadline, died or sent a malformed reply (it is killed)."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason, self.detail = reason, detail


def compiled_program(benchmark: str, interface: str, role: str, source: str) -> bytes | ProgramError:
    """Referee side (trusted): the checked module's code, marshalled for a child, or the
    ProgramError that names why not.

    The referee checks and compiles a text once (cached: the search plays the same
    texts on batch after batch) and a child only unmarshals it. Checking in every
    fresh child cost ~1.4 ms and ~310 page faults a role a job
    (``python benchmarks/child_start.py``). A failure of this process's own limits
    (``RecursionError``, ``MemoryError``) is reported but not remembered.
    """
    try:
        return _compiled_program(benchmark, interface, role, source)
    except (RecursionError, MemoryError):
        return ProgramError("syntax", "the program is too deeply nested to compile")
    except Exception as exc:  # noqa: BLE001 - check_source names every failure; never let text stop a referee
        return ProgramError("syntax", f"the program could not be checked ({type(exc).__name__})")


@functools.lru_cache(maxsize=512)
def _compiled_program(benchmark: str, interface: str, role: str, source: str) -> bytes | ProgramError:
    signature = get_benchmark(benchmark).signatures(interface)[role]
    try:
        return marshal.dumps(compile(check_source(source, signature), f"<role {role}>", "exec"))
    except ProgramError as exc:  # the text's verdict: remembered
        return exc


class _RoleProcess:
    """The referee's handle on one role's jail: its zygote (control socket) and the current child (pipes).

    Every job gets a fresh child (:meth:`fresh`): a program that took over its process
    is gone with its job, whatever it did to it.
    """

    def __init__(self, benchmark: str, interface: str, role: str, memory_mb: int, isolation: str):
        self.key = (benchmark, interface, role, memory_mb, isolation)
        self.role, self.isolation = role, isolation
        self.layers: dict[str, bool] = {}
        self.slots: set[int] = set()
        self._process: subprocess.Popen | None = None
        self._control: socket.socket | None = None
        self._in = self._out = -1  # the current child's pipes (our ends)
        self.shares = channel.ShareTable()  # large arrays the current child holds
        self._pending = False  # a fork asked of the zygote whose reply is not read yet
        self._used = False  # the current child was sent a message (a job's child serves that job only)
        self.replaced: list = []  # why each replaced zygote went (what it found altered, or no reply)
        self._start(benchmark, interface, role, memory_mb, isolation)

    # -- the zygote ---------------------------------------------------------------------
    def _start(self, benchmark: str, interface: str, role: str, memory_mb: int, isolation: str) -> None:
        use_bwrap = jail.bwrap_path() is not None
        if not use_bwrap and isolation == "full":
            raise IsolationUnavailable(
                "bubblewrap (bwrap) is not installed, so a role program would run without namespaces; install it "
                "(Debian/Ubuntu: apt install bubblewrap) or accept reduced isolation explicitly "
                "(Limits(isolation='reduced'), relic learn --allow-reduced-isolation)")
        layers = self._spawn(benchmark, interface, role, memory_mb, use_bwrap)
        if layers is None and use_bwrap and isolation == "reduced":  # the kernel refused bwrap: run with what is left
            layers = self._spawn(benchmark, interface, role, memory_mb, False)
        if layers is None:
            self.kill()
            if use_bwrap:
                raise IsolationUnavailable(
                    "the jailed role worker did not start; user namespaces may be disabled on this machine "
                    "(sysctl kernel.unprivileged_userns_clone, or AppArmor's "
                    "kernel.apparmor_restrict_unprivileged_userns). Accept reduced isolation explicitly to run anyway")
            raise RuntimeError(f"the role worker did not start; check that `{sys.executable} -c "
                               "'import relic_learner.role_worker'` works")
        self.layers = layers
        self._require({k: v for k, v in layers.items() if k not in _CHILD_LAYERS})  # the child sets those

    def _spawn(self, benchmark: str, interface: str, role: str, memory_mb: int, use_bwrap: bool) -> dict | None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        function = get_benchmark(benchmark).signatures(interface)[role].function
        args = ["-c", _ROLE_CODE, str(theirs.fileno()), function, str(memory_mb), json.dumps(jail.namespace_ids())]
        command = jail.bwrap_command(args) if use_bwrap else [sys.executable, *args]
        jail.no_address_randomization()  # the zygote's layout, and so every child's, is the same each time
        self._process = subprocess.Popen(command, pass_fds=(theirs.fileno(),), start_new_session=True,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, env=_worker_env())
        theirs.close()
        self._control = ours
        reply = self._ask_zygote(None, START_TIMEOUT_S)
        layers = reply.get("ready") if reply is not None else None
        if type(layers) is not dict or set(layers) != set(LAYERS) or not all(type(v) is bool for v in layers.values()):
            self.kill()
            return None
        return layers

    def _ask_zygote(self, command: str | None, timeout: float, fds: tuple[int, ...] = ()) -> dict | None:
        """Send a control command (with file descriptors) and read the zygote's one-line JSON reply."""
        if command is not None and not self._tell(command, fds):
            return None
        return self._hear(timeout)

    def _tell(self, command: str, fds: tuple[int, ...] = ()) -> bool:
        control = self._control
        if control is None:
            return False
        if self._pending:  # a fork's reply not yet read comes first
            self._pending = False
            if self._hear(FORK_REPLY_S) is None:  # out of step with us: no use for anything else
                self.kill()
                return False
        try:
            control.settimeout(START_TIMEOUT_S)
            socket.send_fds(control, [command.encode()], list(fds))
        except OSError:
            return False
        return True

    def _hear(self, timeout: float) -> dict | None:
        control = self._control
        if control is None:
            return None
        try:
            control.settimeout(timeout)
            line = b""
            while not line.endswith(b"\n"):
                chunk = control.recv(1)  # one reply at a time: never read into the next one
                if not chunk or len(line) > 65536:
                    return None
                line += chunk
            reply = json.loads(line)
        except (OSError, ValueError):
            return None
        return reply if type(reply) is dict else None

    def _require(self, layers: dict[str, bool]) -> None:
        refused = [k for k in LAYERS if k in layers and not layers[k]]
        if refused and self.isolation == "full":
            self.kill()
            raise IsolationUnavailable(
                f"the role worker's isolation is incomplete (refused: {', '.join(refused)}); untrusted programs "
                "are not run unless reduced isolation is accepted explicitly (Limits(isolation='reduced'), "
                "relic learn --allow-reduced-isolation)")

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None and self._control is not None

    # -- the child ------------------------------------------------------------------------
    def spare(self) -> None:
        """Ask the zygote for the next job's child now, without waiting (it starts while the referee works)."""
        if self.alive and not self._pending:
            self._fork_child()

    def _fork_child(self) -> None:
        """The zygote kills and reaps the current child, then forks a new one on a new pair of pipes."""
        self._close_pipes()
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        told = self._tell("fork", (to_child_r, from_child_w))
        os.close(to_child_r)
        os.close(from_child_w)
        self._in, self._out = from_child_r, to_child_w
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        for fd in (self._in, self._out):  # a step's observations fit: the roles' children read side by side
            _widen_pipe(fd)
        self._pending, self._used = told, False
        self.shares = channel.ShareTable()

    def fresh(self) -> None:
        """A new, unused child for a job: the spare if one was asked for, else one forked now.

        A zygote that does not fork within :data:`FORK_REPLY_S`, or reports its own state
        altered by an earlier job, is replaced by a new one and the fork retried: no job
        pays for what an earlier one did to the zygote.
        """
        for _ in range(_FORK_TRIES):
            if not self._pending or self._used:
                self._fork_child()
            reply = self._hear(FORK_REPLY_S) if self._pending else None
            self._pending = False
            if reply is not None and "forked" in reply:
                break
            self.replaced.append(reply.get("altered", "no fork reply") if reply is not None else "no fork reply")
            self.kill()
            self._start(*self.key)
        else:  # fresh zygotes that never ran a program: the machine, not a team
            self.kill()
            raise IsolationUnavailable(f"role {self.role}'s worker could not fork a child "
                                       f"({_FORK_TRIES} zygotes tried: {self.replaced[-_FORK_TRIES:]})")
        try:  # the child's first words come before it reads any program: trusted
            hello = json.loads(channel.read_frame(self._in, 4096, time.monotonic() + START_TIMEOUT_S))
            held = hello["child"]
            assert set(held) == {"seccomp", "rlimits"} and all(type(v) is bool for v in held.values())
        except (OSError, EOFError, ValueError, KeyError, TypeError, AssertionError, channel.ChannelError,
                channel.FrameTimeout):
            self.kill()
            raise _Lost("exception", "a fresh role worker did not start") from None
        self.layers = {**self.layers, **held}
        self._require(held)

    def send(self, message: Any, deadline: float) -> None:
        """Pickle ``message`` to the child; a child that stops reading is cut off at ``deadline``."""
        self._used = True
        try:
            channel.write_frame(self._out, pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL), deadline)
        except (OSError, channel.FrameTimeout):
            pass  # a dead or stalled child: the reply's read reports it

    def receive(self, n_answers: int, deadline: float) -> list[tuple[bool, Any]]:
        """The reply to the last message, checked; :class:`_Lost` (the child reaped) for anything else."""
        try:
            raw = channel.read_frame(self._in, channel.MAX_REPLY_BYTES, deadline)
            return channel.decode_reply(raw, n_answers)
        except channel.FrameTimeout:
            self.reap()
            raise _Lost("timeout", "the role worker did not answer within its time limit") from None
        except (EOFError, OSError):
            raise _Lost(*_death(self.reap())) from None
        except channel.ChannelError as exc:
            self.reap()
            raise _Lost("protocol", f"the role worker sent a malformed reply: {exc}") from None

    def reap(self) -> int | None:
        """Kill and reap the current child (the zygote does it; it is the parent); its exit status."""
        self._close_pipes()
        reply = self._ask_zygote("reap", 10.0)
        if reply is None or "status" not in reply:
            self.kill()  # a zygote that does not answer goes, with everything in its namespace
            return None
        status = reply["status"]
        return status if type(status) is int else None

    def _close_pipes(self) -> None:
        for fd in (self._in, self._out):
            if fd >= 0:
                os.close(fd)
        self._in = self._out = -1
        self.slots = set()

    def kill(self) -> None:
        """SIGKILL the jail's process group (bwrap and, with its namespace, everything in it) and reap it."""
        self._close_pipes()
        if self._control is not None:
            self._control.close()
            self._control = None
        self._pending = False
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
        self._process = None

    def close(self) -> None:
        self.kill()


_PIPE_BYTES = 1 << 20


def _widen_pipe(fd: int) -> None:
    """Grow a pipe's buffer to 1 MiB where Linux allows (``F_SETPIPE_SZ``); the default 64 KiB
    makes the referee wait for each child to read before it can write to the next."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
    except OSError:
        pass


def _death(code: int | None, who: str = "role worker") -> tuple[str, str]:
    """A dead process's failure, from its exit status (a negative code: the signal that ended it).

    Used for a role worker's child (the status its zygote reaped) and for a referee.
    """
    if code is not None and code > 128 and code - 128 in signal.Signals._value2member_map_:
        code = 128 - code  # a shell-style status: the signal's number plus 128
    if code is not None and code < 0:
        name = signal.Signals(-code).name
        if -code == signal.SIGXCPU:
            return "timeout", f"{who} killed by {name}"
        if -code == signal.SIGKILL:
            return "memory", f"{who} killed by SIGKILL (likely the kernel's out-of-memory killer)"
        return "exception", f"{who} crashed with {name}"
    return "exception", f"{who} exited with status {code}"


class _Referee:
    """Plays jobs: the simulator here, each role's program in its own jailed worker."""

    def __init__(self, progress: Any):
        self.progress = progress
        self.workers: dict[str, _RoleProcess] = {}
        self.isolation: dict[str, bool] = {}
        self.lost = 0  # role workers killed (deadline, crash, malformed reply) in the current job

    def _worker(self, job: Job, role: str) -> _RoleProcess:
        key = (job.benchmark, job.interface, role, job.memory_mb, job.isolation)
        worker = self.workers.get(role)
        if worker is None or worker.key != key or not worker.alive:
            if worker is not None:
                worker.kill()
            worker = self.workers[role] = _RoleProcess(*key)
        return worker

    def close(self) -> None:
        for worker in self.workers.values():
            worker.close()

    def spares(self) -> None:
        """Each role's next child, forked now, while the orchestrator reads the results (hides its start)."""
        for worker in self.workers.values():
            worker.spare()

    def _load(self, job: Job, roles: list[str], slots: list[int]) -> dict[str, tuple[str, str] | None]:
        """A fresh child per role, holding its program for ``slots``; per role ``None`` or (reason, detail)."""
        failures: dict[str, tuple[str, str] | None] = {}
        sent = []
        for role in roles:  # the children start side by side
            self._worker(job, role).spare()
        for role in roles:
            program = compiled_program(job.benchmark, job.interface, role, job.sources[role])
            if isinstance(program, ProgramError):  # no child needed: the text never reaches one
                failures[role] = (program.reason, f"while loading: {str(program).removeprefix(f'{program.reason}: ')}")
                continue
            worker = self.workers[role]
            try:
                worker.fresh()
                for name, held in worker.layers.items():
                    self.isolation[name] = self.isolation.get(name, True) and held
            except _Lost as lost:
                self.lost += 1
                failures[role] = (lost.reason, f"while loading: {lost.detail}")
                continue
            # Loading unmarshals the code once and runs the module once per instance (each under the call limit).
            deadline = time.monotonic() + 2 * len(slots) * job.call_s + _LOAD_SLACK_S
            worker.send(("load", program, slots, job.call_s, (job.inject or {}).get(role), job.perturb), deadline)
            sent.append((role, deadline))
        for role, deadline in sent:  # the roles load side by side
            worker = self.workers[role]
            try:
                ((ok, value),) = worker.receive(1, deadline)
                failures[role] = None if ok else (value[0], f"while loading: {value[1]}")
            except _Lost as lost:
                self.lost += 1
                failures[role] = (lost.reason, f"while loading: {lost.detail}")
            if failures[role] is None:
                worker.slots = set(slots)
        return failures

    def play(self, job: Job) -> tuple[list[RolloutResult], dict[str, int]]:
        bench = get_benchmark(job.benchmark)
        signatures = bench.signatures(job.interface)
        programs = [r for r in bench.roles if job.sources.get(r) is not None]
        n = len(job.instances)
        results: list[RolloutResult | None] = [None] * n
        calls = dict.fromkeys(programs, 0)
        failed = self._load(job, programs, list(range(n)))
        for role in programs:  # a program that does not load voids every instance (first role in order wins)
            if failed[role] is not None:
                for k in range(n):
                    if results[k] is None:
                        results[k] = RolloutResult(None, None, 0, Invalid(role, *failed[role]))
        if all(r is not None for r in results):
            return results, calls
        references = {k: {r: bench.reference_policy(r, job.interface) for r in bench.roles if r not in programs}
                      for k in range(n)}
        # Observations uncopied: they are only read here (pickled to the workers), and the
        # referee's table shares an unchanged instance array by identity instead of by digest.
        games = {k: play_requests(bench, job.instances[k], job.interface, copies=False) for k in range(n)}
        asked: dict[int, dict[str, Any]] = {}
        for k, game in games.items():
            self._advance(k, game, None, asked, results)
        while asked:
            answers: dict[int, dict[str, Any]] = {k: {} for k in asked}
            waiting = []
            for role in programs:
                requests = [(k, signatures[role].to_kwargs(obs[role])) for k, obs in asked.items() if role in obs]
                if requests:
                    waiting.append((role, requests, self._send_act(job, role, requests, sorted(asked))))
                    calls[role] += len(requests)
            for k, obs in asked.items():  # fixed reference behaviour: trusted, played here
                for role, observation in obs.items():
                    if role not in programs:
                        answers[k][role] = _ask(references[k][role], copy_observation(observation))
            for role, requests, deadline in waiting:
                self.progress[1] = "ABC".index(role) if role in "ABC" else -1
                for (k, _), answer in zip(requests, self._replies(role, requests, deadline)):
                    answers[k][role] = answer
            self.progress[1] = -1
            for k in list(asked):
                self._advance(k, games[k], answers[k], asked, results)
        return results, calls

    def _send_act(self, job: Job, role: str, requests: list[tuple[int, Any]], live: list[int]) -> float | tuple[str, str]:
        """Send one step's requests to ``role``'s worker (a fresh child holding every ``live`` instance if it was lost).

        Returns the reply's deadline, or the (reason, detail) of a reload that failed.
        """
        worker = self.workers.get(role)
        if worker is None or not worker.alive or not {k for k, _ in requests} <= worker.slots:
            failure = self._reload(job, role, live)
            if failure is not None:
                return failure
            worker = self.workers[role]
        deadline = time.monotonic() + 2 * len(requests) * job.call_s + _SLACK_S
        worker.send(("act", [(k, worker.shares.compact(kwargs)) for k, kwargs in requests]), deadline)
        return deadline

    def _reload(self, job: Job, role: str, slots: list[int]) -> tuple[str, str] | None:
        """A fresh child for ``role`` after a loss, holding the program for the instances still playing."""
        return self._load(job, [role], slots)[role]

    def _replies(self, role: str, requests: list[tuple[int, Any]], deadline: float | tuple[str, str]) -> list[Any]:
        """One answer per request: the decoded action, or an InvalidReturn naming what went wrong."""
        if isinstance(deadline, tuple):
            return [InvalidReturn(*deadline)] * len(requests)
        try:
            replies = self.workers[role].receive(len(requests), deadline)
        except _Lost as lost:
            self.lost += 1
            return [InvalidReturn(lost.reason, lost.detail)] * len(requests)
        return [value if ok else InvalidReturn(*value) for ok, value in replies]

    @staticmethod
    def _advance(k: int, game: Any, answers: dict[str, Any] | None, asked: dict, results: list) -> None:
        try:
            asked[k] = next(game) if answers is None else game.send(answers)
        except StopIteration as stop:
            asked.pop(k, None)
            results[k] = stop.value


# ----------------------------------------------------------------------------------
# The wire format, referee -> orchestrator. Plain JSON of a fixed shape: the referee
# runs no program, but it is another process, and nothing from one is unpickled.
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


def _is_info_leaf(value: Any) -> bool:
    return type(value) in (int, float, bool) or (
        type(value) is list and len(value) <= 16 and all(type(v) in (int, float) for v in value)
    ) or (type(value) is dict and len(value) <= 8 and all(
        type(k) is str and len(k) <= 64 and type(v) in (int, float) for k, v in value.items()))


def _is_info(value: Any) -> bool:
    """An episode's counters (``RolloutResult.info``): a small dict of numbers, short lists and role dicts."""
    return type(value) is dict and len(value) <= 32 and all(
        type(k) is str and len(k) <= 64 and _is_info_leaf(v) for k, v in value.items())


def _plain_info(info: dict) -> dict:
    """``info`` with numpy scalars and arrays as Python numbers and lists (what the schema accepts)."""
    def plain(v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple, np.ndarray)):
            return [plain(x) for x in v]
        if isinstance(v, (bool, np.bool_)):
            return bool(v)
        return int(v) if isinstance(v, (int, np.integer)) else float(v)
    return {str(k): plain(v) for k, v in info.items()}


def _is_calls(value: Any) -> bool:
    return type(value) is dict and all(k in _ROLE_NAMES and _is_int(v) for k, v in value.items())


def _is_isolation(value: Any) -> bool:
    return type(value) is dict and set(value) <= set(ISOLATION_KEYS) and all(type(v) is bool for v in value.values())


_SCHEMA = {
    "ready": {"pid": _is_int},
    "result": {"index": _is_int, "objective": _is_number_or_none, "score": _is_number_or_none, "steps": _is_int, "invalid": _is_invalid,
               "info": _is_info},
    "done": {"calls": _is_calls, "isolation": _is_isolation, "restarts": _is_int},
    "refused": {"detail": lambda v: type(v) is str and len(v) <= MAX_DETAIL_CHARS},
}


class ProtocolError(Exception):
    """A referee's message that is not one of the messages of :data:`_SCHEMA`."""


def _encode(kind: str, **fields: Any) -> bytes:
    return json.dumps({"kind": kind, **fields}, allow_nan=True).encode()


def decode_message(raw: bytes) -> dict[str, Any]:
    """A referee's message, checked against the schema; ``ProtocolError`` for anything else."""
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
        info=_plain_info(result.info),
    )


def _result_of(message: dict[str, Any]) -> RolloutResult:
    invalid = message["invalid"]
    return RolloutResult(message["objective"], message["score"], message["steps"],
                         None if invalid is None else Invalid(*invalid), info=message["info"])


def _referee_main(conn: Any, progress: Any) -> None:
    referee = _Referee(progress)
    conn.send_bytes(_encode("ready", pid=os.getpid()))
    while True:
        try:
            job = conn.recv()  # a pickled Job from the orchestrator, which the referee trusts
        except (EOFError, OSError):
            break  # the orchestrator is gone
        if job is None:
            break
        progress[0], progress[1] = 0, -1
        referee.lost = 0
        try:
            results, calls = referee.play(job)
        except IsolationUnavailable as exc:
            conn.send_bytes(_encode("refused", detail=str(exc)[:MAX_DETAIL_CHARS]))
            continue
        for index, result in enumerate(results):
            conn.send_bytes(_result_message(index, result))
        conn.send_bytes(_encode("done", calls=calls, isolation=referee.isolation, restarts=referee.lost))
        referee.spares()
    referee.close()


def _worker_entry() -> None:
    """``python -c`` entry of a referee: ``argv = [read_fd, write_fd, progress_fd]``."""
    read_fd, write_fd, progress_fd = (int(a) for a in sys.argv[1:4])
    conn = Connection(read_fd, writable=False)
    out = Connection(write_fd, readable=False)
    shared = mmap.mmap(progress_fd, _PROGRESS_BYTES)
    os.close(progress_fd)
    progress = np.frombuffer(shared, dtype=np.int32, count=2)
    _referee_main(_Duplex(conn, out), progress)


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
_WORKER_CODE = "from relic_learner.sandbox import _worker_entry; _worker_entry()"  # a referee
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
    if (library := jail.libseccomp_path()) is not None:
        env["RELIC_LIBSECCOMP"] = library  # a role worker cannot run ldconfig in its jail to find it
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
    """One referee process (and, through it, its jailed role workers): one slot of the pool.

    The referee is a fresh interpreter (``subprocess`` in a new session), not a
    ``multiprocessing`` child: it never re-imports the caller's ``__main__`` and never
    inherits the caller's threads, memory or environment. It starts role workers as a
    job needs them and keeps them for the next job of the same benchmark and role.

    Attributes
    ----------
    restarts:
        How many processes were replaced: the referee (wall-limit kills, crashes) and
        its role workers (missed deadlines, crashes, malformed replies).
    isolation:
        The layers the role workers of the last job held (keys :data:`ISOLATION_KEYS`,
        each ``True`` only if every worker held it); empty before a job ran a program.
    """

    def __init__(self, start_timeout_s: float = 120.0):
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
            [sys.executable, "-c", _WORKER_CODE, str(to_child_r), str(from_child_w), str(self._progress_fd)],
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

    def disown(self) -> None:
        """Forget the referee without touching it (in a forked child: the process is the parent's)."""
        self._process = self._conn = self._reading = None
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
        if not self.alive:
            if self._process is not None:
                self.kill()
            self._start()
        try:
            self._conn.send(job)
        except OSError:
            self._replace()
            self._void(results, 0, "exception", "the referee could not be reached")
            return list(results), stats
        while True:
            message = self._receive(deadline)
            if message is None:  # wall limit: nothing more runs in this job
                role = self._culprit()
                self._replace()
                self._void(results, 0, "timeout", "evaluation wall limit exceeded", role=role)
                return list(results), stats
            if isinstance(message, dict) and message["kind"] == "result":
                index = message["index"]
                if 0 <= index < len(results) and results[index] is None:
                    results[index] = _result_of(message)
                    continue
                message = "malformed message from the referee: a result for an instance not asked for"
            if isinstance(message, str):  # "crashed", or a protocol failure: replace the referee
                role = self._culprit()
                self.kill()
                self.restarts += 1
                failure = self._death() if message == "crashed" else ("protocol", message)
                self._void(results, 0, *failure, role=role)
                return list(results), stats
            if message["kind"] == "refused":
                raise IsolationUnavailable(message["detail"])
            if message["kind"] != "done" or any(r is None for r in results):
                self._replace()  # out of order: void what is left of this job
                self._void(results, 0, "protocol", "the referee's messages came out of order")
                return list(results), stats
            stats = {"calls": message["calls"]}
            self.restarts += message["restarts"]
            if message["isolation"]:
                self.isolation = message["isolation"]
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
            return f"malformed message from the referee ({exc})"  # "bad message length"
        try:
            return decode_message(raw)
        except ProtocolError as exc:
            return f"malformed message from the referee: {exc}"

    @staticmethod
    def _void(results: list, start: int, reason: str, detail: str, role: str = "?") -> None:
        for i in range(start, len(results)):
            if results[i] is None:
                results[i] = RolloutResult(None, None, 0, Invalid(role, reason, detail))

    def _culprit(self) -> str:
        role = int(self._progress[1])
        return "ABC"[role] if 0 <= role < 3 else "?"

    def _death(self) -> tuple[str, str]:
        return _death(self._exitcode, "worker")

    def _replace(self) -> None:
        self.kill()
        self.restarts += 1
