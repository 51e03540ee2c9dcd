"""Issue 22: the four programs that beat the sandbox, each as the program text that did it,
and each defence checked again one layer down (the validator bypassed, the worker faked).

Every test here failed on the code before issue 22: (a) the orchestrator unpickled a
forged result and ran it; (b) the orchestrator's API key came back in the reason text;
(c) program ``__str__``/``__del__`` ran with the audit hook off; (d) a hanging
``__str__`` was stopped only by the 35 s wall.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import relic_envs
from relic_envs.seeds import seed_source, seed_team
from relic_learner import sandbox
from relic_learner.batches import Batch
from relic_learner.evaluate import TeamEvaluator
from relic_learner.sandbox import Job, Limits, SandboxWorker

HEADER = "import numpy as np\n\ndef select_values_A(cur, delta, u, t, violation_now, repair_gain):\n"
FAKE_KEY = "sk-relic-test-0123456789abcdef"
# The route to ``os`` that passed validation before issue 22.
REACH_OS = 'g = np.ma.core.builtins.getattr\nos = g(g(g(np, "lib"), "_npyio_impl"), "os")\n'


def program(body: str) -> str:
    return HEADER + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"


def forged_pickle_program(marker: Path) -> str:
    # Writes a pickle that runs `touch marker` to the worker's result pipe (argv[2]).
    return program(REACH_OS + f'''
sys = g(os, "sys")
payload = b"cos\\nsystem\\n(S'touch {marker}'\\ntR."
os.write(int(sys.argv[2]), len(payload).to_bytes(4, "big") + payload)
return cur
''')


def mkdir_in_str_program(target: Path) -> str:
    return program(REACH_OS + f'''
def text(self):
    os.mkdir("{target}")
    return "made"
E = type("E", (Exception,), {{"_" * 2 + "str" + "_" * 2: text}})
raise E()
''')


def mkdir_in_del_program(target: Path) -> str:
    return program(REACH_OS + f'''
def gone(self):
    os.mkdir("{target}")
R = type("R", (object,), {{"_" * 2 + "del" + "_" * 2: gone}})
return R()
''')


HANGING_STR = program('''
def text(self):
    while True:
        pass
E = type("E", (Exception,), {"_" * 2 + "str" + "_" * 2: text})
raise E()
''')

KEY_LEAKS = [
    program('raise ValueError("{0.lib._npyio_impl.os.environ[OPENAI_API_KEY]}".format(np))'),
    program(REACH_OS + 'raise ValueError(os.environ.get("OPENAI_API_KEY"))'),
]


@pytest.fixture(scope="module")
def instances():
    return Batch(tuple(relic_envs.splits("dgc").test_instances()[:2]))


@pytest.fixture(scope="module")
def seeds():
    return {r: seed_source("dgc", r) for r in "ABC"}


@pytest.fixture(scope="module")
def expected(instances):
    return [r.objective for r in relic_envs.rollout("dgc", seed_team("dgc"), instances.instances)]


@pytest.fixture(scope="module")
def keyed_evaluator():
    """A pool started while the orchestrator holds an API key, as `relic learn` does."""
    before = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = FAKE_KEY
    try:
        with TeamEvaluator("dgc", workers=1, limits=Limits(call_s=0.3, memory_mb=256, wall_s=8.0)) as ev:
            yield ev
    finally:
        if before is None:
            del os.environ["OPENAI_API_KEY"]
        else:
            os.environ["OPENAI_API_KEY"] = before


def _still_correct(evaluator, seeds, instances, expected, tag):
    honest = evaluator.evaluate({**seeds, "A": seeds["A"] + f"\n# after {tag}\n"}, instances)
    assert honest.ok, str(honest.status)
    assert [r.objective for r in honest.results] == expected


# -- (a) code ran in the orchestrator ------------------------------------------------

def test_a_forged_result_never_runs_in_the_orchestrator(keyed_evaluator, seeds, instances, expected, tmp_path):
    marker = tmp_path / "orchestrator_ran_this"
    result = keyed_evaluator.evaluate({**seeds, "A": forged_pickle_program(marker)}, instances)
    assert not result.ok and result.mean_score is None
    assert not marker.exists()
    _still_correct(keyed_evaluator, seeds, instances, expected, "forged pickle")


FAKE_WORKER = """
import json, os, sys, time
from multiprocessing.connection import Connection
inbox = Connection(int(sys.argv[1]), writable=False)
out = Connection(int(sys.argv[2]), readable=False)
isolation = dict.fromkeys({keys!r}, False)
out.send_bytes(json.dumps({{"kind": "ready", "pid": os.getpid(), "isolation": isolation}}).encode())
job = inbox.recv()
{send}
time.sleep(60)
"""

RESULT = {"kind": "result", "objective": 1.0, "score": 1.0, "steps": 1, "invalid": None}


def _sends(data: object) -> str:
    """Fake-worker code that sends ``data`` (bytes as they are, anything else as JSON)."""
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return f"out.send_bytes({raw!r})"


PROTOCOL_FAILURES = {
    "not json": _sends(b"\x80\x04garbage"),
    "deep json": _sends(b"[" * 30000 + b"]" * 30000),
    "over the size limit": "out.send_bytes(b' ' * (1 << 20))",
    "unknown kind": _sends({"kind": "exec", "code": "print(1)"}),
    "extra field": _sends({**RESULT, "index": 0, "extra": 1}),
    "wrong type": _sends({**RESULT, "index": 0, "steps": "1"}),
    "index out of range": _sends({**RESULT, "index": 7}),
    "bool for int": _sends({**RESULT, "index": True}),
    "done too early": _sends({"kind": "done", "calls": {}, "tampered": False}),
}


def _fake_job() -> Job:
    instances = tuple(relic_envs.splits("dgc").test_instances()[:1])
    return Job("dgc", "paper", {r: None for r in "ABC"}, instances, 1.0)


class _RunsWhenUnpickled:
    """Pickles to a call of ``os.system(command)``: what a forged result did before."""

    def __init__(self, command: str):
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


@pytest.mark.parametrize("case", ["pickle", *sorted(PROTOCOL_FAILURES)])
def test_a_a_malformed_worker_message_is_a_contained_protocol_failure(case, tmp_path, monkeypatch):
    # One layer down: the worker itself is hostile (as if a program had taken it over).
    marker = tmp_path / "orchestrator_ran_this"
    forged = pickle.dumps(_RunsWhenUnpickled(f"touch {marker}"))
    send = _sends(forged) if case == "pickle" else PROTOCOL_FAILURES[case]
    monkeypatch.setattr(sandbox, "_WORKER_CODE", FAKE_WORKER.format(keys=sandbox.ISOLATION_KEYS, send=send))
    worker = SandboxWorker()
    try:
        (result,), stats = worker.run(_fake_job(), wall_s=20.0)
    finally:
        worker.close()
    assert result.invalid is not None and result.invalid.reason == "protocol", result
    assert worker.restarts == 1 and stats == {}
    assert not marker.exists()


def test_a_a_worker_that_stops_mid_message_is_killed_at_the_wall(monkeypatch):
    # A length header promising more than is sent would block a plain read forever.
    send = "out._send(b'\\x00\\x00\\x10\\x00{')"  # 4096 bytes announced, 1 sent
    monkeypatch.setattr(sandbox, "_WORKER_CODE", FAKE_WORKER.format(keys=sandbox.ISOLATION_KEYS, send=send))
    worker = SandboxWorker()
    try:
        started = time.monotonic()
        (result,), _ = worker.run(_fake_job(), wall_s=2.0)
        elapsed = time.monotonic() - started
    finally:
        worker.close()
    assert result.invalid is not None and result.invalid.reason == "timeout", result
    assert elapsed < 30


# -- (b) the API key leaked -----------------------------------------------------------

@pytest.mark.parametrize("leak", range(len(KEY_LEAKS)))
def test_b_the_orchestrators_key_never_comes_back(keyed_evaluator, seeds, instances, expected, leak):
    result = keyed_evaluator.evaluate({**seeds, "A": KEY_LEAKS[leak]}, instances)
    assert not result.ok
    assert FAKE_KEY not in repr(result)  # status, detail and every per-instance record
    _still_correct(keyed_evaluator, seeds, instances, expected, f"key leak {leak}")


def test_b_workers_do_not_hold_the_key(keyed_evaluator, seeds, instances):
    keyed_evaluator.evaluate({**seeds, "A": seeds["A"] + "\n# env check\n"}, instances)
    (worker,) = keyed_evaluator._workers
    # What the worker process was started with, read from outside it (its own /proc is hidden).
    environ = Path(f"/proc/{worker._process.pid}/environ").read_bytes().split(b"\0")
    names = {item.split(b"=", 1)[0].decode() for item in environ if item}
    assert FAKE_KEY.encode() not in b"\0".join(environ)
    assert names <= {*sandbox._INHERITED_ENV, "PYTHONPATH", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "JAX_PLATFORMS",
                     "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                     "VECLIB_MAXIMUM_THREADS", *sandbox._MALLOC_DEFAULTS}
    assert b"PYTHONHASHSEED=0" in environ and b"OMP_NUM_THREADS=1" in environ


def test_b_the_key_is_in_no_event_or_file_of_a_run(openai_server, tmp_path, monkeypatch):
    """The whole path of `relic learn`: the model proposes the leaking programs."""
    from relic_learner.llm import OpenAIClient
    from relic_learner.relic import Relic, RelicConfig

    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    bodies = ['    raise ValueError("{0.lib._npyio_impl.os.environ[OPENAI_API_KEY]}".format(np))\n',
              '    ' + REACH_OS.replace("\n", "\n    ") + 'raise ValueError(os.environ.get("OPENAI_API_KEY"))\n']

    signatures = relic_envs.get_benchmark("dgc").signatures().values()

    def reply(body: dict) -> str:
        user = body["messages"][-1]["content"]
        if body["messages"][0]["role"] != "system":
            return "TYPE: STRATEGY\nPRINCIPLE: Move only where the gain is clear."
        parent = user.rsplit("```python", 1)[-1]  # the program to improve is the last block
        sig = next(s for s in signatures if f"def {s.function}(" in parent)
        header = f"def {sig.function}({', '.join(sig.param_names)}):"
        return f"```python\nimport numpy as np\n\n{header}\n{bodies[len(user) % 2]}```"

    openai_server.responder = reply
    client = OpenAIClient("fake-model", base_url=openai_server.base_url, api_key=FAKE_KEY, backoff_s=0.0,
                          cache_dir=str(tmp_path / "run" / "llm_cache"))
    config = RelicConfig(env="dgc", llm="openai:fake-model", batches=1, proposals=2, workers=1)  # DCOP: an exception voids
    Relic(config, tmp_path / "run", llm=client).learn()
    events = (tmp_path / "run" / "events.jsonl").read_text()
    assert events.count("\"status\": \"invalid\"") == 6  # all six proposals leaked or were refused
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert FAKE_KEY.encode() not in path.read_bytes(), path


# -- (c) program code ran with the audit hook off, (d) outside the per-call alarm -------

def test_c_program_str_and_del_cannot_act_outside_the_guard(keyed_evaluator, seeds, instances, expected, tmp_path):
    for make, name in ((mkdir_in_str_program, "via_str"), (mkdir_in_del_program, "via_del")):
        target = tmp_path / name
        result = keyed_evaluator.evaluate({**seeds, "A": make(target)}, instances)
        assert not result.ok
        assert not target.exists(), f"os.mkdir succeeded {name}"
    _still_correct(keyed_evaluator, seeds, instances, expected, "str/del")


def test_d_a_hanging_str_is_stopped_by_the_call_limit_not_the_wall(keyed_evaluator, seeds, instances, expected):
    restarts = keyed_evaluator.restarts
    started = time.monotonic()
    result = keyed_evaluator.evaluate({**seeds, "A": HANGING_STR}, instances)
    assert not result.ok
    assert result.status.detail != "evaluation wall limit exceeded"
    assert keyed_evaluator.restarts == restarts  # nothing had to be killed
    assert time.monotonic() - started < 8.0  # the wall limit of this pool
    _still_correct(keyed_evaluator, seeds, instances, expected, "hanging str")


GUARD_CHECK = """
import json, os, signal, sys, time
from relic_learner import sandbox
# Only the guard (alarm + audit hook), no OS isolation: what is checked is the guard.
signal.signal(signal.SIGALRM, sandbox._on_alarm)
sys.addaudithook(sandbox._audit)
target = sys.argv[1]

# Objects a program could only make if it got past the validator (no classes there).
class MkdirOnStr(Exception):
    def __str__(self):
        os.mkdir(os.path.join(target, "str"))
        return "made"

class Hang(Exception):
    def __str__(self):
        while True:
            pass

class MkdirOnDel:
    def __del__(self):
        os.mkdir(os.path.join(target, "del"))

def throw(exc):
    raise exc

report = {}
for name, call, finish in [
    ("str", lambda: throw(MkdirOnStr()), None),
    ("hang", lambda: throw(Hang()), None),
    ("del", MkdirOnDel, sandbox._plain),
]:
    started = time.monotonic()
    try:
        sandbox._guarded_call(call, (), {}, 0.3, finish=finish)
        report[name] = ["returned", "", 0.0]
    except sandbox.InvalidReturn as exc:
        report[name] = [exc.reason, str(exc), time.monotonic() - started]
print(json.dumps(report))
"""


def test_c_d_the_guard_covers_exception_text_and_dropped_values(tmp_path):
    # Defence in depth: program-defined __str__/__del__ run by the worker's own code.
    proc = subprocess.run([sys.executable, "-c", GUARD_CHECK, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert not (tmp_path / "str").exists() and not (tmp_path / "del").exists()
    assert report["str"][0] == "exception" and "made" not in report["str"][1]
    assert report["del"][0] == "type"
    reason, detail, seconds = report["hang"]
    assert reason in ("exception", "timeout") and seconds < 5.0, report["hang"]


# -- what OS isolation holds ------------------------------------------------------------

ISOLATION_CHECK = """
import json, os, socket, sys
from relic_learner import sandbox
parent = os.getppid()
isolation = sandbox._prepare_worker(256)
target = sys.argv[1]
def attempt(call):
    try:
        call()
        return "succeeded"
    except OSError as exc:
        return type(exc).__name__
report = {
    "isolation": isolation,
    # as trusted code, i.e. as a program would after getting past the audit hook
    "mkdir": attempt(lambda: os.mkdir(os.path.join(target, "made"))),
    "environ": attempt(lambda: open(f"/proc/{parent}/environ", "rb").read()),
    "connect": attempt(lambda: socket.create_connection(("127.0.0.1", 9), timeout=5)),
}
os.write(int(sys.argv[2]), json.dumps(report).encode())
"""


def test_isolation_what_the_worker_reports_holds(tmp_path):
    read, write = os.pipe()
    proc = subprocess.Popen([sys.executable, "-c", ISOLATION_CHECK, str(tmp_path), str(write)], pass_fds=(write,),
                            env=sandbox._worker_env())
    os.close(write)
    proc.wait(timeout=120)
    with os.fdopen(read, "rb") as f:
        report = json.loads(f.read() or b"{}")
    assert proc.returncode == 0 and set(report["isolation"]) == set(sandbox.ISOLATION_KEYS)
    held = report["isolation"]
    if not held["network_namespace"]:
        pytest.skip("this kernel refuses unprivileged user namespaces; only the in-process guards hold")
    assert report["connect"] != "succeeded"
    if held["read_only_filesystem"]:
        assert report["mkdir"] != "succeeded" and not (tmp_path / "made").exists()
    if held["proc_hidden"]:
        assert report["environ"] != "succeeded"
