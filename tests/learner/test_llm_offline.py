"""The offline backend: AST mutants of the DGC seeds keep the paper's exact signatures."""

from __future__ import annotations

import ast
import collections
import logging
import random
import re
from pathlib import Path

import pytest

import relic_envs
from relic_envs.core.program import check_source
from relic_learner.llm import OfflineClient
from relic_learner.llm.mutate import MUTATION_KINDS, find_program, mutate_program, normalize

SIGNATURES = relic_envs.get_benchmark("dgc").signatures("paper")
SEED_DIR = Path(relic_envs.__file__).parent / "seeds" / "dgc" / "paper"
SEEDS = {role: (SEED_DIR / f"{role}.py").read_text() for role in SIGNATURES}
PRINCIPLE = re.compile(r"\ATYPE: (STRATEGY|PATTERN|COORDINATION)\nPRINCIPLE: \S.{40,}\Z", re.DOTALL)


def lift_prompt(role: str, parent: str | None = None) -> list[dict]:
    """A prompt shaped like the paper's Lift prompt (Appendix C.3), parent fenced."""
    sig = SIGNATURES[role]
    parent = SEEDS[role] if parent is None else parent
    user = (
        f"[Target Function]\nCompany: agent {role}\nSignature: {sig.header()}\nDescription: {sig.purpose}\n\n"
        "[Principle to Implement]\nResolve conflicts before chasing improvements.\n\n"
        f"[Current Skill (parent)]\n```python\n{parent}\n```\n\n"
        "Write a new version of the skill. Return only the complete function."
    )
    return [{"role": "system", "content": "You are an expert algorithm designer."}, {"role": "user", "content": user}]


@pytest.fixture
def client():
    return OfflineClient(seed=11)


def kind_of(reply: str) -> str:
    return re.search(r"\] (\w+) mutation:", reply).group(1)


@pytest.mark.parametrize("role", sorted(SIGNATURES))
def test_mutants_parse_and_keep_the_exact_signature(client, role):
    sig = SIGNATURES[role]
    for _ in range(25):
        reply = client.complete(lift_prompt(role), "proposal", tag="lift").text
        assert "```python\n" in reply
        program = find_program(reply)
        tree = check_source(program, sig)  # raises unless name and parameters are exactly the paper's
        fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == sig.function)
        assert [a.arg for a in fn.args.args] == list(sig.param_names)
        assert normalize(program) != normalize(SEEDS[role])  # a mutant, not the parent


def test_mutants_run_as_policies_on_a_real_instance(client):
    instance = relic_envs.splits("dgc").train[0][:1]
    parents = {r: relic_envs.ProgramPolicy(SEEDS[r], SIGNATURES[r]) for r in SIGNATURES}
    valid = 0
    for i in range(6):
        role = "ABC"[i % 3]
        program = find_program(client.complete(lift_prompt(role), "proposal").text)
        team = {**parents, role: relic_envs.ProgramPolicy(program, SIGNATURES[role])}
        valid += relic_envs.rollout("dgc", team, instance)[0].valid
    assert valid >= 4  # a mutant may break at run time, like an LLM's program, but most must not


def test_replies_are_deterministic_for_a_seed_and_differ_across_calls_and_seeds():
    def draws(seed: int) -> list[str]:
        c = OfflineClient(seed=seed)
        return [c.complete(lift_prompt("A"), "proposal").text for _ in range(12)]

    first, again, other = draws(5), draws(5), draws(6)
    assert first == again
    assert len(set(first)) >= 8  # the call index enters the draw: the same prompt gives new mutants
    assert first != other


def test_a_cache_salt_replaces_the_call_index_so_a_resumed_run_replays_its_draws():
    run = OfflineClient(seed=4)
    texts = [run.complete(lift_prompt("A"), "proposal", cache_salt=[4, i]).text for i in range(5)]
    resumed = OfflineClient(seed=4)  # its call index starts again at 0
    assert resumed.complete(lift_prompt("A"), "proposal", cache_salt=[4, 3]).text == texts[3]
    assert len(set(texts)) >= 4


def test_the_prompt_enters_the_draw():
    a = OfflineClient(seed=0).complete(lift_prompt("B"), "proposal").text
    other_prompt = lift_prompt("B")
    other_prompt[0]["content"] += " Be concise."
    b = OfflineClient(seed=0).complete(other_prompt, "proposal").text
    assert a != b  # same seed and call index: only the (system) message differs


def test_every_mutation_kind_appears_over_many_draws(client):
    kinds = collections.Counter(kind_of(client.complete(lift_prompt("C"), "proposal").text) for _ in range(60))
    assert set(kinds) == set(MUTATION_KINDS), kinds


def _constants(tree: ast.AST) -> list:
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]


def _shape(tree: ast.AST) -> list[str]:
    return [type(n).__name__ for n in ast.walk(tree) if not isinstance(n, ast.operator | ast.cmpop)]


@pytest.mark.parametrize("seed", range(8))
def test_a_constant_mutation_changes_exactly_one_number(seed):
    parent = ast.parse(SEEDS["A"])
    mutant = ast.parse(mutate_program(SEEDS["A"], random.Random(seed), kind="constant").source)
    assert _shape(parent) == _shape(mutant)
    changed = [(a, b) for a, b in zip(_constants(parent), _constants(mutant)) if a != b]
    assert len(changed) == 1 and all(isinstance(v, int | float) for v in changed[0])


@pytest.mark.parametrize("seed", range(8))
def test_an_operator_mutation_swaps_exactly_one_operator(seed):
    def ops(tree):
        return [type(n).__name__ for n in ast.walk(tree) if isinstance(n, ast.operator | ast.cmpop)]

    parent = ast.parse(SEEDS["B"])
    mutant = ast.parse(mutate_program(SEEDS["B"], random.Random(seed), kind="operator").source)
    assert _shape(parent) == _shape(mutant) and _constants(parent) == _constants(mutant)
    assert sum(a != b for a, b in zip(ops(parent), ops(mutant))) == 1


@pytest.mark.parametrize("role", sorted(SIGNATURES))
def test_a_term_mutation_uses_one_of_the_functions_own_parameters(role):
    sig = SIGNATURES[role]
    for seed in range(6):
        source = mutate_program(SEEDS[role], random.Random(seed), kind="term").source
        used = re.findall(r"np\.(?:mean|max|min|std)\((\w+)\)", source)
        assert used and set(used) <= set(sig.param_names), source
        check_source(source, sig)


def test_mutation_never_touches_subscripts_or_axis_keywords():
    source = "import numpy as np\n\ndef f(x, y):\n    return x[:, 2].sum(axis=1) + y[0]\n"
    for seed in range(20):
        mutant = mutate_program(source, random.Random(seed), kind="constant").source
        assert "x[:, 2]" in mutant and "axis=1" in mutant and "y[0]" in mutant


def test_a_program_with_no_site_comes_back_unchanged_and_valid():
    result = mutate_program("def f(x):\n    return x\n", random.Random(0))
    assert result.kind == "none" and normalize(result.source) == normalize("def f(x):\n    return x")


def test_a_forced_kind_is_checked():
    with pytest.raises(ValueError, match="constant, operator, term"):
        mutate_program(SEEDS["A"], random.Random(0), kind="rewrite")


def test_the_parent_is_found_unfenced_after_a_signature_line():
    sig = SIGNATURES["A"]
    body = SEEDS["A"].split("\n\n\n", 1)[1]  # the def without the import
    text = f"Signature: {sig.header()}\n\n[Current Skill (parent)]\n{body}\nReturn only the function."
    assert normalize(find_program(text)) == normalize(body)
    reply = OfflineClient(seed=1).complete([{"role": "user", "content": text}], "proposal").text
    check_source(find_program(reply), sig)


def test_no_parent_gives_a_reply_without_code_but_still_a_counted_call(client):
    out = client.complete([{"role": "user", "content": "Write a function."}], "proposal", tag="lift")
    assert "```" not in out.text and "no LLM" in out.text and find_program(out.text) is None
    assert client.ledger.calls["proposal"] == 1 and client.ledger.by_tag["lift"] == 1


def test_auxiliary_replies_have_the_type_principle_shape_without_code(client):
    reply = client.complete(lift_prompt("A"), "proposal").text
    mutant = find_program(reply)
    distill = [{"role": "user", "content": f"[Skill Code]\n```python\n{mutant}\n```\nExtract one principle."}]
    principle = client.complete(distill, "auxiliary", tag="distill").text
    generic = client.complete([{"role": "user", "content": "Summarise."}], "auxiliary", tag="cross_distill").text
    expected_type = {"constant": "STRATEGY", "operator": "PATTERN", "term": "COORDINATION"}[kind_of(reply)]
    assert principle.startswith(f"TYPE: {expected_type}\n")
    for text in (principle, generic):
        assert PRINCIPLE.match(text), text
        assert "def " not in text and "np." not in text
        assert not set(re.findall(r"\w+", text)) & set(SIGNATURES["A"].param_names) - {"t", "u"}
    assert client.ledger.calls["auxiliary"] == 2 and client.ledger.calls["proposal"] == 1


def test_a_reveal_gets_plain_sentences(client):
    text = client.complete([{"role": "user", "content": "[Source Code] ..."}], "auxiliary", tag="reveal").text
    assert not text.startswith("TYPE:") and text.count(".") >= 2


def test_it_announces_itself_as_no_llm(caplog):
    with caplog.at_level(logging.WARNING, logger="relic_learner.llm.offline"):
        client = OfflineClient(seed=2)
    assert any("no language model" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)
    assert "no LLM" in client.describe() and "\n" not in client.describe()
    out = client.complete(lift_prompt("A"), "proposal")
    assert (out.model, out.prompt_tokens, out.completion_tokens, out.attempts, out.cached) == ("offline", 0, 0, 1, False)
    assert "no LLM" in out.text


def test_bad_seed_and_purpose_are_rejected():
    with pytest.raises(TypeError, match="seed"):
        OfflineClient(seed="0")
    with pytest.raises(ValueError, match="'proposal', 'auxiliary'"):
        OfflineClient().complete(lift_prompt("A"), "distill")
