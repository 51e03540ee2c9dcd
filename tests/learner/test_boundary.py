"""The information boundary for text (Appendix C.5): a model that answers Reveal, Distill
and Cross-distill with code must not carry a role's source into another role's prompt."""

from __future__ import annotations

import re

import pytest

from relic_envs.seeds import seed_source
from relic_learner.boundary import Stripped, is_code, strip, strip_code
from relic_learner.cli import main
from relic_learner.evaluate import TeamEvaluator
from relic_learner.llm import OpenAIClient
from relic_learner.relic import Relic, RelicConfig

FENCE = re.compile(r"```python\n(.*?)```", re.S)
DEF = re.compile(r"def (select_next_[ABC])\(")


def leaky_reply(body: dict) -> str:
    """Proposals: the parent unchanged; every knowledge reply: the code it was shown, three ways."""
    user = body["messages"][-1]["content"]
    code = FENCE.findall(user)[-1]
    if body["messages"][0]["role"] == "system":
        return f"```python\n{code}```"
    first = code.strip().splitlines()[0]
    leak = f"Serve near customers first. Inline: `{first.rstrip(':')}` here.\n```python\n{code}```\n{code}"
    if "Extract the core algorithmic principle" in user:
        return leak
    return f"TYPE: STRATEGY\nPRINCIPLE: {leak}\nTYPE: COORDINATION\nPRINCIPLE: Split the customers by area."


@pytest.mark.parametrize(("text", "expected"), [
    ("Serve far customers first; keep routes short.", False),
    ("TYPE: PATTERN", False),
    ("well-known", False),  # parses (a subtraction), but is prose
    ("Inline: `np.clip(d, 0, 1)`", False),  # the whole line does not parse; the span alone is code
    ("np.clip(d, 0, 1)", True),
    ("x = np.argmax(scores)", True),
    ("def f(a):\n    return a", True),
    ("    if d < 3:\n        return j", True),  # an indented fragment
])
def test_is_code_parses_rather_than_matching_words(text, expected):
    assert is_code(text) == expected


def test_strip_code_keeps_the_prose_and_the_format():
    text, removed = strip_code("TYPE: STRATEGY\nPRINCIPLE: Go far first.\n```\nd = dist[i] + 1\n```\n"
                               "def g(x):\n    return x\nTYPE: PATTERN\nPRINCIPLE: Use `min(d)` sparingly.")
    assert removed == 3
    assert [line.strip() for line in text.splitlines() if line.strip()] == [
        "TYPE: STRATEGY", "PRINCIPLE: Go far first.", "TYPE: PATTERN", "PRINCIPLE: Use   sparingly."]


def test_a_leaky_model_puts_no_foreign_source_in_any_prompt(tmp_path, openai_server):
    openai_server.responder = leaky_reply
    client = OpenAIClient("leaky", base_url=openai_server.base_url, api_key="test", backoff_s=0.0)
    config = RelicConfig(env="hmtsp", llm="openai:leaky", batches=2, proposals=2, seed=2, workers=1)
    with TeamEvaluator("hmtsp", sandbox=False, workers=1) as evaluator:
        relic = Relic(config, tmp_path / "run", llm=client, evaluator=evaluator)
        relic.learn()
    prompts = ["\n".join(m["content"] for m in r["body"]["messages"]) for r in openai_server.requests]
    assert any("[Principle to Implement]" in p for p in prompts) and any("[Public Principle]" in p for p in prompts)
    for prompt in prompts:
        assert len(set(DEF.findall(prompt))) <= 1, "a prompt holds the source of two roles"
    events = relic.run.events()
    cut = [e for e in events if e["kind"] == "boundary"]
    assert {e["tag"] for e in cut} == {"reveal", "cross_distill"} and all(e["removed"] >= 2 for e in cut)
    texts = [e["text"] for e in events if e["kind"] in ("reveal", "distill", "cross_distill")]
    assert texts and all("Serve near customers first." in t or "Split" in t for t in texts)
    assert not any("def " in t or "return" in t for t in texts)


# -- every way a reply can carry code (issue 39) ---------------------------------------------
SEED_B = seed_source("hmtsp", "B")
BEFORE, AFTER = "Serve near customers first.", "Split the work by area."


def _lines(code: str) -> list[str]:
    return [line for line in code.strip("\n").splitlines() if line.strip()]


def _one_line_def(code: str) -> str:
    lines = [line.strip() for line in _lines(code)]
    header = next(line for line in lines if line.startswith("def "))
    return f"In short: {header} return {lines[-1].removeprefix('return ')}"


LEAK_FORMS = {  # each writes the whole program, one way
    "fenced": lambda code: f"```python\n{code}\n```",
    "fenced, untagged, tildes": lambda code: f"~~~\n{code}\n~~~",
    "fenced, never closed": lambda code: f"```\n{code}",
    "unfenced": lambda code: code,
    "indented": lambda code: "\n".join("    " + line for line in _lines(code)),
    "inline": lambda code: "It does " + ", then ".join(f"`{line.strip()}`" for line in _lines(code)) + ".",
    "in a sentence": lambda code: "The skill works like this: " + "; next, ".join(
        line.strip() for line in _lines(code)) + ".",
    "one sentence a line": lambda code: " ".join(f"It does {line.strip()} and moves on." for line in _lines(code)),
    "numbered": lambda code: "\n".join(f"{k}. {line}" for k, line in enumerate(_lines(code), 1)),
    "line numbers": lambda code: "\n".join(f"{k:>3} | {line}" for k, line in enumerate(_lines(code), 1)),
    "interpreter prompts": lambda code: "\n".join(
        (">>> " if k == 0 else "... ") + line for k, line in enumerate(_lines(code))),
    "bullets": lambda code: "\n".join(f"- {line.strip()}" for line in _lines(code)),
    "quoted": lambda code: "\n".join(f"> {line}" for line in _lines(code)),
    "after a colon": lambda code: "\n".join(f"Key step: {line.strip()}" for line in _lines(code)),
    "in quotes": lambda code: " ".join(f'The line "{line.strip()}" matters.' for line in _lines(code)),
    "table": lambda code: "| step | what |\n|---|---|\n" + "\n".join(
        f"| {k} | {line.strip()} |" for k, line in enumerate(_lines(code))),
    "html": lambda code: f"<pre>{code}</pre>\nAlso " + " ".join(f"<code>{line.strip()}</code>" for line in _lines(code)),
    "one-line def after prose": _one_line_def,
    "lambda assignment": lambda code: "\n".join(
        f"{line.strip()}, or as a function, pick = lambda: {line.strip().split(' = ', 1)[1]}"
        for line in _lines(code) if " = " in line),
}


def _source_lines(code: str) -> set[str]:
    return {" ".join(line.split()) for line in _lines(code) if len(line.strip()) >= 6}


def _surviving(code: str, text: str) -> list[str]:
    flat = " ".join(text.split())
    return sorted(line for line in _source_lines(code) if line in flat)


@pytest.mark.parametrize("form", list(LEAK_FORMS))
def test_each_form_of_code_is_cut_and_the_prose_around_it_kept(form):
    reply = f"{BEFORE}\n{LEAK_FORMS[form](SEED_B)}\n{AFTER}"
    assert _surviving(SEED_B, reply)  # the form does carry the program
    text, removed = strip_code(reply)
    assert removed >= 1
    assert _surviving(SEED_B, text) == []
    assert not re.search(r"def select_next_B|np\.|candidate_costs\[", text)
    assert text.splitlines()[0] == BEFORE and AFTER in text


@pytest.mark.parametrize("text", [
    "Prefer moves with positive gain; avoid ties.",
    "TYPE: STRATEGY\nPRINCIPLE: Serve far customers first, then fill gaps near the depot.",
    "1. Prefer far customers.\n2. Keep routes short.\n3. Wait when a teammate is closer.",
    "- If a teammate covers a region, skip it.\n- Otherwise take the cheapest task.",
    "Serve customers (far ones) first; e.g. the outliers, i.e. the far ones.",
    "Use a 1.2x margin: take the specialty task when it is within 20% of the cheapest.",
    "When cost > budget, stop. Rule of thumb: cost/benefit >= 1 means act.",
    "Return early when nothing fits; always return the cheapest candidate, never return None.",
    "It is not cheap to wait; a well-known, high-level idea is cost-aware routing.",
    "Each vehicle(s) and route(s) should stay balanced. Note (A): results [1] agree.",
    "**Strategy:** serve far first.\n**Why:** it shortens the tail.",
    "Balance load: the longest route should wait.\n> Then take the near ones.",
    "Gain = saved cost minus waiting cost. First. Then second.",
    "Agents should yield when their load is high; they await teammates and return home when idle.",
    "Whether a boundary case triggers action, or whether one signal adds to or offsets another, "
    "changes which situations the agent handles.",
])
def test_prose_survives_whole(text):
    assert strip_code(text) == (text, 0)


def test_the_count_of_what_was_cut():
    reply = (f"{BEFORE}\n1. def f(x):\n2.     return x + 1\nIt keeps best = max(d) there.\n"
             "Use `np.clip(d, 0, 1)` sparingly.\n```python\nimport numpy as np\n```")
    cut = strip(reply)
    assert cut.text == f"{BEFORE}\nIt keeps   there.\nUse   sparingly."
    assert cut.segments == 4 and cut.forms == {"fenced": 1, "inline": 1, "in_sentence": 1, "lines": 1}
    assert cut.lines == 7  # two numbered lines, the sentence, the inline span's line, the three fenced lines
    assert cut.chars == len("1. def f(x):") + len("2.     return x + 1") + len("best = max(d)") \
        + len("`np.clip(d, 0, 1)`") + len("```python") + len("import numpy as np") + len("```")
    assert strip("Move late.") == Stripped("Move late.")


def _leak_every_form(code: str, reveal: bool) -> str:
    """A knowledge reply: the role's program in every form of LEAK_FORMS, around a principle."""
    leaks = "\n\n".join(form(code) for form in LEAK_FORMS.values())
    if reveal:
        return f"{BEFORE}\n{leaks}"
    more = "\n".join(LEAK_FORMS[form](code) for form in ("in a sentence", "one-line def after prose"))
    return f"TYPE: STRATEGY\nPRINCIPLE: {BEFORE}\n{leaks}\nTYPE: COORDINATION\nPRINCIPLE: {AFTER} {more}"


def test_a_model_leaking_every_form_puts_no_foreign_source_line_in_any_request(
        tmp_path, openai_server, leaky_model, capsys):
    model = leaky_model.LeakyModel(_leak_every_form)
    openai_server.responder = model
    client = OpenAIClient("leaky", base_url=openai_server.base_url, api_key="test", backoff_s=0.0)
    config = RelicConfig(env="hmtsp", llm="openai:leaky", batches=2, proposals=2, seed=2, workers=1)
    with TeamEvaluator("hmtsp", sandbox=False, workers=1) as evaluator:
        relic = Relic(config, tmp_path / "run", llm=client, evaluator=evaluator)
        relic.learn()
    lines = {r: set().union(*(_source_lines(p) for p in model.programs[r])) for r in "ABC"}
    unique = {r: lines[r] - set().union(*(lines[o] for o in "ABC" if o != r)) for r in "ABC"}
    assert {"best = best_own", "if own.size:"} <= unique["B"] and any(
        line.startswith("def select_next_B(") for line in unique["B"])
    assert len(model.programs["B"]) > 1  # B's programs changed during the run: the leaks carry them too
    leaked = {line for line in unique["B"] if any(line in " ".join(reply.split()) for reply in model.replies)}
    assert {"best = best_own", "if own.size:"} <= leaked and any(line.startswith("def select_next_B(") for line in leaked)
    requests = [r["body"] for r in openai_server.requests]
    assert len(requests) == 3 * 2 * 2 + len(model.replies)
    assert sum(leaky_model.role(body) != "B" for body in requests) >= 16
    for body in requests:
        role = leaky_model.role(body)
        text = " ".join("\n".join(m["content"] for m in body["messages"]).split())
        foreign = sorted(line for other in "ABC" if other != role for line in unique[other] if line in text)
        assert foreign == [], f"a request of role {role} carries teammates' source lines"
    events = relic.run.events()
    cut = [e for e in events if e["kind"] == "boundary"]
    assert {e["tag"] for e in cut} == {"reveal", "distill", "cross_distill"}
    assert len(cut) == len(model.replies) and not any(e["rejected"] for e in cut)  # the principle survives each
    assert all(set(e["forms"]) == {"fenced", "inline", "lines", "in_sentence"} for e in cut)
    texts = [e["text"] for e in events if e["kind"] in ("reveal", "distill", "cross_distill")]
    assert texts and all(BEFORE in t or AFTER in t for t in texts)
    total = events[-1]["boundary"]
    assert events[-1]["kind"] == "run_end" and total["replies"] == len(cut)
    assert total["lines"] == sum(e["lines"] for e in cut) > 0 and total["chars"] == sum(e["chars"] for e in cut)
    assert main(["show", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert (f"information boundary: code cut from {len(cut)} of {len(model.replies)} auxiliary replies "
            f"(0 left empty): {total['segments']} segments, {total['lines']} lines, {total['chars']} characters") in out
