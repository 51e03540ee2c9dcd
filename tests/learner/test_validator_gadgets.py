"""Issue 36, item 4: the gadgets closed at the validator (``relic_envs.core.program``).

Each passed ``intake`` unchanged before: a type position that handed out ``np.ndarray``,
``hash`` of a NaN (its address), ``np.pad(..., mode="empty")`` and ``where=`` through a
name bound to a ufunc (uninitialised memory), a rule walk before the depth check and a
quadratic climb (seconds of orchestrator CPU for one reply), text validated again on
every call, and a ``print`` that wrote (or failed on a closed stdout).
"""

from __future__ import annotations

import io
import sys
import textwrap

import pytest

import relic_envs
from relic_envs.core import program as rules
from relic_envs.core.program import check_source, load_function
from relic_envs.errors import ProgramError
from relic_learner.intake import Program, Rejection, intake

SIG = relic_envs.get_benchmark("dgc").signatures()["A"]
HEADER = "import numpy as np\n\ndef select_values_A(cur, delta, u, t, violation_now, repair_gain):\n"
ARGS = (None,) * len(SIG.param_names)


def program(body: str, prelude: str = "") -> str:
    return prelude + HEADER + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"


def refused(source: str) -> str:
    with pytest.raises(ProgramError) as info:
        check_source(source, SIG)
    return info.value.reason


def run(body: str):
    """The program's return value (loaded the way the workers load it; the arguments unused)."""
    return load_function(check_source(program(body), SIG), SIG)(*ARGS)


# -- type positions: only the name itself, a tuple of such, or such | None --------------

TYPE_GADGETS = {
    "the issue's KeyError": "ok = isinstance(cur, {}[np.ndarray])",
    "a list item": "ok = isinstance(cur, [np.ndarray][0])",
    "a tuple slice": "ok = isinstance(cur, (np.ndarray, int)[0:1])",
    "an or with a value": "ok = isinstance(cur, cur | np.ndarray)",
    "an or of two names": "ok = isinstance(cur, np.ndarray | list)",
    "any other operator": "ok = isinstance(cur, np.ndarray + 1)",
    "a call": "ok = isinstance(cur, len(np.ndarray))",
    "an annotation's subscript": "def helper(x: {}[np.ndarray]):\n    return x\nreturn cur",
    "a return annotation's subscript": "def helper(x) -> [np.ndarray][0]:\n    return x\nreturn cur",
    "a subscripted annotation": "def helper(x: list[np.ndarray]):\n    return x\nreturn cur",
    "a starred tuple": "ok = isinstance(cur, (np.ndarray, *[int]))",
    "issubclass's first argument": "ok = issubclass(np.ndarray, object)",
}


@pytest.mark.parametrize("case", sorted(TYPE_GADGETS))
def test_a_type_name_reached_through_an_expression_is_refused(case):
    body = TYPE_GADGETS[case]
    assert refused(program(body if "return" in body else body + "\nreturn cur")) == "forbidden"


@pytest.mark.parametrize("body", [
    "ok = isinstance(cur, np.ndarray)",
    "ok = issubclass(int, np.ndarray)",
    "ok = isinstance(cur, (np.ndarray, list))",
    "ok = isinstance(cur, (int, (np.ndarray, float)))",
    "ok = isinstance(cur, np.ndarray | None)",
    "ok = isinstance(cur, None | np.ndarray)",
    "def helper(x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray | None:\n    return x",
    "z: np.ndarray = cur",
])
def test_the_type_name_itself_stays_allowed(body):
    check_source(program(body + "\nreturn cur"), SIG)


def _counting_parents(monkeypatch) -> list[int]:
    """Count the parent look-ups and nodes of every walk (a climb is a run of look-ups)."""
    counts = [0, 0]

    class Parents(dict):
        def get(self, key, default=None):
            counts[0] += 1
            return super().get(key, default)

        def __getitem__(self, key):
            counts[0] += 1
            return super().__getitem__(key)

    walk = rules._walk

    def counting_walk(tree):
        nodes, parents, *rest = walk(tree)
        counts[1] += len(nodes)
        return (nodes, Parents(parents), *rest)

    monkeypatch.setattr(rules, "_walk", counting_walk)
    return counts


def test_the_type_position_check_is_linear(monkeypatch):
    # Every name in a nest of tuples climbed to the top before: quadratic in the nesting.
    nest = "np.ndarray"
    for _ in range(150):
        nest = f"(np.ndarray, {nest})"
    counts = _counting_parents(monkeypatch)
    check_source(program("\n".join([f"ok = isinstance(cur, {nest})"] * 20) + "\nreturn cur"), SIG)
    lookups, nodes = counts
    assert lookups < 4 * nodes, (lookups, nodes)


# -- NaN and address hashes ---------------------------------------------------------------

@pytest.mark.parametrize("expression", [
    'float("nan")',
    'np.float64("nan")',
    'np.float32("nan")',
    '0j + float("nan")',
    'np.complex128(float("nan"))',
    '(1, float("nan"))',
    'frozenset([1.0, float("inf") - float("inf")])',
])
def test_hash_of_a_nan_is_refused(expression):
    # Since Python 3.10 a NaN hashes by its address: another number in every process.
    with pytest.raises(TypeError, match="NaN"):
        run(f"return hash({expression})")


def test_hash_of_plain_values_is_unchanged():
    assert run('return hash(("a", 1, 2.5, np.float64(3.0), frozenset([1])))') == hash(("a", 1, 2.5, 3.0, frozenset([1])))


# -- uninitialised memory -----------------------------------------------------------------

@pytest.mark.parametrize("body", [
    'x = np.pad(cur, 1, mode="empty")',
    'x = np.pad(cur, 1, "empty")',
    'm = "empty"\nx = np.pad(cur, 1, mode=m)',  # only a literal mode can be read
    'x = np.pad(cur, 1, mode="em" + "pty")',
    'x = np.pad(*[cur, 1, "empty"])',
    "p = np.pad",  # held, it could be called with any mode
    "x = [np.pad][0](cur, 1)",
    "from numpy import pad",
])
def test_pad_with_uninitialised_memory_is_refused(body):
    assert refused(program(body + "\nreturn cur")) == "forbidden"


@pytest.mark.parametrize("body", [
    "x = np.pad(cur, 1)",
    'x = np.pad(cur, (1, 2), mode="edge")',
    'x = np.pad(cur, 1, "constant", constant_values=-1)',
    "x = numpy.pad(cur, 1, mode='reflect')",
])
def test_pad_with_a_named_mode_stays_allowed(body):
    check_source(program(body + "\nreturn cur", "import numpy\n"), SIG)


@pytest.mark.parametrize("body", [
    "sum = np.add\nx = sum(cur, 1, where=cur > 0)",  # spelled like a reduction, bound to a ufunc
    "max = np.add\nx = max(cur, 1, where=cur > 0)",
    "def helper(mean):\n    return mean(cur, 1, where=cur > 0)\nx = helper(np.add)",
    "for any in (np.add,):\n    x = any(cur, 1, where=cur > 0)",
    "x = [np.sum][0](cur, where=cur > 0)",
    "f = np.sum\nx = f(cur, where=cur > 0)",  # a name is never provably a reduction
    "x = np.add.outer(cur, cur, where=cur > 0)",
    "x = np.vectorize(np.add)(cur, 1, where=cur > 0)",
])
def test_where_is_judged_by_the_callee_not_its_spelling(body):
    assert refused(program(body + "\nreturn cur")) == "forbidden"


@pytest.mark.parametrize("body", [
    "x = np.sum(cur, where=cur > 0)",
    "x = np.add.reduce(cur, where=cur > 0)",
    "x = cur.mean(where=cur > 0)",
    "x = np.nanmax(cur, initial=0, where=cur > 0)",
])
def test_where_on_a_reduction_stays_allowed(body):
    check_source(program(body + "\nreturn cur"), SIG)


# -- depth first, bounded walks, cached verdicts ---------------------------------------------

def test_depth_is_checked_before_any_rule_walk(monkeypatch):
    def no_rule_walk(*args):
        raise AssertionError("the rules were walked on a tree deeper than the limit")

    monkeypatch.setattr(rules, "_forbidden_use", no_rule_walk)
    source = program("return cur" + " + cur" * 2_000 + "\nreturn cur")
    with pytest.raises(ProgramError, match="nested") as info:
        check_source(source, SIG)
    assert info.value.reason == "syntax"


def _counting_rule_walks(monkeypatch) -> list[int]:
    calls = [0]
    walk = rules._forbidden_use

    def counting(*args):
        calls[0] += 1
        return walk(*args)

    monkeypatch.setattr(rules, "_forbidden_use", counting)
    return calls


def test_check_source_validates_a_text_once(monkeypatch):
    calls = _counting_rule_walks(monkeypatch)
    accepted = program("return cur * 2  # test_check_source_validates_a_text_once")
    rejected = program("return eval('cur')  # test_check_source_validates_a_text_once")
    for _ in range(3):
        check_source(accepted, SIG)
        with pytest.raises(ProgramError, match="eval") as info:
            check_source(rejected, SIG)
        assert info.value.reason == "forbidden"
    assert calls[0] == 2


def test_the_cache_is_keyed_by_the_signature_too(monkeypatch):
    source = program("return cur  # test_the_cache_is_keyed_by_the_signature_too")
    check_source(source, SIG)
    other = relic_envs.get_benchmark("dgc").signatures()["B"]
    with pytest.raises(ProgramError) as info:
        check_source(source, other)
    assert info.value.reason == "signature"


def test_the_cache_is_bounded():
    for i in range(rules.CHECK_CACHE_SIZE + 10):
        check_source(program(f"return cur  # {i}"), SIG)
    assert len(rules._CHECKED) <= rules.CHECK_CACHE_SIZE


def test_a_cached_tree_is_a_fresh_one():
    source = program("return cur  # test_a_cached_tree_is_a_fresh_one")
    assert check_source(source, SIG) is not check_source(source, SIG)  # callers may compile or change it


# A 98 KB reply that is one long BinOp chain, and a validated one made of many chains of
# type names (seconds before: the climb was quadratic). No clock here: only that each
# comes back with a verdict.
LONG_REPLIES = {
    "return 1+1+... (98 KB)": program("return 1" + "+1" * 49_000),
    "one chain of type names, 3000 deep": program("ok = isinstance(cur, " + "|".join(["np.ndarray"] * 2_900) + ")\nreturn cur"),
    "20 nests of type names": program("\n".join(["ok = isinstance(cur, " + "(np.ndarray, " * 190 + "None" + ")" * 190 + ")"] * 20) + "\nreturn cur"),
}


@pytest.mark.parametrize("case", sorted(LONG_REPLIES))
def test_a_long_reply_gets_its_verdict(case):
    source = LONG_REPLIES[case]
    assert len(source) < 100_000
    result = intake(source, SIG)
    assert isinstance(result, Program | Rejection)
    try:
        check_source(source, SIG)
    except ProgramError as exc:
        assert exc.reason in ("syntax", "forbidden")


# -- print ------------------------------------------------------------------------------------

def test_print_is_a_no_op(capsys, monkeypatch):
    body = 'print("to stdout", cur)\nprint("to stderr", file=None, flush=True)\nreturn 7'
    assert run(body) == 7
    assert capsys.readouterr() == ("", "")
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    sys.stdout.close()  # a worker's closed stdout: print must not fail either
    assert run(body) == 7


# -- issue 54, item 1: an array's raw buffer ---------------------------------------------
# ``np.array([None])`` is an object array whatever a program spells, and its ``.data``
# is a writable view of element pointers (``.cast("B")`` then forges objects); so the
# buffer attributes go, and the object dtype's names are refused early.

BUFFER_ROUTES = {
    "the issue's cast": "view = np.array([None, cur]).data.cast('B')\nreturn cur",
    "data alone": "view = np.array([None]).data\nreturn cur",
    "data through a call": "view = np.asarray([len]).T.data\nreturn cur",
    "tobytes reads addresses": "raw = np.array([None]).tobytes()\nreturn cur",
    "tostring": "raw = np.array([None]).tostring()\nreturn cur",
    "np.object_": "a = np.zeros(2, dtype=np.object_)\nreturn cur",
    "the letter O": "a = np.zeros(2, dtype='O')\nreturn cur",
    "a sized O": "a = np.zeros(2, dtype='|O8')\nreturn cur",
    "the word object": "a = np.zeros(2).astype('object')\nreturn cur",
    "a field of type O": "a = np.zeros(2, dtype=[('f', 'O')])\nreturn cur",
    "object by name": "a = np.zeros(2, dtype=object)\nreturn cur",
}


@pytest.mark.parametrize("case", sorted(BUFFER_ROUTES))
def test_the_buffer_route_is_refused(case):
    assert refused(program(BUFFER_ROUTES[case]))


def test_a_run_time_object_dtype_still_has_no_buffer_to_reach():
    """A dtype string built at run time passes the check; its array's buffer does not."""
    made = "a = np.zeros(2, dtype='o'.upper())\nreturn a"
    assert run(made).dtype == object
    with pytest.raises(ProgramError, match="'data'"):
        check_source(program("a = np.zeros(2, dtype='o'.upper())\nreturn a.data"), SIG)


@pytest.mark.parametrize("body", [
    "return np.asarray(cur).view(np.int64)",
    "return np.asarray(cur).astype(np.float64)",
    "return 'Over'",
])
def test_numeric_views_and_ordinary_strings_stay_allowed(body):
    check_source(program(body), SIG)
