"""The information boundary for text (Appendix C.5): a model that answers Reveal, Distill
and Cross-distill with code must not carry a role's source into another role's prompt."""

from __future__ import annotations

import re

import pytest

from relic_learner.boundary import is_code, strip_code
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
