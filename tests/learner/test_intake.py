"""Program intake: extraction from reply text and validation with typed rejections."""

from __future__ import annotations

import pytest

from relic_envs import get_benchmark
from relic_envs.seeds import seed_source
from relic_learner.intake import Program, Rejection, extract_function, intake

SIG = get_benchmark("dgc").signatures()["A"]
DEF = "def select_values_A(cur, delta, u, t, violation_now, repair_gain):\n    return np.asarray(cur)\n"


def test_fenced_block_with_prose_around_it():
    reply = f"Sure! Here is the improved skill.\n\n```python\n{DEF}```\n\nIt keeps values fixed."
    program = intake(reply, SIG)
    assert isinstance(program, Program)
    assert program.source == "import numpy as np\n\n" + DEF


def test_prose_before_the_function_is_discarded_with_what_it_contains():
    # Only prose is meant to go, but "discard text preceding the function" (C.2) has no
    # way to tell a decorator written in prose apart: it is discarded too.
    reply = "We could decorate it:\n@staticmethod\n" + DEF
    assert intake(reply, SIG).source == "import numpy as np\n\n" + DEF


def test_raw_source_drops_leading_and_trailing_prose():
    reply = "I reasoned about conflicts first.\n" + DEF + "\nThis version is safer.\n"
    program = intake(reply, SIG)
    assert isinstance(program, Program)
    assert program.source == "import numpy as np\n\n" + DEF


def test_a_parsing_block_keeps_its_helpers_and_imports():
    block = "import math\n\ndef helper(x):\n    return x\n\n" + DEF.replace("np.asarray(cur)", "np.asarray(helper(cur))")
    program = intake(f"```\n{block}```", SIG)
    assert isinstance(program, Program)
    assert "def helper" in program.source and "import math" in program.source


def test_the_last_defining_block_wins_and_nothing_else_is_rewritten():
    old = DEF.replace("np.asarray(cur)", "cur")
    reply = f"```python\n{old}```\nBetter:\n```python\nimport numpy as np\n{DEF}```"
    assert intake(reply, SIG).source == "import numpy as np\n" + DEF


def test_seed_sources_pass_through_unchanged():
    source = seed_source("dgc", "A")
    assert intake(source, SIG).source == source


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("no code here at all", "signature"),
        ("def select_values_B(cur, delta, u, t, violation_now, repair_gain):\n    return cur\n", "signature"),
        ("def select_values_A(cur, delta, u, t, repair_gain, violation_now):\n    return cur\n", "signature"),
        ("def select_values_A(cur, delta, u, t, violation_now, repair_gain, extra=1):\n    return cur\n", "signature"),
        ("```\n@staticmethod\ndef select_values_A(cur, delta, u, t, violation_now, repair_gain):\n    return cur\n```", "signature"),
        ("def select_values_A(cur, delta, u, t, violation_now, repair_gain):\n    return cur +\n", "syntax"),
        ("import os\n" + DEF, "forbidden"),
        ("Use this:\n```python\nimport os\n" + DEF + "```", "forbidden"),
        (DEF.replace("np.asarray(cur)", "eval('cur')"), "forbidden"),
        (DEF.replace("np.asarray(cur)", "np.random.rand(3)"), "forbidden"),
        ("x" * 200_000, "syntax"),
    ],
)
def test_rejections_are_typed(reply, reason):
    result = intake(reply, SIG)
    assert isinstance(result, Rejection)
    assert result.reason == reason, result.detail


def test_non_text_is_rejected_not_raised():
    assert intake(None, SIG).reason == "syntax"  # type: ignore[arg-type]


def test_extract_returns_none_without_the_function():
    assert extract_function("def other():\n    pass\n", "select_values_A") is None


def test_digest_identifies_the_source():
    a, b = intake(DEF, SIG), intake(DEF + "\n# note\n", SIG)
    assert a.digest != b.digest and a.digest == intake(DEF, SIG).digest
