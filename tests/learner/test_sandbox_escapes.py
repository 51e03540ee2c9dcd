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
from relic_learner.sandbox import Limits

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


# A hostile worker (as if a program had taken it over) sending malformed or forged
# messages: tests/learner/test_sandbox_attacks.py, from inside a real jailed worker.


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
                     "RELIC_LIBSECCOMP",
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
from relic_learner import channel, role_worker as sandbox
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
    ("del", MkdirOnDel, channel.encode_value),
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


# What OS isolation holds, from inside a jailed worker: tests/learner/test_sandbox_attacks.py.
