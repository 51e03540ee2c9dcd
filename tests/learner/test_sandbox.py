"""The hostile-program corpus: every bad program is rejected or contained with the right
reason, and the evaluation after it is still correct (issue 4, "Must show")."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import textwrap

import pytest

import relic_envs
from relic_envs.seeds import seed_source, seed_team
from relic_learner.batches import Batch
from relic_learner.evaluate import TeamEvaluator
from relic_learner.sandbox import Job, Limits, SandboxWorker, compiled_program

HEADER = "import numpy as np\n\ndef select_values_A(cur, delta, u, t, violation_now, repair_gain):\n"


def program(body: str, prelude: str = "") -> str:
    return prelude + HEADER + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"


# (case, role-A program, expected reason). Program-text rejections never reach a worker;
# the others run in the sandbox and must be contained there.
CORPUS = [
    ("infinite loop", program("while True:\n    pass"), "timeout"),
    ("time.sleep", program("time.sleep(100)\nreturn cur", "import time\n"), "forbidden"),
    ("memory bomb (numpy)", program("x = np.ones((1 << 40,))\nreturn cur"), "memory"),
    ("memory bomb (list)", program("x = [0] * (1 << 40)\nreturn cur"), "memory"),
    ("recursion bomb", program("def f(n):\n    return f(n + 1)\nreturn f(0)"), "exception"),
    ("fork", program("os.fork()\nreturn cur", "import os\n"), "forbidden"),
    ("subprocess", program("subprocess.run(['true'])\nreturn cur", "import subprocess\n"), "forbidden"),
    ("file write", program("open('/tmp/relic_pwned', 'w').write('x')\nreturn cur"), "forbidden"),
    ("socket", program("socket.socket()\nreturn cur", "import socket\n"), "forbidden"),
    ("import os", program("import os\nreturn cur"), "forbidden"),
    ("import sys", program("import sys\nreturn cur"), "forbidden"),
    ("import ctypes", program("import ctypes\nreturn cur"), "forbidden"),
    ("import importlib", program("import importlib\nreturn cur"), "forbidden"),
    ("__import__", program("__import__('os').system('true')\nreturn cur"), "forbidden"),
    ("builtins tampering", program("__builtins__['len'] = None\nreturn cur"), "forbidden"),
    ("import builtins", program("import builtins\nbuiltins.len = None\nreturn cur"), "forbidden"),
    ("mro escape", program("().__class__.__mro__[1].__subclasses__()\nreturn cur"), "forbidden"),
    ("getattr escape", program("getattr((), '__cla' + 'ss__')\nreturn cur"), "forbidden"),
    ("numpy file io", program("np.save('/tmp/relic_pwned.npy', cur)\nreturn cur"), "forbidden"),
    ("frame walk", program("try:\n    1 / 0\nexcept Exception as e:\n    e.with_traceback(None).tb_frame\nreturn cur"), "forbidden"),
    ("np.random", program("return np.random.randint(0, 3, size=cur.shape)"), "forbidden"),
    ("module assignment", program("np.mean = None\nreturn cur"), "forbidden"),
    ("mutate input", program("cur[0] = 1\nreturn cur"), "mutation"),
    ("flip writeable", program("cur.setflags(write=True)\ncur[0] = 1\nreturn cur"), "forbidden"),
    ("flip writeable by flags", program("cur.flags['WRITEABLE'] = True\ncur[0] = 1\nreturn cur"), "forbidden"),
    ("mutate a view", program("v = cur[:]\nv[0] = 1\nreturn cur"), "mutation"),
    ("mutate in place op", program("delta += 1\nreturn cur"), "mutation"),
    ("module tampering via alias", program("m = np.polynomial.polynomial\nm.polyval = None\nreturn cur"), "forbidden"),
    ("returns None", program("return None"), "type"),
    ("returns NaN", program("return np.full(cur.shape, np.nan)"), "non-finite"),
    ("returns list", program("return cur.tolist()"), "type"),
    ("wrong shape", program("return np.zeros(cur.size + 1, dtype=int)"), "shape"),
    ("out of range", program("return cur + 100"), "domain"),
    ("returns object subclass", program("class A(np.ndarray):\n    pass\nreturn cur.view(A)"), "forbidden"),  # no classes
    ("SystemExit", program("raise SystemExit(3)"), "exception"),
    ("KeyboardInterrupt", program("raise KeyboardInterrupt"), "exception"),
    ("exception", program("return cur[10**6]"), "exception"),
    # issue 22: routes that passed validation before, and text that crashed it
    ("numpy internals to os", program('g = np.ma.core.builtins.getattr\nos = g(g(g(np, "lib"), "_npyio_impl"), "os")\nreturn cur'), "forbidden"),
    ("str.format walk", program('raise ValueError("{0.lib._npyio_impl.os.environ[OPENAI_API_KEY]}".format(np))'), "forbidden"),
    ("class via type()", program('E = type("E", (Exception,), {"_" * 2 + "str" + "_" * 2: len})\nraise E()'), "forbidden"),
    ("clock read", program('return cur + 0 * (np.datetime64("now").astype(np.int64) % 2)'), "forbidden"),
    ("uninitialised memory", program("return np.empty(cur.shape, dtype=np.int64)"), "forbidden"),
    ("address hash", program("return cur + 0 * (hash(len) % 2)"), "exception"),
    ("parser MemoryError", HEADER + "    return " + "-" * 90_000 + "cur\n", "syntax"),
    ("syntax", HEADER + "    return cur +\n", "syntax"),
    ("signature", "def select_values_A(cur, delta):\n    return cur\n", "signature"),
    ("async def", "async def select_values_A(cur, delta, u, t, violation_now, repair_gain):\n    return cur\n", "signature"),
]


@pytest.fixture(scope="module")
def instances():
    return Batch(tuple(relic_envs.splits("dgc").test_instances()[:2]))


@pytest.fixture(scope="module")
def seeds():
    return {r: seed_source("dgc", r) for r in "ABC"}


@pytest.fixture(scope="module")
def expected(seeds, instances):
    return relic_envs.rollout("dgc", seed_team("dgc"), instances.instances)


@pytest.fixture(scope="module")
def evaluator():
    # Short limits keep the corpus fast; the wall limit is the backstop for the
    # catch-everything loop below.
    with TeamEvaluator("dgc", workers=1, limits=Limits(call_s=0.3, memory_mb=256, wall_s=8.0)) as ev:
        yield ev


@pytest.mark.parametrize(("case", "source", "reason"), CORPUS, ids=[c[0] for c in CORPUS])
def test_hostile_program_is_contained(evaluator, seeds, instances, expected, case, source, reason):
    result = evaluator.evaluate({**seeds, "A": source}, instances)
    assert not result.ok
    assert (result.status.reason, result.status.role) == (reason, "A"), str(result.status)
    assert result.mean_score is None
    # The next evaluation in the same pool is still correct.
    honest = evaluator.evaluate({**seeds, "A": seeds["A"] + f"\n# after {case}\n"}, instances)
    assert honest.ok, str(honest.status)
    assert [r.objective for r in honest.results] == [r.objective for r in expected]


def test_swallowed_timeout_is_killed_by_the_wall_limit(evaluator, seeds, instances, expected):
    hog = program("while True:\n    try:\n        while True:\n            pass\n    except:\n        pass")
    restarts = evaluator.restarts
    result = evaluator.evaluate({**seeds, "A": hog}, instances)
    assert (result.status.reason, result.status.role) == ("timeout", "A")
    assert evaluator.restarts == restarts + 1
    honest = evaluator.evaluate({**seeds, "B": seeds["B"] + "\n# after the hog\n"}, instances)
    assert [r.objective for r in honest.results] == [r.objective for r in expected]


def test_printing_megabytes_is_harmless(evaluator, seeds, instances, expected):
    chatty_c = seeds["C"].replace(") -> np.ndarray:\n", ") -> np.ndarray:\n    print('y' * 2_000_000)\n", 1)
    assert chatty_c != seeds["C"]
    result = evaluator.evaluate({**seeds, "C": chatty_c}, instances)
    assert result.ok, str(result.status)
    assert [r.objective for r in result.results] == [r.objective for r in expected]


# A crashed role worker: tests/learner/test_sandbox_attacks.py (it is that role's failure, and replaced).


@pytest.mark.parametrize(("text", "reason", "detail"), [
    (HEADER + "    return cur +\n", "syntax", "while loading: line 4: invalid syntax"),
    (HEADER + "    return cur\0\n", "syntax", "while loading: line None: source code string cannot contain null bytes"),
    ("import os\n" + HEADER + "    return cur\n", "forbidden", "while loading: "),
], ids=["syntax", "null byte", "forbidden import"])
def test_the_referee_checks_text_itself_before_any_child_sees_it(seeds, instances, expected, text, reason, detail):
    # Straight to a referee, no evaluator before it: the referee checks and compiles each text
    # (children only receive its compiled code), and a text that fails is that role's failure.
    referee = SandboxWorker()
    try:
        results, _ = referee.run(Job("dgc", "paper", {**seeds, "A": text}, instances.instances, 0.5, 256), 60.0)
        honest, _ = referee.run(Job("dgc", "paper", seeds, instances.instances, 0.5, 256), 60.0)
    finally:
        referee.close()
    for result in results:
        assert result.invalid is not None and result.invalid.role == "A", result
        assert result.invalid.reason == reason
        assert result.invalid.detail.startswith(detail), result.invalid.detail
    assert [r.objective for r in honest] == [r.objective for r in expected]
    checked = compiled_program("dgc", "paper", "A", seeds["A"])
    assert marshal.loads(checked).co_filename == "<role A>"
    assert compiled_program("dgc", "paper", "A", seeds["A"]) is checked  # cached: checked once per text


WORKER_HOOK_CHECK = """
import signal, sys
from relic_learner import role_worker as sandbox
# Only the in-process guard (alarm + audit hook), no jail: what is checked is the guard.
signal.signal(signal.SIGALRM, sandbox._on_alarm)
sys.addaudithook(sandbox._audit)
checks = {
    "open for write": lambda: open("/tmp/relic_hook_check", "w"),
    "open for read": lambda: open("/etc/hostname"),
    "socket": lambda: __import__("socket").socket(),
    "subprocess": lambda: __import__("subprocess").run(["true"]),
    "os.system": lambda: __import__("os").system("true"),
    "exec": lambda: exec("1"),
    "fresh import": lambda: __import__("xml.dom.minidom"),
}
guard = sandbox._ModuleGuard()
norm = sandbox.np.linalg.norm
sandbox.np.linalg.norm = None  # what a program could do if it slipped past the validator
if not guard.tampered() or sandbox.np.linalg.norm is not norm or guard.tampered():
    sys.exit(100)
failures = 0
for name, attempt in checks.items():
    try:
        sandbox._guarded_call(attempt, (), {}, 2.0)
        failures += 1
    except sandbox.InvalidReturn as exc:
        failures += exc.reason != "forbidden"
sys.exit(failures)
"""


def test_worker_guards_hold_even_without_the_validator():
    # Defence in depth: run raw callables (no AST check) under the worker's guard, in a
    # throwaway interpreter so this test process keeps its own audit state.
    proc = subprocess.run([sys.executable, "-c", WORKER_HOOK_CHECK], timeout=120)
    assert proc.returncode != 100, "module tampering was not detected and undone"
    assert proc.returncode == 0, f"{proc.returncode} outside-world calls were not blocked"
    assert not os.path.exists("/tmp/relic_hook_check")


def test_mapp_input_mutation_sends_the_agent_home():
    # MAPP's contract (B.1) maps a failing call to the depot; a mutation attempt is one.
    sig = relic_envs.get_benchmark("mapp_pc").signatures()["B"]
    header = f"def {sig.function}({', '.join(sig.param_names)}):\n"
    vandal = header + "    teammate_positions.append(3)\n    graph['dist_mat'] = None\n    return 1\n"
    seeds_pc = {r: seed_source("mapp_pc", r) for r in "ABC"}
    batch = Batch(tuple(relic_envs.splits("mapp_pc").test_instances("test50")[:3]))
    with TeamEvaluator("mapp_pc", workers=1) as ev:
        mutated, absent = ev.evaluate_many([{**seeds_pc, "B": vandal}, {**seeds_pc, "B": None}], batch)
    assert mutated.ok and absent.ok
    assert [r.objective for r in mutated.results] == [r.objective for r in absent.results]


GUARD_CHECK = """
import sys
import numpy as np
from relic_learner import role_worker
guard = role_worker._ModuleGuard()
norm, pi = np.linalg.norm, np.pi
np.linalg.norm = np.zeros(3)  # an array answers == ambiguously: a change all the same
np.extra_name = 1
math_pi = float(pi)  # an equal value in a new object is harmless, and left
assert guard.tampered()
assert np.linalg.norm is norm and not hasattr(np, "extra_name")
assert not guard.tampered()
del np.linalg.norm
assert guard.tampered() and np.linalg.norm is norm
print("ok")
"""


def test_the_module_guard_sees_and_undoes_every_kind_of_change():
    # In a fresh interpreter: the check replaces numpy attributes.
    out = subprocess.run([sys.executable, "-c", GUARD_CHECK], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr


def test_a_dead_process_is_named_by_its_signal_whatever_the_status_form():
    import signal

    from relic_learner.sandbox import _death

    assert _death(-signal.SIGSEGV) == ("exception", "role worker crashed with SIGSEGV")
    assert _death(128 + signal.SIGSEGV) == ("exception", "role worker crashed with SIGSEGV")  # a shell-style status
    assert _death(-signal.SIGKILL, "worker")[0] == "memory"
    assert _death(-signal.SIGXCPU)[0] == "timeout"
    assert _death(3) == ("exception", "role worker exited with status 3")
