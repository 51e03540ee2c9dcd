"""Issue 22: the same program on the same instances scores the same in any fresh worker pool.

Three programs scored differently on a repeated evaluation before: set/str-hash order
(workers had no fixed ``PYTHONHASHSEED``), ``np.datetime64("now")`` (a clock read) and
``np.empty`` (uninitialised memory). The first is now fixed in the workers; the other
two, and the other routes to the same things, are refused by validation.
"""

from __future__ import annotations

import textwrap

import pytest

import relic_envs
from relic_envs.core.program import check_source
from relic_envs.errors import ProgramError
from relic_envs.seeds import seed_source
from relic_learner.batches import Batch
from relic_learner.evaluate import TeamEvaluator

HEADER = "import numpy as np\n\ndef select_values_A(cur, delta, u, t, violation_now, repair_gain):\n"
SIG = relic_envs.get_benchmark("dgc").signatures()["A"]


def program(body: str) -> str:
    return HEADER + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"


# Every variable takes a colour from where its name lands in a set of strings: the
# iteration order of a str set is the order of the strings' hashes.
SET_ORDER = program("""
names = ["north", "south", "east", "west", "up", "down", "left", "right", "in", "out", "near", "far"]
order = list(set(names))
m, domain = delta.shape
return np.array([order.index(names[i % len(names)]) % domain for i in range(m)], dtype=np.int64)
""")


def test_set_order_scores_the_same_in_fresh_worker_pools():
    batch = Batch(tuple(relic_envs.splits("dgc").test_instances()[:2]))
    team = {**{r: seed_source("dgc", r) for r in "ABC"}, "A": SET_ORDER}
    scores = []
    for _ in range(3):  # three fresh pools: three interpreters, each with its own hash seed unless fixed
        with TeamEvaluator("dgc", workers=1) as ev:
            result = ev.evaluate(team, batch)
        assert result.ok, str(result.status)
        scores.append([r.objective for r in result.results])
    assert scores[0] == scores[1] == scores[2]


NONDETERMINISTIC = {
    "clock: now": 'x = np.datetime64("now")',
    "clock: today, any case": 'x = np.datetime64("TODAY")',
    "clock: a datetime array": 'x = np.array(["now"]).astype("datetime64[s]")',
    "clock: a datetime dtype code": 'x = np.array([0]).astype("M8[s]")',
    "clock: a bare datetime letter": 'x = np.zeros(3, "M")',
    "clock: datetime_as_string": "x = np.datetime_as_string",
    "uninitialised: empty": "x = np.empty(cur.shape)",
    "uninitialised: empty_like": "x = np.empty_like(cur)",
    "uninitialised: ndarray constructor": "x = np.ndarray(cur.shape)",
    "uninitialised: ndarray held": "make = np.ndarray\nx = make(3)",
    "uninitialised: ufunc where": "x = np.add(cur, 1, where=cur > 0)",
    "uninitialised: from numpy import": "from numpy import empty\nx = empty(3)",
}


@pytest.mark.parametrize("case", sorted(NONDETERMINISTIC))
def test_clock_reads_and_uninitialised_memory_are_refused(case):
    with pytest.raises(ProgramError) as info:
        check_source(program(NONDETERMINISTIC[case] + "\nreturn cur"), SIG)
    assert info.value.reason == "forbidden"


@pytest.mark.parametrize("body", [
    "x = np.sum(cur, where=cur > 0)",  # in a reduction, where= only skips entries
    "x = cur.max(initial=0, where=cur > 0)",
    "ok = isinstance(cur, (np.ndarray, list))",
    "x = np.zeros_like(cur)",
    "word = 'nowhere'",
])
def test_the_deterministic_neighbours_stay_allowed(body):
    check_source(program(body + "\nreturn cur"), SIG)


def test_hash_of_an_address_is_refused_at_run_time():
    # hash(str) is fixed by PYTHONHASHSEED; hash(function) is a memory address.
    batch = Batch(tuple(relic_envs.splits("dgc").test_instances()[:1]))
    team = {**{r: seed_source("dgc", r) for r in "ABC"}, "A": program("h = hash(len)\nreturn cur")}
    with TeamEvaluator("dgc", workers=1) as ev:
        result = ev.evaluate(team, batch)
    assert result.status.reason == "exception" and "memory addresses" in result.status.detail


# -- issue 54, item 5: what depends on an address or the clock -------------------------
# Each program below passes validation. An address is the same in every child by
# construction (no address randomisation for the zygote, the same history before a
# program runs); what still differs is caught by the determinism check (the first
# evaluation of a new text played again later, with the child's layout shifted).

def _rolled(expression: str, prelude: str = "") -> str:
    """A program whose action is the colours rolled by ``expression`` (an int)."""
    return program(f"{prelude}\nshift = {expression}\nreturn np.roll(cur, shift % 7)")


ADDRESS_FORMS = {
    # the issue's: a function's repr prints its address
    "a function's repr": _rolled('int(repr(helper).split(" at ")[1][:-1], 16) >> 4',
                                 "def helper():\n    return 0"),
    # four more: a map's and an iterator's repr, a set of NaNs (hashed by address), a ufunc method's repr
    "a map object's repr": _rolled('int(repr(map(abs, cur)).split(" at ")[1][:-1], 16) >> 4'),
    "an iterator's repr": _rolled('int(str(iter([1, 2])).split(" at ")[1][:-1], 16) >> 4'),
    "a set of NaNs": _rolled("[x is a for x in {a, b, c, d}].index(True)",
                             'a, b, c, d = float("nan"), float("nan"), float("nan"), float("nan")'),
    "a ufunc method's repr": _rolled('int(repr(np.add.reduce).split(" at ")[1][:-1], 16) >> 4'),
}
# The clock form: numpy's "now" from strings built at run time. It passes the
# validator; in a role worker numpy's clock is stopped (relic_learner.fixed_clock).
CLOCK_FORM = _rolled('int(np.array("won"[::-1], dtype="]sn[8M"[::-1]).astype(np.int64)) // 10**9')
TODAY_FORM = _rolled('int(np.array("YADOT"[::-1].lower(), dtype="]D[8M"[::-1]).astype(np.int64))')


@pytest.mark.parametrize("text", [CLOCK_FORM, TODAY_FORM], ids=["now", "today"])
def test_the_clock_a_program_can_reach_is_stopped(text):
    import time

    from relic_learner.sandbox import Job, SandboxWorker

    check_source(text, SIG)  # validated text
    instances = tuple(relic_envs.splits("dgc").test_instances()[:2])
    team = {**{r: seed_source("dgc", r) for r in "ABC"}, "A": text}
    scores = []
    for _ in range(2):
        referee = SandboxWorker()
        try:
            results, _ = referee.run(Job("dgc", "paper", team, instances, 1.0, 256, "full"), 60)
        finally:
            referee.close()
        assert all(r.valid for r in results), results[0].invalid
        scores.append([r.objective for r in results])
        time.sleep(1.1)  # the wall clock's second changes between the two
    assert scores[0] == scores[1]
    # and what the program saw: the epoch, the stopped clock's only answer
    referee = SandboxWorker()
    try:
        inject = {"A": "import numpy as np\nreport = str(np.datetime64('now')) + ' ' + str(np.datetime64('today'))\n"}
        (result, *_), _ = referee.run(Job("dgc", "paper", team, instances, 1.0, 256, "full", inject=inject), 60)
    finally:
        referee.close()
    assert result.invalid.detail.endswith("injected: 1970-01-01T00:00:00 1970-01-01"), result.invalid.detail


@pytest.mark.parametrize("case", sorted(ADDRESS_FORMS))
def test_an_address_repeats_in_fresh_pools(case):
    check_source(ADDRESS_FORMS[case], SIG)  # validated text, not an injection
    batch = Batch(tuple(relic_envs.splits("dgc").test_instances()[:2]))
    team = {**{r: seed_source("dgc", r) for r in "ABC"}, "A": ADDRESS_FORMS[case]}
    scores = []
    for _ in range(2):
        from relic_learner.sandbox import Job, SandboxWorker

        referee = SandboxWorker()  # a new referee, new jails: nothing reused
        try:
            results, _ = referee.run(Job("dgc", "paper", team, batch.instances, 1.0, 256, "full"), 60)
        finally:
            referee.close()
        assert all(r.valid for r in results), results[0].invalid
        scores.append([r.objective for r in results])
    assert scores[0] == scores[1]


@pytest.mark.parametrize("case", ["a function's repr", "a map object's repr", "an iterator's repr"])
def test_what_does_not_repeat_is_named_nondeterministic(case):
    text = ADDRESS_FORMS[case]
    check_source(text, SIG)
    batch = Batch(tuple(relic_envs.splits("dgc").test_instances()[:3]))
    team = {**{r: seed_source("dgc", r) for r in "ABC"}, "A": text}
    with TeamEvaluator("dgc", workers=1) as ev:
        result = ev.evaluate(team, batch)
    assert (result.status.reason, result.status.role) == ("nondeterministic", "A"), str(result.status)
    assert result.mean_score is None  # charged: no score to enter a tree with


def test_a_benign_team_passes_the_check_and_scores_bit_for_bit():
    batch = Batch(tuple(relic_envs.splits("dgc").test_instances()[:3]))
    team = {r: seed_source("dgc", r) for r in "ABC"}
    expected = relic_envs.rollout("dgc", relic_envs.seeds.seed_team("dgc"), batch.instances)
    with TeamEvaluator("dgc", workers=1) as ev:
        first = ev.evaluate(team, batch)
        checked = len(ev._repeatable)
    assert first.ok, str(first.status)
    assert [r.objective for r in first.results] == [r.objective for r in expected]
    assert [r.score for r in first.results] == [r.score for r in expected]
    assert checked == 3  # each role's text repeated once, and is not checked again


def test_the_check_can_be_turned_off_and_rejects_bad_settings():
    from relic_envs.errors import InvalidConfig

    with pytest.raises(InvalidConfig, match="determinism_instances"):
        TeamEvaluator("dgc", workers=1, determinism_instances=-1)
    batch = Batch(tuple(relic_envs.splits("dgc").test_instances()[:2]))
    team = {**{r: seed_source("dgc", r) for r in "ABC"}, "A": ADDRESS_FORMS["a function's repr"]}
    with TeamEvaluator("dgc", workers=1, determinism_instances=0) as ev:
        assert ev.evaluate(team, batch).ok


def test_the_stopped_clock_is_numpys_alone_and_in_its_process_only():
    import subprocess
    import sys

    code = ("import time, numpy as np; from relic_learner import fixed_clock; before = np.datetime64('now'); "
            "took = fixed_clock.stop(); print(took, before != np.datetime64('1970-01-01T00:00:00'), "
            "np.datetime64('now'), np.datetime64('today'), time.time() > 1e9)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["True", "True", "1970-01-01T00:00:00", "1970-01-01", "True"], out.stdout
    assert np_now_year() > 1970  # this process's numpy is untouched


def np_now_year() -> int:
    import numpy as np

    return int(str(np.datetime64("now", "Y")))


SAME_START = """
def f():
    return 0
objects = [object() for _ in range(3)]
report = " ".join(hex(id(o)) for o in [f, *objects, bytearray(100), [], {}])
"""


def test_every_child_starts_from_the_same_memory():
    """The same allocation history before a program runs: addresses agree job after job in one pool."""
    import numpy as np

    from relic_learner import sandbox
    from relic_learner.sandbox import Job

    instances = tuple(relic_envs.splits("dgc").test_instances()[:1])
    team = {r: seed_source("dgc", r) for r in "ABC"}
    referee = sandbox._Referee(np.zeros(2, dtype=np.int32))
    try:
        seen = [referee.play(Job("dgc", "paper", team, instances, 1.0, 256, "full", inject={"A": SAME_START}))[0][0]
                .invalid.detail for _ in range(5)]
        scores = [referee.play(Job("dgc", "paper", {**team, "A": ADDRESS_FORMS["a map object's repr"]}, instances,
                                   1.0, 256, "full"))[0][0].objective for _ in range(3)]
    finally:
        referee.close()
    assert len(set(seen)) == 1, seen
    assert len(set(scores)) == 1, scores
