"""Issue 22: intake and the shared validator never raise on program text.

``ast.parse`` raised ``MemoryError`` (``"-" * 90000 + "1"``) or ``RecursionError``
(long attribute chains) out of ``intake`` and ``check_source`` and stopped ``relic
learn``; ``--resume`` replayed the same crash. Now every such text is a rejection with
reason ``syntax``, in intake, in the validator and in the evaluator's own check.
"""

from __future__ import annotations

import ast
import types

import pytest

import relic_envs
from relic_envs.core import program as program_module
from relic_envs.core.program import check_source
from relic_envs.errors import ProgramError
from relic_envs.seeds import seed_source
from relic_learner import intake as intake_module
from relic_learner.batches import Batch
from relic_learner.evaluate import TeamEvaluator
from relic_learner.intake import Rejection, intake

SIG = relic_envs.get_benchmark("dgc").signatures()["A"]
DEF = "def select_values_A(cur, delta, u, t, violation_now, repair_gain):\n    return "

PARSER_BREAKERS = {
    "unary chain (MemoryError)": DEF + "-" * 90_000 + "1\n",
    "not chain (MemoryError)": DEF + "not " * 20_000 + "cur\n",
    "attribute chain (RecursionError)": DEF + "cur" + ".real" * 18_000 + "\n",
    "call chain (RecursionError)": DEF + "cur" + "()" * 40_000 + "\n",
    "parentheses": DEF + "(" * 90_000 + "\n",
    "deep but parseable": DEF + "cur" + " + cur" * 2_000 + "\n",
}


@pytest.mark.parametrize("case", sorted(PARSER_BREAKERS))
def test_intake_turns_parser_failures_into_rejections(case):
    for reply in (PARSER_BREAKERS[case], f"Here:\n```python\n{PARSER_BREAKERS[case]}```\nDone."):
        result = intake(reply, SIG)
        assert isinstance(result, Rejection) and result.reason == "syntax", result


@pytest.mark.parametrize("case", sorted(PARSER_BREAKERS))
def test_check_source_raises_only_program_error(case):
    with pytest.raises(ProgramError) as info:
        check_source(PARSER_BREAKERS[case], SIG)
    assert info.value.reason == "syntax"


def test_the_evaluator_rejects_them_before_any_worker():
    batch = Batch(tuple(relic_envs.splits("dgc").test_instances()[:1]))
    seeds = {r: seed_source("dgc", r) for r in "ABC"}
    with TeamEvaluator("dgc", workers=1) as ev:
        results = ev.evaluate_many([{**seeds, "A": text} for text in PARSER_BREAKERS.values()], batch)
        assert all(r.status.reason == "syntax" and r.status.role == "A" for r in results)
        assert ev.evaluations == 0  # nothing reached a worker


@pytest.mark.parametrize("error", [MemoryError, RecursionError, OSError, KeyError])
def test_intake_never_raises_whatever_the_parser_does(error, monkeypatch):
    def broken(*args, **kwargs):
        raise error("parser trouble")

    # A parser that fails in any way, for intake and the validator only (pytest keeps its own).
    failing_ast = types.ModuleType("ast")
    failing_ast.__dict__.update(vars(ast))
    failing_ast.parse = broken
    monkeypatch.setattr(intake_module, "ast", failing_ast)
    monkeypatch.setattr(program_module, "ast", failing_ast)
    result = intake(DEF + "cur\n", SIG)
    assert isinstance(result, Rejection) and result.reason == "syntax"


@pytest.mark.parametrize(("reply", "outcome"), [
    ("```" + "a" * 99_000, "signature"),  # a fence line without an end (was quadratic in a regex)
    ("```a" * 24_000, "signature"),
    (DEF + "cur\n" + "prose (\n" * 9_000, "program"),  # thousands of trailing lines that never parse
    (DEF + "cur +\n" * 9_000, "syntax"),
])
def test_hostile_reply_shapes_get_their_answer(reply, outcome):
    result = intake(reply, SIG)
    assert (result.reason if isinstance(result, Rejection) else "program") == outcome
