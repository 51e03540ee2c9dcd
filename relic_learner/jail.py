"""The OS layers around a role worker: namespaces, a minimal read-only file system, no
capabilities, a seccomp filter and rlimits (docs/learner.md, "Threat model").

A role worker is assumed to run arbitrary native code once the first program has run,
so nothing here may rely on the worker's good behaviour after that point: every layer
is in place before the worker reads its first program, and none can be undone from
inside.

Two well-kept mechanisms do the work:

- `bubblewrap <https://github.com/containers/bubblewrap>`_ (``bwrap``) starts the worker
  in fresh user, PID, network, IPC and UTS namespaces, as PID 2 under bwrap's own
  init, in a new session, with every capability dropped and ``no_new_privs`` set. Its
  file system holds only what running a program needs (:func:`jail_binds`: the
  interpreter, the standard library, the shared libraries, numpy, and the worker's own
  seven modules), bound read-only; ``/proc`` shows the sandbox's own processes only; ``/dev`` is a
  read-only minimal set. When the parent dies, bwrap's init dies, and with it every
  process of the namespace (orphans included).
- `libseccomp <https://github.com/seccomp/libseccomp>`_, through the ``pyseccomp``
  binding, in two stacked parts: the zygote loads its part after its imports
  (:func:`apply_seccomp`), and each child loads the rest, compiled by the zygote
  (:class:`CompiledFilter`). Together: EPERM for the mount family,
  ``unshare``/``setns``, ``ptrace``/``process_vm_*``, sending any signal,
  ``fork``/``clone``/``execve``, every socket call, opening a file for writing and
  every call that changes the file system.

:func:`layers` tells which layers a worker holds; it is measured by the worker at
start, before any program has run, and compared with the parent's own namespaces by
the referee (:func:`held`). Where a layer is refused (no ``bwrap``, user namespaces
disabled by the kernel, no libseccomp), untrusted code is not run unless the caller
accepted reduced isolation explicitly (``Limits(isolation="reduced")``, ``relic learn
--allow-reduced-isolation``).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import resource
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

from relic_envs.errors import RelicError

# The layers a worker reports, in the order docs/learner.md lists them.
LAYERS = ("user_namespace", "pid_namespace", "network_namespace", "minimal_read_only_filesystem",
          "no_capabilities", "no_new_privileges", "seccomp", "rlimits")
_NAMESPACES = ("user", "pid", "net", "mnt", "ipc")


class IsolationUnavailable(RelicError, RuntimeError):
    """The kernel or the machine refused a layer and reduced isolation was not accepted."""


# -- the parent's side: the command line --------------------------------------------

def bwrap_path() -> str | None:
    return shutil.which("bwrap")


# Where a worker's own modules appear in its file system, and which: the role worker, the
# channel and jail it uses, and the one module of relic_envs that loads a program (with the
# two it imports). Their packages' ``__init__`` files are empty there: a worker never sees
# the rest of either package (no benchmark, no ``relic_envs/data``: the held-out splits and
# the reference caches are the answer key).
JAIL_ROOT = "/relic"
_WORKER_MODULES = ("relic_envs/errors.py", "relic_envs/core/signature.py", "relic_envs/core/program.py",
                   "relic_learner/channel.py", "relic_learner/fixed_clock.py", "relic_learner/jail.py",
                   "relic_learner/role_worker.py")
_WORKER_PACKAGES = ("relic_envs", "relic_envs/core", "relic_learner")
_LIBRARY_DIRS = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib")


def _package_dir(name: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise IsolationUnavailable(f"cannot locate the package {name!r} to bind into the sandbox")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def interpreter() -> Path:
    """The base interpreter (a virtualenv's ``python`` is a link to it, or a copy that reads
    ``pyvenv.cfg``): run directly, it finds its standard library from its own path."""
    return Path(getattr(sys, "_base_executable", None) or sys.executable).resolve()


def _stdlib() -> Path:
    return Path(sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_prefix})["stdlib"]).resolve()


def jail_binds() -> list[tuple[str, str]]:
    """(host path, path in the jail) of everything a worker's file system holds, read-only.

    The interpreter and its shared library, the standard library (its ``site-packages``
    hidden, see :func:`hidden_paths`), the system's shared libraries (libc, libm, libffi,
    libseccomp, ...), numpy with its bundled libraries and pyseccomp under
    :data:`JAIL_ROOT`, and the worker's own modules there. Not the checkout, the
    virtualenv, any home or run directory, nor anything else installed.
    """
    binds = [(str(interpreter()), str(interpreter())), (str(_stdlib()), str(_stdlib()))]
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        library = Path(sysconfig.get_config_var("LIBDIR") or "", sysconfig.get_config_var("LDLIBRARY") or "")
        if library.is_file():  # under its own name and the one the loader asks for (its soname)
            binds += [(str(library.resolve()), str(library)), (str(library.resolve()), str(library.resolve()))]
    for lib in (*library_dirs(), "/etc/ld.so.cache"):
        binds.append((lib, lib))
    numpy_dir = _package_dir("numpy")
    binds.append((str(numpy_dir), f"{JAIL_ROOT}/numpy"))
    if (numpy_dir.parent / "numpy.libs").is_dir():  # a wheel's OpenBLAS and friends ($ORIGIN-relative)
        binds.append((str(numpy_dir.parent / "numpy.libs"), f"{JAIL_ROOT}/numpy.libs"))
    try:
        import pyseccomp

        found = Path(pyseccomp.__file__).resolve()
        source = found.parent if found.name == "__init__.py" else found
        binds.append((str(source), f"{JAIL_ROOT}/{source.name}"))
    except ImportError:
        pass
    here = Path(__file__).resolve().parent.parent  # the directory that holds both packages
    for module in _WORKER_MODULES:
        binds.append((str(here / module), f"{JAIL_ROOT}/{module}"))
    for package in _WORKER_PACKAGES:
        binds.append((os.devnull, f"{JAIL_ROOT}/{package}/__init__.py"))
    return binds


@functools.cache
def library_dirs() -> tuple[str, ...]:
    """The system directories whose shared libraries a worker loads: where this process's
    own libc, libm, libffi... come from, libseccomp's, and the loader's link directory.

    Directories, not each file: the loader finds a library through ``/etc/ld.so.cache``
    under names that are links within these directories. Not the rest of ``/usr/lib``
    (other software's trees live there: ``/usr/lib/google-cloud-sdk``, ``/usr/lib/python3``).
    """
    if (name := libseccomp_path()) is not None:
        try:
            ctypes.CDLL(name)  # so that its directory shows below
        except OSError:
            pass
    dirs = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)  # address, perms, offset, dev, inode[, path]
            path = fields[5].strip() if len(fields) == 6 else ""
            if ".so" in path and path.startswith(tuple(d + "/" for d in _LIBRARY_DIRS)):
                dirs.add(os.path.dirname(path))
    for loader_dir in ("/lib64", "/usr/lib64"):  # the loader's own link (PT_INTERP), on most systems
        if os.path.isdir(loader_dir) and not os.path.islink(loader_dir):
            dirs.add(loader_dir)
    # A directory inside another one on the list is already there.
    return tuple(d for d in sorted(dirs) if not any(d != e and d.startswith(e + "/") for e in dirs))


def hidden_paths() -> list[str]:
    """Directories inside a bound one that a worker must not see: covered by an empty tmpfs.

    Installed packages next to the standard library (``site-packages``, Debian's
    ``dist-packages``), and every other Python's library under the system's library
    directories.
    """
    stdlib = _stdlib()
    hidden = [stdlib / "site-packages", stdlib / "dist-packages"]
    for lib in library_dirs():
        hidden += [p for p in Path(lib).iterdir() if p.name.startswith("python") and p.is_dir() and p.resolve() != stdlib]
    return sorted({str(p) for p in hidden if p.is_dir()})


def bwrap_command(python_args: list[str]) -> list[str]:
    """The ``bwrap`` command line that runs ``python -S python_args...`` in the jail.

    ``-S``: no ``site``, so nothing installed is on the path; ``PYTHONPATH`` is
    :data:`JAIL_ROOT` (set here, whatever the caller's environment says).
    """
    command = [
        bwrap_path() or "bwrap",
        "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--die-with-parent", "--new-session", "--cap-drop", "ALL",
    ]
    for source, target in jail_binds():
        command += ["--ro-bind", source, target]
    for link in ("/lib", "/lib64", "/bin"):  # merged-/usr systems: keep the loader's paths valid
        if os.path.islink(link):
            command += ["--symlink", os.readlink(link), link]
    for path in hidden_paths():
        command += ["--tmpfs", path, "--remount-ro", path]
    command += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/",
                "--setenv", "PYTHONPATH", JAIL_ROOT]
    return [*command, "--", str(interpreter()), "-S", *python_args]


def namespace_ids() -> dict[str, int]:
    """This process's namespace inode numbers (a worker in the same one shares the number)."""
    out = {}
    for name in _NAMESPACES:
        try:
            out[name] = os.stat(f"/proc/self/ns/{name}").st_ino
        except OSError:
            out[name] = -1
    return out


# -- the worker's side: measure, limit, filter --------------------------------------

def _proc_status() -> dict[str, str]:
    try:
        with open("/proc/self/status") as f:
            return dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
    except OSError:
        return {}


def _file_system_read_only() -> bool:
    """True when neither the root nor any bound directory accepts a new file."""
    probes = ["/", sys.prefix, os.path.dirname(os.path.dirname(__file__)), "/dev", "/proc"]
    for directory in probes:
        target = os.path.join(directory, f".relic-jail-probe-{os.getpid()}")
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError:
            continue
        os.close(fd)
        os.unlink(target)
        return False
    return True


def measure(parent_namespaces: dict[str, int]) -> dict[str, bool]:
    """The layers this process holds now (before seccomp and rlimits, which it sets itself)."""
    mine = namespace_ids()
    status = _proc_status()
    caps = [status.get(k, "").strip() for k in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh")]
    return {
        "user_namespace": mine["user"] not in (-1, parent_namespaces.get("user")),
        "pid_namespace": mine["pid"] not in (-1, parent_namespaces.get("pid")) and os.getpid() <= 2,
        "network_namespace": mine["net"] not in (-1, parent_namespaces.get("net")),
        "minimal_read_only_filesystem": mine["mnt"] not in (-1, parent_namespaces.get("mnt"))
        and _file_system_read_only() and not os.path.exists("/etc/passwd"),
        "no_capabilities": bool(caps[0]) and all(c and int(c, 16) == 0 for c in caps),
        "no_new_privileges": status.get("NoNewPrivs", "").strip() == "1",
        "seccomp": False,
        "rlimits": False,
    }


def apply_rlimits(memory_bytes: int) -> bool:
    """Hard limits (a process without capabilities cannot raise them back): memory, files, no cores."""
    try:
        for limit, value in ((resource.RLIMIT_AS, memory_bytes), (resource.RLIMIT_FSIZE, 0),
                             (resource.RLIMIT_CORE, 0), (resource.RLIMIT_NOFILE, 64)):
            soft, hard = resource.getrlimit(limit)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(limit, (value, value))
        return True
    except (ValueError, OSError):
        return False


# -- the zygote's own state: what a job could have changed about the next job's parent --

_IOPRIO_GET = {"x86_64": 252, "aarch64": 31}  # syscall numbers; elsewhere I/O priority is not read
_SYSV_IPC = ("/proc/sysvipc/shm", "/proc/sysvipc/msg", "/proc/sysvipc/sem")


def _descriptor_state(skip: frozenset[int]) -> list[tuple[int, int, int]]:
    """(fd, status flags, owner) of every open descriptor but ``skip``.

    A forked child shares its parent's open file descriptions, so O_ASYNC or an owner set
    on one in the child holds for the zygote too (a signal by I/O needs both; the signal
    ``F_SETSIG`` names is sent only with O_ASYNC set).
    """
    import fcntl

    out = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd in skip:
            continue
        try:
            out.append((fd, fcntl.fcntl(fd, fcntl.F_GETFL), fcntl.fcntl(fd, fcntl.F_GETOWN)))
        except OSError:  # the listing's own descriptor, closed by now
            continue
    return out


def _read(path: str) -> bytes:
    """A small /proc file's bytes (``b""`` if unreadable); raw calls: this runs before every fork."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return b""
    try:
        return os.read(fd, 1 << 16)
    except OSError:
        return b""
    finally:
        os.close(fd)


_RLIMITS = tuple(getattr(resource, n) for n in sorted(dir(resource)) if n.startswith("RLIMIT_"))


@functools.cache
def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def process_state(skip_fds: frozenset[int] = frozenset()) -> dict[str, Any]:
    """What a job could change about the process that forks the next job's child (issue 54).

    Limits, priority, scheduler and affinity, I/O priority, out-of-memory adjustment and
    name, the open descriptors' flags and owners, and the IPC namespace's SysV objects (a
    filter refuses every call that could change these from a child; the zygote compares
    this before each fork all the same, and is replaced when anything differs).
    """
    state: dict[str, Any] = {
        "rlimits": [resource.getrlimit(r) for r in _RLIMITS],
        "priority": os.getpriority(os.PRIO_PROCESS, 0),
        "scheduler": (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority),
        "affinity": sorted(os.sched_getaffinity(0)),
        "fds": _descriptor_state(skip_fds),
        "oom_score_adj": _read("/proc/self/oom_score_adj"), "comm": _read("/proc/self/comm"),
    }
    number = _IOPRIO_GET.get(os.uname().machine)
    if number is not None:
        state["ioprio"] = _libc().syscall(number, 1, 0)
    for path in _SYSV_IPC:  # a header line, then one line per object
        state[path] = _read(path).count(b"\n")
    return state


def other_process_state(pid: int) -> dict[str, Any]:
    """:func:`process_state`'s limits, priority, scheduling, affinity, I/O priority and name
    of another process of this jail (the template a zygote forks children from), read from
    outside it: ``/proc/<pid>`` and the ``get`` calls.

    Read from outside because reading them inside would allocate in the template, whose
    memory must not change between forks (``relic_learner.role_worker``). Not its
    descriptors: those it shares with the zygote are the zygote's own check; the three of
    its own, each child closes before it reads a program.
    """
    state: dict[str, Any] = {
        "limits": _read(f"/proc/{pid}/limits"), "priority": os.getpriority(os.PRIO_PROCESS, pid),
        "scheduler": (os.sched_getscheduler(pid), os.sched_getparam(pid).sched_priority),
        "affinity": sorted(os.sched_getaffinity(pid)),
        "oom_score_adj": _read(f"/proc/{pid}/oom_score_adj"), "comm": _read(f"/proc/{pid}/comm"),
    }
    number = _IOPRIO_GET.get(os.uname().machine)
    if number is not None:
        state["ioprio"] = _libc().syscall(number, 1, pid)
    return state


def changed(before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """The names of what differs between two :func:`process_state` readings."""
    return sorted(k for k in before.keys() | now.keys() if before.get(k) != now.get(k))


# Calls a role worker never needs once it is set up. EPERM rather than a kill, so a
# program that tries one fails as a program (an exception) and the attempt is visible.
_DENIED = (
    # the mount family and namespaces: nothing to remount, nowhere to escape to
    "mount", "umount2", "mount_setattr", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
    "pivot_root", "chroot", "unshare", "setns",
    # other processes' memory and handles
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp", "pidfd_open", "pidfd_getfd",
    "pidfd_send_signal",
    # new processes and programs (threads too: a worker is single-threaded)
    "fork", "vfork", "clone", "execve", "execveat",
    # every socket, path-based Unix sockets included
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
    # changes to the file system (the mounts are read-only already; this says it twice)
    "creat", "truncate", "unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir",
    "link", "linkat", "symlink", "symlinkat", "chmod", "fchmod", "fchmodat", "chown", "fchown", "lchown",
    "fchownat", "mknod", "mknodat", "utime", "utimes", "utimensat", "futimesat", "setxattr", "lsetxattr",
    "fsetxattr", "removexattr", "lremovexattr", "fremovexattr", "fallocate", "name_to_handle_at",
    "open_by_handle_at",
    # the kernel's wider surfaces
    "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "init_module", "finit_module", "delete_module", "kexec_load",
    "kexec_file_load", "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "personality",
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups", "setfsuid", "setfsgid",
    "capset", "tkill",
    # another process's scheduling, memory placement or session (issue 54: a job must not
    # change the zygote, and so every later job): priority and scheduler for any pid (the
    # worker never sets its own), NUMA pages of another pid, process groups and sessions
    "setpriority", "nice", "sched_setscheduler", "sched_setparam", "sched_setattr", "sched_setaffinity",
    "ioprio_set", "migrate_pages", "move_pages", "process_mrelease", "setpgid", "setsid",
    # SysV and POSIX IPC: objects that outlive the process that made them (and hold memory
    # no rlimit of the child counts)
    "ipc", "shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl",
    "semget", "semop", "semtimedop", "semctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive",
    "mq_notify", "mq_getsetattr",
    # notifications of the file system (fanotify needs capabilities; refused, whatever)
    "fanotify_init", "fanotify_mark",
)
# Signals by I/O: a file description's owner gets SIGIO (or any signal F_SETSIG names) when
# it becomes ready, and a description is shared with the zygote across fork. ``fcntl``
# commands (<fcntl.h>): F_SETOWN 8, F_SETSIG 10, F_SETOWN_EX 15, F_SETLEASE 1024,
# F_NOTIFY 1026; F_SETFL 4 with O_ASYNC. ``ioctl`` requests: FIOASYNC, FIOSETOWN, SIOCSPGRP.
_FCNTL_DENIED = (8, 10, 15, 1024, 1026)
_F_SETFL = 4
_IOCTL_DENIED = (0x5452, 0x8901, 0x8902)
_ENOSYS = ("clone3", "openat2")  # glibc falls back to clone / openat, which the rules above judge


def libseccomp_path() -> str | None:
    """Where libseccomp is, found by the parent (``find_library`` runs ``ldconfig``, absent in the jail)."""
    import ctypes.util

    return ctypes.util.find_library("seccomp")


def _import_pyseccomp():
    """``pyseccomp``, pointed at the library the parent found (passed as ``RELIC_LIBSECCOMP``)."""
    import ctypes.util

    known = {"seccomp": os.environ.get("RELIC_LIBSECCOMP"), "c": None}
    find = ctypes.util.find_library
    ctypes.util.find_library = lambda name: known[name] if name in known and known[name] else find(name)
    try:
        import pyseccomp
    finally:
        ctypes.util.find_library = find
    return pyseccomp


# What a zygote itself does for every job (fork the child; kill it afterwards): the
# zygote's filter leaves these open, and the child's own filter, stacked on the
# zygote's (the kernel runs both on every call; the stricter answer wins), refuses them.
# A worker sends no signal at all, to itself neither (the call limit's alarm comes from
# the kernel's timer), so the child's part names no pid and is compiled once.
_PROCESS_CALLS = ("fork", "vfork", "clone", "kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")
_PARTS = ("whole", "zygote", "child")


def build_seccomp(part: str = "whole") -> Any:
    """A filter built but not loaded (:func:`apply_seccomp` loads it); ``None`` if libseccomp is missing.

    ``part``: ``"whole"``, every rule for one process; ``"zygote"``, every rule but
    process creation and signals, loaded by a zygote after its set-up; ``"child"``, those
    only, compiled by the zygote (:class:`CompiledFilter`) and loaded by each child over
    the zygote's part.
    """
    if part not in _PARTS:
        raise ValueError(f"part must be one of {_PARTS}, got {part!r}")
    try:
        sc = _import_pyseccomp()
    except (ImportError, OSError, RuntimeError):
        return None
    try:
        f = sc.SyscallFilter(sc.ALLOW)
        deny = sc.ERRNO(errno.EPERM)
        if part != "zygote":
            for name in _PROCESS_CALLS:
                _rule(f, deny, name)
        if part == "child":
            return f
        for name in _DENIED:
            if name not in _PROCESS_CALLS:
                _rule(f, deny, name)
        for name in _ENOSYS:
            _rule(f, sc.ERRNO(errno.ENOSYS), name)
        # Limits of another process (``prlimit64`` with a pid; the worker's own are pid 0).
        _rule(f, deny, "prlimit64", sc.Arg(0, sc.NE, 0))
        for command in _FCNTL_DENIED:
            _rule(f, deny, "fcntl", sc.Arg(1, sc.EQ, command))
        _rule(f, deny, "fcntl", sc.Arg(1, sc.EQ, _F_SETFL), sc.Arg(2, sc.MASKED_EQ, os.O_ASYNC, os.O_ASYNC))
        for request in _IOCTL_DENIED:
            _rule(f, deny, "ioctl", sc.Arg(1, sc.EQ, request))
        # Opening a file for writing, creating or truncating one: refused, whatever the path.
        for name, arg in (("open", 1), ("openat", 2)):
            for mask, value in ((os.O_ACCMODE, os.O_WRONLY), (os.O_ACCMODE, os.O_RDWR),
                                (os.O_CREAT, os.O_CREAT), (os.O_TRUNC, os.O_TRUNC)):
                _rule(f, deny, name, sc.Arg(arg, sc.MASKED_EQ, mask, value))
    except OSError:
        return None
    return f


def apply_seccomp(built: Any = None) -> bool:
    """Load a filter into this process (and any it could still make); False if libseccomp is missing.

    ``built`` is :func:`build_seccomp`'s filter; ``None`` builds the whole filter here.
    """
    f = build_seccomp() if built is None else built
    if f is None:
        return False
    try:
        f.load()
    except (OSError, RuntimeError):
        return False
    return _proc_status().get("Seccomp", "").strip() == "2"


class _SockFprog(ctypes.Structure):  # struct sock_fprog of <linux/filter.h>
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, _BPF_INSTRUCTION_BYTES = 22, 2, 8


class CompiledFilter:
    """A filter compiled to BPF once, by libseccomp, and loaded by processes forked after.

    libseccomp generates the program anew at every load, in a fresh child too
    (``python benchmarks/child_start.py`` compares). Compiled in the zygote, a child's
    load is one ``prctl(PR_SET_SECCOMP)`` on memory it inherited. :meth:`build` returns
    ``None`` if libseccomp is missing or cannot export the program.
    """

    def __init__(self, program: bytes):
        if not program or len(program) % _BPF_INSTRUCTION_BYTES:
            raise ValueError(f"a BPF program is a whole number of 8-byte instructions, got {len(program)} bytes")
        self._program = ctypes.create_string_buffer(program, len(program))
        self._fprog = _SockFprog(len(program) // _BPF_INSTRUCTION_BYTES, ctypes.addressof(self._program))
        self._prctl = ctypes.CDLL(None, use_errno=True).prctl

    @classmethod
    def build(cls, part: str) -> CompiledFilter | None:
        built = build_seccomp(part)
        if built is None or not hasattr(os, "memfd_create"):
            return None
        try:
            with os.fdopen(os.memfd_create("relic-seccomp"), "r+b") as out:
                built.export_bpf(out)
                out.seek(0)
                return cls(out.read())
        except (OSError, RuntimeError, ValueError):
            return None

    def load(self) -> bool:
        """Load it into this process (no-new-privileges must hold); True if the kernel took it.

        The kernel's answer is the measurement: ``prctl`` returns 0 only once the filter is
        attached. (Reading ``/proc/self/status`` to see it again cost a fresh child
        ~1 ms and ~325 page faults.)
        """
        return self._prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(self._fprog), 0, 0) == 0


def _rule(f, action, name: str, *args) -> None:
    try:
        f.add_rule(action, name, *args)
    except (ValueError, OSError):  # a call this architecture does not have
        pass


_ADDR_NO_RANDOMIZE = 0x0040000  # <linux/personality.h>


def no_address_randomization() -> bool:
    """Turn address-space randomisation off for the programs this process starts (issue 54).

    A personality flag, inherited across ``execve``: a zygote started after this call,
    and so each child it forks, gets the same layout every time, so a score that depends
    on an address (a ``repr`` that prints one) repeats. Idempotent; False where refused.
    """
    if not sys.platform.startswith("linux"):
        return False
    personality = ctypes.CDLL(None, use_errno=True).personality
    current = personality(0xFFFFFFFF)  # the query form
    if current == -1:
        return False
    return current & _ADDR_NO_RANDOMIZE or personality(current | _ADDR_NO_RANDOMIZE) != -1


def no_new_privileges() -> bool:
    """``prctl(PR_SET_NO_NEW_PRIVS)`` (bwrap sets it too; needed for seccomp without capabilities)."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(38, 1, 0, 0, 0) == 0


def probe() -> dict[str, bool]:
    """Start one jailed interpreter and report which layers it held (``relic doctor``-style check)."""
    import json

    if bwrap_path() is None:
        return dict.fromkeys(LAYERS, False)
    code = ("import json,sys; from relic_learner import jail; jail.no_new_privileges(); "
            "m = jail.measure(json.loads(sys.argv[1])); m['rlimits'] = jail.apply_rlimits(2**34); "
            "m['seccomp'] = jail.apply_seccomp(); print(json.dumps(m))")
    try:
        out = subprocess.run(bwrap_command(["-c", code, json.dumps(namespace_ids())]), capture_output=True,
                             text=True, timeout=60, env={"PATH": os.environ.get("PATH", ""),
                                                         "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
                                                         "RELIC_LIBSECCOMP": libseccomp_path() or ""})
        return {k: bool(v) for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
        return dict.fromkeys(LAYERS, False)


def describe(layers: dict[str, bool]) -> str:
    """One line: which layers hold."""
    refused = [k for k in LAYERS if not layers.get(k)]
    return "every layer holds" if not refused else f"refused: {', '.join(refused)}"


if __name__ == "__main__":  # python -m relic_learner.jail: what this machine gives a role worker
    held = probe()
    for name in LAYERS:
        print(f"{name:<30} {'holds' if held.get(name) else 'REFUSED'}")
    print(f"bwrap: {bwrap_path() or 'not installed'}; libseccomp: {libseccomp_path() or 'not found'}")
