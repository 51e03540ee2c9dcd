"""Issue 54, item 3: nothing a job does outlives it.

A child that runs native code (``Job.inject``, the test-only hook: arbitrary Python with
ctypes, after every layer is in place) tries each route to the zygote that forks the
next job's child, and to state that would outlive the job: another process's limits,
priority, scheduler, affinity and I/O priority, a signal by I/O on a shared file
description, SysV and POSIX IPC. The filter refuses each; independently of the filter,
the zygote compares its own state before each fork and is replaced when anything
changed, and a zygote that stops answering is replaced within a short deadline. In
every case the next honest team is scored exactly as in a fresh pool.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import relic_envs
from relic_envs.seeds import seed_source
from relic_learner import jail, sandbox
from relic_learner.sandbox import Job

pytestmark = pytest.mark.skipif(jail.bwrap_path() is None, reason="bubblewrap (bwrap) is not installed")

SEEDS = {r: seed_source("dgc", r) for r in "ABC"}


@pytest.fixture(scope="module")
def instances():
    return tuple(relic_envs.splits("dgc").test_instances()[:2])


@pytest.fixture(scope="module")
def fresh_scores(instances):
    """The seed team's scores in a pool no hostile job ever touched."""
    referee = sandbox._Referee(np.zeros(2, dtype=np.int32))
    try:
        results, _ = referee.play(_job(instances))
    finally:
        referee.close()
    return [r.objective for r in results]


def _job(instances, inject: dict[str, str] | None = None) -> Job:
    return Job("dgc", "paper", SEEDS, instances, 1.0, 256, "full",
               inject={r: textwrap.dedent(c) for r, c in (inject or {}).items()})


def _report(results) -> str:
    invalid = results[0].invalid
    assert invalid is not None and invalid.detail.startswith("while loading: injected: "), results[0]
    return invalid.detail.removeprefix("while loading: injected: ")


TO_THE_ZYGOTE = """
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
found = {}
zygote = os.getppid()

def attempt(name, call):
    ctypes.set_errno(0)
    try:
        r = call()
    except BaseException as exc:
        found[name] = type(exc).__name__
        return
    found[name] = f"errno {errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno())}" if r == -1 else f"returned {r}"

class Rlimit(ctypes.Structure):
    _fields_ = [("cur", ctypes.c_uint64), ("max", ctypes.c_uint64)]
low = Rlimit(16, 16)
for resource_id, name in ((7, "NOFILE"), (9, "AS"), (6, "NPROC")):
    attempt(f"prlimit64 {name} on the zygote", lambda: libc.prlimit(zygote, resource_id, ctypes.byref(low), None))
attempt("setpriority on the zygote", lambda: libc.setpriority(0, zygote, 19))
attempt("setpriority on itself", lambda: libc.setpriority(0, 0, 19))
param = ctypes.c_int(0)
attempt("sched_setscheduler (SCHED_IDLE)", lambda: libc.sched_setscheduler(zygote, 5, ctypes.byref(param)))
attempt("sched_setparam", lambda: libc.sched_setparam(zygote, ctypes.byref(param)))
mask = ctypes.c_uint64(1)
attempt("sched_setaffinity", lambda: libc.sched_setaffinity(zygote, 8, ctypes.byref(mask)))
attempt("sched_setattr", lambda: libc.syscall(314, zygote, None, 0))
attempt("ioprio_set (idle)", lambda: libc.syscall(251, 1, zygote, 3 << 13))
# a signal by I/O: own the description shared with the zygote, ask for SIGSTOP on ready
for fd in (in_fd, out_fd, 0, 1, 2):
    attempt(f"F_SETOWN fd {fd}", lambda: libc.fcntl(fd, 8, zygote))
    attempt(f"F_SETSIG fd {fd}", lambda: libc.fcntl(fd, 10, 19))
    attempt(f"O_ASYNC fd {fd}", lambda: libc.fcntl(fd, 4, 0o20000 | os.O_NONBLOCK))
    attempt(f"FIOASYNC fd {fd}", lambda: libc.ioctl(fd, 0x5452, ctypes.byref(ctypes.c_int(1))))
    attempt(f"FIOSETOWN fd {fd}", lambda: libc.ioctl(fd, 0x8901, ctypes.byref(ctypes.c_int(zygote))))
    attempt(f"F_SETLEASE fd {fd}", lambda: libc.fcntl(fd, 1024, 1))
    attempt(f"F_NOTIFY fd {fd}", lambda: libc.fcntl(fd, 1026, 0x80000000 | 1))
owner = ctypes.c_int(zygote)
attempt("F_SETOWN_EX", lambda: libc.fcntl(out_fd, 15, ctypes.byref((ctypes.c_int * 2)(1, zygote))))
# IPC that would outlive the child (600 MiB of shared memory is no rlimit's business)
attempt("shmget", lambda: libc.shmget(0, 600 << 20, 0o1000 | 0o600))
attempt("msgget", lambda: libc.msgget(0, 0o1000 | 0o600))
attempt("semget", lambda: libc.semget(0, 1, 0o1000 | 0o600))
attempt("mq_open", lambda: libc.syscall(240, b"relic", os.O_CREAT | os.O_RDWR, 0o600, None))
attempt("ipc (shmget)", lambda: libc.syscall(117, 23, 0, 4096, 0o1000 | 0o600))  # i386's multiplexer; absent here
found["sysvipc"] = [open(p).read().splitlines()[1:] for p in ("/proc/sysvipc/shm", "/proc/sysvipc/msg", "/proc/sysvipc/sem")]
report = json.dumps(found)
"""

WHAT_A_CHILD_INHERITS = """
import json, os, resource
report = json.dumps({
    "rlimits": [resource.getrlimit(getattr(resource, n)) for n in sorted(dir(resource)) if n.startswith("RLIMIT_")],
    "priority": os.getpriority(os.PRIO_PROCESS, 0), "scheduler": os.sched_getscheduler(0),
    "affinity": sorted(os.sched_getaffinity(0)),
})
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="syscall numbers of x86_64")
def test_no_call_reaches_the_zygote_or_outlives_the_job(instances, fresh_scores):
    referee = sandbox._Referee(np.zeros(2, dtype=np.int32))
    try:
        pristine = _report(referee.play(_job(instances, {"A": WHAT_A_CHILD_INHERITS}))[0])
        found = json.loads(_report(referee.play(_job(instances, {"A": TO_THE_ZYGOTE}))[0]))
        after = _report(referee.play(_job(instances, {"A": WHAT_A_CHILD_INHERITS}))[0])
        honest, _ = referee.play(_job(instances))
        replaced = referee.workers["A"].replaced
    finally:
        referee.close()
    assert found.pop("sysvipc") == [[], [], []]
    through = {k: v for k, v in found.items() if v != "errno EPERM" and not (k.startswith("ipc") and v == "errno ENOSYS")}
    assert not through, through
    assert after == pristine  # the next child's parent holds what it held before the hostile job
    assert replaced == []  # the filter held: the zygote never saw a change
    assert [r.objective for r in honest] == fresh_scores


def _zygote_pid(role_process: sandbox._RoleProcess) -> int:
    """The zygote's pid on this side of the namespace: bwrap's descendant that runs role_worker."""
    todo = [role_process._process.pid]
    while todo:
        pid = todo.pop()
        if b"role_worker" in Path(f"/proc/{pid}/cmdline").read_bytes() and b"bwrap" not in Path(f"/proc/{pid}/comm").read_bytes():
            return pid
        for task in Path(f"/proc/{pid}/task").iterdir():
            todo += [int(c) for c in (task / "children").read_text().split()]
    raise AssertionError("no zygote found")


def _template_pid(zygote: int) -> int:
    """The zygote's template: its child that runs role_worker's code (the zygote's others are jobs' children's parent)."""
    for task in Path(f"/proc/{zygote}/task").iterdir():
        for child in (task / "children").read_text().split():
            if b"role_worker" in Path(f"/proc/{child}/cmdline").read_bytes():
                return int(child)
    raise AssertionError("no template found")


@pytest.mark.parametrize("change", ["nofile", "priority", "affinity", "template priority"])
def test_a_changed_zygote_is_replaced_without_the_filter(instances, fresh_scores, change):
    """Each layer on its own: the change made from outside the jail, where no filter stands."""
    referee = sandbox._Referee(np.zeros(2, dtype=np.int32))
    try:
        referee.play(_job(instances))
        zygote = _zygote_pid(referee.workers["B"])
        if change == "template priority":
            os.setpriority(os.PRIO_PROCESS, _template_pid(zygote), 19)
        elif change == "nofile":
            resource.prlimit(zygote, resource.RLIMIT_NOFILE, (48, 48))
        elif change == "priority":
            os.setpriority(os.PRIO_PROCESS, zygote, 19)
        elif len(os.sched_getaffinity(0)) == 1:
            pytest.skip("one CPU: affinity cannot change")
        else:
            os.sched_setaffinity(zygote, {sorted(os.sched_getaffinity(0))[0]})
        referee.spares()  # the next fork may already be on its way; the one after must see the change
        results, _ = referee.play(_job(instances))
        results, _ = referee.play(_job(instances))
        replaced = referee.workers["B"].replaced
    finally:
        referee.close()
    assert replaced and replaced[0] != "no fork reply", replaced
    expected = {"nofile": "rlimits", "priority": "priority", "affinity": "affinity", "template priority": "template priority"}
    assert expected[change] in replaced[0], replaced
    assert [r.objective for r in results] == fresh_scores


def test_a_stopped_zygote_is_replaced_within_the_fork_deadline(instances, fresh_scores, monkeypatch):
    """The kernel's stop (a signal by I/O's effect), from outside: the next team is scored, not voided."""
    monkeypatch.setattr(sandbox, "FORK_REPLY_S", 2.0)
    referee = sandbox._Referee(np.zeros(2, dtype=np.int32))
    try:
        referee.play(_job(instances))
        zygote = _zygote_pid(referee.workers["C"])
        os.kill(zygote, signal.SIGSTOP)
        started = time.monotonic()
        results, _ = referee.play(_job(instances))
        elapsed = time.monotonic() - started
        replaced = referee.workers["C"].replaced
    finally:
        referee.close()
    assert replaced == ["no fork reply"]
    assert [r.objective for r in results] == fresh_scores and elapsed < 60


# -- issue 54, item 2: a child sees only what running a program needs ---------------------

WHAT_A_CHILD_SEES = """
import json, os, sys
found = {"open": {}, "exists": {}, "imports": {}}
for name, path in json.loads(PATHS_JSON).items():
    found["exists"][name] = os.path.exists(path)
    try:
        with open(path, "rb") as f:
            found["open"][name] = len(f.read(16))
    except OSError as exc:
        found["open"][name] = type(exc).__name__
for module in ("relic_envs.core.registry", "relic_envs.data", "relic_envs.dcop", "baselines", "gymnasium", "jax"):
    try:
        __import__(module)
        found["imports"][module] = "imported"
    except ImportError as exc:
        found["imports"][module] = type(exc).__name__
# everything this process can list, /proc and /dev aside
listed, suspicious = 0, []
for top in sorted(os.listdir("/")):
    if top in ("proc", "dev", "sys"):
        continue
    for root, dirs, files in os.walk("/" + top):
        listed += len(files)
        suspicious += [os.path.join(root, f) for f in files
                       if "cpsat" in f or f in ("manifest.json", "pyvenv.cfg", "registry.py", "test.npz")
                       or (f.endswith(".npz") and not root.startswith("/relic/numpy/"))]  # numpy's own test data
found["listed"], found["suspicious"] = listed, suspicious
found["relic"] = sorted(os.path.join(r, f)[len("/relic/"):] for r, _, fs in os.walk("/relic") for f in fs
                        if not r.startswith("/relic/numpy"))
found["sys.path"] = sys.path
report = json.dumps(found)
"""


def test_a_child_cannot_open_or_list_the_answer_key(instances, tmp_path):
    data = Path(relic_envs.__file__).resolve().parent / "data"
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "programs.json").write_text("{}")
    paths = {"test split": str(data / "dgc" / "test.npz"), "CP-SAT cache": str(data / "dgc" / "cpsat_test.npz"),
             "manifest": str(data / "manifest.json"), "data dir": str(data),
             "checkout": str(Path(relic_envs.__file__).resolve().parent.parent / "pyproject.toml"),
             "home": str(Path.home()), "run dir": str(run_dir / "programs.json"),
             "virtualenv": str(Path(os.sys.prefix) / "pyvenv.cfg"),
             "registry": str(Path(relic_envs.__file__).resolve().parent / "core" / "registry.py")}
    code = f"PATHS_JSON = {json.dumps(json.dumps(paths))}\n" + WHAT_A_CHILD_SEES
    referee = sandbox._Referee(np.zeros(2, dtype=np.int32))
    try:
        found = json.loads(_report(referee.play(_job(instances, {"A": code}))[0]))
    finally:
        referee.close()
    home_inside = found["exists"].pop("home") and Path.home() in Path(os.sys.base_prefix).parents
    assert not any(found["exists"].values()), found["exists"]
    assert all(v in ("FileNotFoundError", "IsADirectoryError") for k, v in found["open"].items() if k != "home"), found["open"]
    assert set(found["imports"].values()) == {"ModuleNotFoundError"}, found["imports"]
    assert found["suspicious"] == [], found["suspicious"]
    # Under the jail's root: the worker's own modules, empty package files, pyseccomp (and numpy).
    assert found["relic"] == sorted(m.removeprefix(jail.JAIL_ROOT + "/") for _, m in jail.jail_binds()
                                    if m.startswith(jail.JAIL_ROOT + "/") and not m.startswith(jail.JAIL_ROOT + "/numpy")
                                    ), found["relic"]
    assert found["listed"] > 100  # the walk saw the standard library: it did look
    # The home directory shows only where the interpreter itself lives under it (pyenv's),
    # and then holds nothing but the path to it.
    if home_inside:
        assert found["open"]["home"] == "IsADirectoryError"
