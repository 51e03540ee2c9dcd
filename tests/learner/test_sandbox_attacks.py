"""Issue 36: a program that owns its worker. Arbitrary Python runs inside a role worker
after every layer is in place (``Job.inject``, a test-only hook program text cannot
reach: it stands for native code execution gained through a C-extension bug), and from
there tries each attack the issue lists. Each one fails, or the team is scored honestly.

Every test runs the referee (the orchestrator's side) as it runs in a search:
``SandboxWorker.run`` with a real jailed worker per role.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import relic_envs
from relic_envs.seeds import seed_source, seed_team
from relic_learner import jail
from relic_learner.sandbox import ISOLATION_KEYS, Job, SandboxWorker

pytestmark = pytest.mark.skipif(jail.bwrap_path() is None, reason="bubblewrap (bwrap) is not installed")

SEEDS = {r: seed_source("dgc", r) for r in "ABC"}
HONEST_FOR_CUR = "import numpy as np\n\ndef select_values_A(cur, delta, u, t, violation_now, repair_gain):\n    return cur\n"


@pytest.fixture(scope="module")
def instances():
    return tuple(relic_envs.splits("dgc").test_instances()[:2])


@pytest.fixture(scope="module")
def referee():
    worker = SandboxWorker()
    yield worker
    worker.close()


def _job(instances, inject: dict[str, str], sources: dict | None = None, call_s: float = 1.0) -> Job:
    return Job("dgc", "paper", {**SEEDS, **(sources or {})}, instances, call_s, 256, "full",
               inject={role: textwrap.dedent(code) for role, code in inject.items()})


def _play(referee, job: Job, wall_s: float = 60.0):
    results, stats = referee.run(job, wall_s)
    return results, stats


def _report(results) -> str:
    """What an injection sent back (it fails the load on purpose, with its findings as the detail)."""
    invalid = results[0].invalid
    assert invalid is not None and invalid.detail.startswith("while loading: injected: "), results[0]
    return invalid.detail.removeprefix("while loading: injected: ")


# -- the score ----------------------------------------------------------------------

FORGE_RESULT = """
import json, os
# The score a compromised worker would like: well-formed results for every instance.
for index in range(2):
    forged = {"kind": "result", "index": index, "objective": 0.0, "score": 0.0, "steps": 1, "invalid": None}
    data = json.dumps(forged).encode()
    os.write(out_fd, len(data).to_bytes(4, "big") + data)
done = json.dumps({"kind": "done", "calls": {}, "isolation": {}, "restarts": 0}).encode()
os.write(out_fd, len(done).to_bytes(4, "big") + done)
os._exit(0)
"""

FORGE_ACTIONS = """
# Take over the worker's reply: answer 'load ok', then for every step answer what the
# program would (return cur) -- a worker can only ever choose its own role's actions.
import json
def act(requests):
    return [["ok", ["a", kwargs["cur"].dtype.str, list(kwargs["cur"].shape), kwargs["cur"].tolist()]]
            for _, kwargs in requests]
worker.act = act
"""


def test_a_forged_score_never_counts(referee, instances):
    results, _ = _play(referee, _job(instances, {"A": FORGE_RESULT}))
    for result in results:  # the referee reads actions, not results: what came back is A's failure
        assert result.invalid is not None and result.invalid.role == "A"
        assert result.invalid.reason in ("protocol", "exception"), result.invalid
        assert result.objective is None


def test_a_taken_over_worker_is_scored_on_the_actions_it_sends(referee, instances):
    """Its actions are its program's: the score is the honest score of `return cur`, never a value it names."""
    honest = relic_envs.rollout("dgc", {**seed_team("dgc"), "A": lambda obs: obs["cur"]}, instances)
    results, _ = _play(referee, _job(instances, {"A": FORGE_ACTIONS}, {"A": HONEST_FOR_CUR}))
    assert [r.objective for r in results] == [r.objective for r in honest]
    assert all(r.valid for r in results) and results[0].objective != 0.0


MALFORMED_REPLIES = {
    "pickle": "pickle.dumps(Boom())",
    "not json": "b'\\x80\\x04garbage'",
    "deep json": "b'[' * 30000 + b']' * 30000",
    "too many answers": "json.dumps([['ok', None], ['ok', None]]).encode()",
    "unknown reason": "json.dumps([['fail', 'ok-really', 'x']]).encode()",
    "object dtype": "json.dumps([['ok', ['a', '|O', [1], [0]]]]).encode()",
    "shape lies": "json.dumps([['ok', ['a', '<i8', [1000000], [1]]]]).encode()",
    "unknown tag": "json.dumps([['ok', ['x', 1]]]).encode()",
}


@pytest.mark.parametrize("case", sorted(MALFORMED_REPLIES))
def test_a_malformed_reply_is_the_roles_protocol_failure(referee, instances, case, tmp_path):
    marker = tmp_path / "referee_ran_this"
    inject = f"""
    import json, os, pickle, time
    class Boom:
        def __reduce__(self):
            return (os.system, ("touch {marker}",))
    data = {MALFORMED_REPLIES[case]}
    os.write(out_fd, len(data).to_bytes(4, "big") + data)
    time.sleep(60)
    """
    results, _ = _play(referee, _job(instances, {"B": inject}))
    for result in results:
        assert (result.invalid.role, result.invalid.reason) == ("B", "protocol"), result.invalid
    assert not marker.exists()


def test_a_worker_that_stops_mid_message_is_cut_at_its_deadline(referee, instances):
    inject = """
    import os, time
    os.write(out_fd, (4096).to_bytes(4, "big") + b"{")  # 4096 bytes announced, 1 sent
    time.sleep(600)
    """
    started = time.monotonic()
    results, _ = _play(referee, _job(instances, {"C": inject}, call_s=0.5))
    assert (results[0].invalid.role, results[0].invalid.reason) == ("C", "timeout"), results[0].invalid
    assert time.monotonic() - started < 30


# -- the machine ---------------------------------------------------------------------

ATTACKS = """
import ctypes, errno, json, mmap, os, signal, socket
libc = ctypes.CDLL(None, use_errno=True)
found = {}

def attempt(name, call):
    try:
        value = call()
        found[name] = "succeeded" if value is None or value is True or value == 0 else f"returned {value!r}"[:120]
    except BaseException as exc:
        found[name] = type(exc).__name__

def syscall(*args):
    r = libc.syscall(*args)
    return f"errno {ctypes.get_errno()}" if r == -1 else r

TARGETS = json.loads(TARGETS_JSON)
# signal the parent, the orchestrator, the process group, everyone
attempt("kill parent", lambda: os.kill(os.getppid(), signal.SIGKILL))
attempt("kill orchestrator", lambda: os.kill(TARGETS["orchestrator"], signal.SIGKILL))
attempt("kill group", lambda: os.kill(0, signal.SIGKILL))
attempt("kill everyone", lambda: os.kill(-1, signal.SIGKILL))
# write, create, rewrite files outside the sandbox
attempt("create", lambda: open(TARGETS["create"], "w").write("x"))
attempt("rewrite", lambda: open(TARGETS["existing"], "r+").write("x"))
attempt("mmap rewrite", lambda: mmap.mmap(os.open(TARGETS["existing"], os.O_RDWR), 0)[:1])
attempt("tmp", lambda: open("/tmp/relic-escape", "w").write("x"))
attempt("root", lambda: open("/relic-escape", "w").write("x"))
attempt("dev", lambda: open("/dev/relic-escape", "w").write("x"))
attempt("memfd", lambda: os.memfd_create("x"))  # anonymous memory, no file: allowed, harmless
# clear the read-only flag (mount_setattr with attr_clr = MOUNT_ATTR_RDONLY), remount
attr = (ctypes.c_uint64 * 4)(0, 1, 0, 0)
attempt("mount_setattr", lambda: syscall(442, -100, b"/", 0x8000, ctypes.byref(attr), 32))
attempt("remount", lambda: syscall(165, None, b"/", None, 0x20 | 0x1000, None))
attempt("unshare", lambda: syscall(272, 0x10000000 | 0x00020000))
# read files outside
attempt("read secret", lambda: open(TARGETS["secret"]).read())
attempt("read passwd", lambda: open("/etc/passwd").read())
# the parent here is bwrap's init inside the namespace, started with the worker's own
# allowlisted environment: readable, and holding nothing secret
try:
    found["key in parent environ"] = "OPENAI_API_KEY" in open(f"/proc/{os.getppid()}/environ").read()
except OSError:
    found["key in parent environ"] = False
attempt("read orchestrator environ", lambda: open(f"/proc/{TARGETS['orchestrator']}/environ", "rb").read())
# other processes
attempt("ptrace", lambda: syscall(101, 16, TARGETS["orchestrator"], 0, 0))
attempt("fork", lambda: os.fork())
attempt("exec", lambda: os.execv("/bin/sh", ["sh", "-c", "true"]))
# sockets, path-based Unix ones included
def unix(path):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
attempt("unix socket", lambda: unix(TARGETS["socket"]))
attempt("tcp", lambda: socket.create_connection(("127.0.0.1", TARGETS["port"]), timeout=2))
attempt("socketpair", lambda: socket.socketpair())
# a teammate's source: look through everything this process holds
import gc
held = [o for o in gc.get_objects() if isinstance(o, (str, bytes))]
found["teammate marker in memory"] = any(TARGETS["marker"] in (o if isinstance(o, str) else o.decode("latin-1")) for o in held)
found["processes"] = sorted(os.listdir("/proc")) and [p for p in os.listdir("/proc") if p.isdigit()]
report = json.dumps(found)
"""


def test_from_inside_the_worker_every_attack_fails(referee, instances, tmp_path, monkeypatch):
    import socket

    monkeypatch.setenv("OPENAI_API_KEY", "sk-relic-test-never-crosses")

    existing = tmp_path / "existing.txt"
    existing.write_text("original")
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-RELIC")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "s.sock"))
    server.listen(1)
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(1)
    marker = "TEAMMATE_ONLY_MARKER_7f3a"
    targets = {"orchestrator": os.getpid(), "create": str(tmp_path / "created.txt"), "existing": str(existing),
               "secret": str(secret), "socket": str(tmp_path / "s.sock"), "port": tcp.getsockname()[1],
               "marker": marker}
    code = f"TARGETS_JSON = {json.dumps(json.dumps(targets))}\n" + ATTACKS
    team_b = SEEDS["B"] + f"\n# {marker}\n"  # only B's worker ever receives this text
    try:
        results, _ = _play(referee, _job(instances, {"A": code}, {"B": team_b}))
    finally:
        server.close()
        tcp.close()
    found = json.loads(_report(results))
    assert found.pop("memfd").startswith("returned")  # anonymous memory (an fd): not a file, gone with the process
    processes = found.pop("processes")
    assert found.pop("teammate marker in memory") is False
    assert found.pop("key in parent environ") is False
    escaped = {k: v for k, v in found.items() if v.startswith(("succeeded", "returned")) and "errno" not in v}
    assert not escaped, found
    assert len(processes) == 4 and processes[:2] == ["1", "2"], processes  # bwrap's init, the zygote, its template, this child
    assert existing.read_text() == "original" and not (tmp_path / "created.txt").exists()
    assert not Path("/tmp/relic-escape").exists() and "TOP-SECRET" not in json.dumps(found)
    # The orchestrator (this process) is alive, and the next job is scored honestly.
    expected = relic_envs.rollout("dgc", seed_team("dgc"), instances)
    again, _ = _play(referee, _job(instances, {}))
    assert [r.objective for r in again] == [r.objective for r in expected]


ORPHAN = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
made = []
for attempt in range(2):
    try:
        pid = os.fork()
    except OSError as exc:
        made.append(type(exc).__name__)
        continue
    if pid == 0:  # the child: leave the session, rename itself, live on
        os.setsid()
        libc.prctl(15, b"relicorphan", 0, 0, 0)
        import time
        time.sleep(600)
    made.append(pid)
# clone(2) directly, as native code would
r = libc.syscall(56, 17, 0, 0, 0, 0)
made.append(f"clone {r} errno {ctypes.get_errno()}")
if r == 0:
    libc.prctl(15, b"relicorphan", 0, 0, 0)
    import time
    time.sleep(600)
report = repr(made)
"""


def _orphans() -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == "relicorphan":
                found.append(entry.name)
        except OSError:
            pass
    return found


def test_no_process_outlives_the_worker(instances):
    referee = SandboxWorker()
    try:
        results, _ = _play(referee, _job(instances, {"A": ORPHAN}))
        report = _report(results)
    finally:
        referee.close()
    assert "clone -1" in report, report
    assert _orphans() == [], report


def test_the_worker_holds_every_layer_and_no_secret(referee, instances, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-relic-test-should-not-cross")
    inject = "import os, json\nreport = json.dumps(dict(os.environ))\n"
    fresh = SandboxWorker()
    try:
        results, _ = _play(fresh, _job(instances, {"A": inject}))
        environ = json.loads(_report(results))
        honest, _ = _play(fresh, _job(instances, {}))
        assert fresh.isolation == dict.fromkeys(ISOLATION_KEYS, True)
    finally:
        fresh.close()
    assert "OPENAI_API_KEY" not in environ and environ.get("PYTHONHASHSEED") == "0"
    assert all(r.valid for r in honest)


def test_the_orchestrator_survives_a_kill_attempt_in_a_subprocess(tmp_path):
    """The same kill attempts, from a separate orchestrator process: it finishes and prints its result."""
    script = tmp_path / "orchestrate.py"
    script.write_text(textwrap.dedent(f"""
        import json, os, sys
        import relic_envs
        from relic_envs.seeds import seed_source
        from relic_learner.sandbox import Job, SandboxWorker
        instances = tuple(relic_envs.splits("dgc").test_instances()[:1])
        seeds = {{r: seed_source("dgc", r) for r in "ABC"}}
        inject = "import os, signal\\nfor pid in (os.getppid(), {os.getpid()}, 0, -1, 1):\\n" \\
                 "    try:\\n        os.kill(pid, signal.SIGKILL)\\n    except OSError:\\n        pass\\n"
        worker = SandboxWorker()
        (first,), _ = worker.run(Job("dgc", "paper", seeds, instances, 1.0, 256, "full", inject={{"A": inject}}), 60)
        (second,), _ = worker.run(Job("dgc", "paper", seeds, instances, 1.0, 256, "full"), 60)
        worker.close()
        print(json.dumps([first.objective, second.objective]))
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    first, second = json.loads(proc.stdout.strip().splitlines()[-1])
    expected = relic_envs.rollout("dgc", seed_team("dgc"), relic_envs.splits("dgc").test_instances()[:1])
    assert first == second == expected[0].objective  # the injection returned; A's program then ran honestly


def test_reduced_isolation_is_refused_unless_accepted(instances, monkeypatch):
    """Without bwrap (as where the kernel refuses namespaces), no program runs unless the caller accepts it."""
    from relic_learner import sandbox

    monkeypatch.setattr(jail, "bwrap_path", lambda: None)
    with pytest.raises(jail.IsolationUnavailable, match="reduced isolation"):
        sandbox._RoleProcess("dgc", "paper", "A", 256, "full")
    accepted = sandbox._RoleProcess("dgc", "paper", "A", 256, "reduced")
    try:
        accepted.fresh()
        assert accepted.layers["seccomp"] and accepted.layers["rlimits"]
        assert not accepted.layers["pid_namespace"] and not accepted.layers["network_namespace"]
    finally:
        accepted.kill()


def test_a_crashed_worker_is_that_roles_failure_and_is_replaced(referee, instances):
    # A real crash in native code (a worker sends no signal, to itself neither: seccomp refuses it).
    crash = "import ctypes\ndef act(requests):\n    ctypes.string_at(0)\nworker.act = act\n"
    restarts = referee.restarts
    results, _ = _play(referee, _job(instances, {"A": crash}))
    assert (results[0].invalid.role, results[0].invalid.reason) == ("A", "exception"), results[0].invalid
    assert "SIGSEGV" in results[0].invalid.detail
    assert referee.restarts == restarts + 1
    expected = relic_envs.rollout("dgc", seed_team("dgc"), instances)
    again, _ = _play(referee, _job(instances, {}))
    assert [r.objective for r in again] == [r.objective for r in expected]


def test_memory_rlimit_is_hard(referee, instances):
    inject = """
import resource
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
try:
    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    raised = "raised"
except (ValueError, OSError) as exc:
    raised = type(exc).__name__
report = f"{soft == hard} {raised}"
"""
    results, _ = _play(referee, _job(instances, {"A": inject}))
    assert _report(results) in ("True ValueError", "True PermissionError", "True OSError")


class _Once(dict):
    """An injection for the first load only (the fresh child after the loss is honest)."""

    def get(self, role, default=None):
        return self.pop(role, default)


def test_a_worker_lost_mid_job_is_replaced_for_every_instance_still_playing():
    """CO repairs a failed answer (B.3): after a hung step the role goes on, in a fresh child for every live instance."""
    import numpy as np

    from relic_learner import sandbox

    instances = tuple(relic_envs.splits("hmtsp").test_instances("test100")[:2])
    seeds = {r: seed_source("hmtsp", r) for r in "ABC"}
    hang = "import time\ndef act(requests):\n    time.sleep(600)\nworker.act = act\n"
    referee = sandbox._Referee(np.zeros(2, dtype=np.int32))  # in this process, to hand it a one-shot injection
    try:
        results, calls = referee.play(Job("hmtsp", "paper", seeds, instances, 0.05, 256, "full", inject=_Once(B=hang)))
        assert referee.lost == 1
        assert referee.workers["B"].slots == {0, 1}  # the fresh child holds every instance still playing
    finally:
        referee.close()
    assert all(r.valid for r in results), [r.invalid for r in results]
    assert calls["B"] > len(instances)  # B went on playing after its lost step
    assert sum(r.info["repairs"]["B"] for r in results) >= 1  # the hung step was repaired, and counted
