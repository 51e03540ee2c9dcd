"""The information boundary against encoded code (issue 55, item 4).

A model can answer Reveal, Distill or Cross-distill with its program escaped as a
string: JSON (``\\n``, ``\\"``), double-escaped JSON, a Python ``repr``, HTML entities,
percent-encoding, base64, look-alike or invisible characters. Unescaped, such text
keeps its ``def`` line, parameter names, docstring and whole statements, and a
teammate's prompt (Bridge, Distill through the public tree, Lift, Cross-distill) would
carry them. These tests encode a role's program in each form and check that nothing of
it survives :func:`relic_learner.boundary.strip` in *any* decoded view of what is left,
with a decoder of their own, and end to end, in every prompt a scripted server receives.
"""

from __future__ import annotations

import ast
import base64
import codecs
import html
import json
import re
import time
import unicodedata
import urllib.parse

import pytest

from relic_envs.seeds import seed_source
from relic_learner import prompts
from relic_learner.boundary import DECODE_ROUNDS, _decodings, strip, strip_code
from relic_learner.evaluate import TeamEvaluator
from relic_learner.llm import OpenAIClient
from relic_learner.principles import PublicTree, parse_principles
from relic_learner.relic import Relic, RelicConfig

SEED_B = seed_source("hmtsp", "B")
BEFORE, AFTER = "Serve near customers first.", "Split the work by area."


def _lines(code: str) -> list[str]:
    return [line for line in code.strip("\n").splitlines() if line.strip()]


def _every(code: str, escape) -> str:
    """``code`` with every character but letters and digits written by ``escape``."""
    return "".join(ch if ch.isalnum() else escape(ch) for ch in code)


def _highlighted(code: str) -> str:
    """HTML as a syntax highlighter writes it: a span per word, entities, a ``<br>`` per line."""
    spans = re.sub(r"\w+", lambda m: f'<span class="n">{m.group()}</span>', html.escape(code))
    return "<br>".join(spans.splitlines())


ENCODINGS = {  # each writes the whole program, one way
    "json string": json.dumps,
    "json object": lambda code: json.dumps({"principle": "Move late.", "code": code}),
    "json, tabs and CRLF": lambda code: json.dumps(code.replace("    ", "\t").replace("\n", "\r\n")),
    "json, double-escaped": lambda code: json.dumps(json.dumps(code)),
    "json, every character \\u-escaped": lambda code: '"' + "".join(f"\\u{ord(ch):04x}" for ch in code) + '"',
    "python repr": repr,
    "python \\x escapes": lambda code: "'" + _every(code, lambda ch: f"\\x{ord(ch):02x}") + "'",
    "markdown backslash escapes": lambda code: re.sub(r"([_*()\[\]#.!+-])", r"\\\1", code),
    "html named entities": html.escape,
    "html, <br> and &nbsp;": lambda code: html.escape(code).replace("\n", "<br>").replace(" ", "&nbsp;"),
    "html decimal entities": lambda code: _every(code, lambda ch: f"&#{ord(ch)};"),
    "html hex entities": lambda code: _every(code, lambda ch: f"&#x{ord(ch):x};"),
    "html, double-escaped": lambda code: html.escape(html.escape(code)),
    "html, highlighted": _highlighted,
    "json inside html": lambda code: html.escape(json.dumps(code)),
    "html inside json": lambda code: json.dumps(html.escape(code)),
    "percent-encoded": urllib.parse.quote,
    "percent-encoded, nothing safe": lambda code: urllib.parse.quote(code, safe=""),
    "zero-width characters": lambda code: re.sub(r"(?<=\w)(?=\w)", "\u200b", code),
    "fullwidth characters": lambda code: "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in code),
    "base64, a line each": lambda code: "\n".join(base64.b64encode(line.encode()).decode() for line in _lines(code)),
}


# -- an independent decoder: what a reader could recover from a text ---------------------------
_BACKSLASH = re.compile(r"\\(?:u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|[0-7]{1,3}|[\\\"'abfnrtv/])")
_MARKDOWN = re.compile(r"\\([!-/:-@\[-`{-~])")  # CommonMark: any ASCII punctuation may be escaped
_BASE64 = re.compile(r"(?<![\w+/=])(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?(?![\w+/=])")


def _unescape(match: re.Match[str]) -> str:
    token = match.group()
    if token == "\\/":
        return "/"
    try:
        return codecs.decode(token, "unicode_escape")
    except UnicodeDecodeError:
        return token


def _unbase64(match: re.Match[str]) -> str:
    try:
        text = base64.b64decode(match.group(), validate=True).decode("utf-8")
    except ValueError:
        return match.group()
    return text if all(ch.isprintable() or ch in "\n\t" for ch in text) else match.group()


def decoded_views(text: str, rounds: int = 8) -> list[str]:
    """``text`` and what every round of unescaping makes of it (all encodings at once, each round)."""
    views = [text]
    for _ in range(rounds):
        t = re.sub(r"<br\s*/?>", "\n", views[-1], flags=re.I)
        t = html.unescape(re.sub(r"</?[A-Za-z][^<>]*>", "", t))
        t = urllib.parse.unquote(_MARKDOWN.sub(r"\1", _BACKSLASH.sub(_unescape, t)))
        t = "".join(ch for ch in unicodedata.normalize("NFKC", t) if unicodedata.category(ch) != "Cf")
        t = _BASE64.sub(_unbase64, t)
        if t == views[-1]:
            break
        views.append(t)
    return views


def markers(code: str) -> dict[str, re.Pattern[str]]:
    """What of a program must not cross: its ``def`` line, each parameter name, its docstring, each statement."""
    fn = next(node for node in ast.parse(code).body if isinstance(node, ast.FunctionDef))
    found = {"def line": re.compile(rf"def\s+{fn.name}\s*\(")}
    for arg in fn.args.args:
        found[f"parameter {arg.arg}"] = re.compile(rf"(?<!\w){arg.arg}(?!\w)")
    doc = " ".join(ast.get_docstring(fn).split())
    found["docstring"] = re.compile(re.escape(doc[:40]))
    for line in _lines(code):
        flat = " ".join(line.split())
        if len(flat) >= 6 and not flat.startswith(('"""', "def ")):
            found[f"statement {flat}"] = re.compile(re.escape(flat))
    return found


MARKERS_B = markers(SEED_B)


def leaks(text: str, patterns: dict[str, re.Pattern[str]] = MARKERS_B) -> list[str]:
    """The markers found in any decoded view of ``text``."""
    flat = [" ".join(view.split()) for view in decoded_views(text)]
    return sorted(name for name, pattern in patterns.items() if any(pattern.search(view) for view in flat))


def test_the_markers_cover_the_def_line_parameters_docstring_and_statements():
    names = set(MARKERS_B)
    assert {"def line", "docstring", "parameter candidate_ids", "parameter route_cost"} <= names
    assert {"statement best = best_own", "statement if own.size:", "statement return -1"} <= names
    assert leaks(SEED_B) == sorted(MARKERS_B)


@pytest.mark.parametrize("form", list(ENCODINGS))
def test_each_encoding_is_cut_and_the_prose_around_it_kept(form):
    encoded = ENCODINGS[form](SEED_B)
    assert leaks(encoded) == sorted(MARKERS_B)  # the form carries the whole program, recoverably
    reply = f"{BEFORE}\n{encoded}\n{AFTER}"
    cut = strip(reply)
    assert leaks(cut.text) == [], f"{form}: the program survives, encoded"
    assert cut.forms.get("encoded", 0) >= 1 and cut.chars > 0 and not any(t in cut.text for t in (
        "select_next_B", "candidate_ids", "Cheapest"))  # nor in the text as written
    assert cut.text.splitlines()[0] == BEFORE and AFTER in cut.text


@pytest.mark.parametrize("form", [form for form in ENCODINGS if form != "json object"])
def test_a_reply_that_is_only_encoded_code_is_left_empty_like_one_of_plain_code(form):
    """A reply of nothing but code contributes no text (its ``boundary`` event says ``rejected``), encoded or not."""
    assert strip(SEED_B).text == ""
    cut = strip(ENCODINGS[form](SEED_B))
    assert cut.text == "" and cut.segments >= 1, repr(cut.text[:80])


@pytest.mark.parametrize("form", ["json string", "json, double-escaped", "html named entities", "percent-encoded"])
def test_encoded_code_inside_a_principle_line_never_reaches_the_public_tree(form):
    """The public-tree summary that Distill and Bridge prompts show is built from the principle lines."""
    code = ENCODINGS[form](SEED_B)
    first = ENCODINGS[form](_lines(SEED_B)[1])  # the def line alone, inline
    reply = (f"TYPE: STRATEGY\nPRINCIPLE: {BEFORE} The rule, as the program has it: {code} and so on.\n"
             f"TYPE: COORDINATION\nPRINCIPLE: {AFTER} Key line: {first}")
    assert len(leaks(reply)) == len(MARKERS_B)
    entries = parse_principles(strip(reply).text)
    assert [kind for kind, _ in entries] == ["STRATEGY", "COORDINATION"]
    tree = PublicTree()
    for kind, text in entries:
        tree.add(text, kind, "B", 1, "distill")
    summary = tree.summary()
    assert leaks(summary) == [] and BEFORE in summary and AFTER in summary


def test_a_cut_of_encoded_code_removes_the_escapes_as_written():
    code = 'def f(x):\n    """Add one."""\n    return x + 1\n'
    cut = strip(f"{BEFORE} {json.dumps({'code': code})} {AFTER}")
    # As written, "f(x)" and "x + 1" parse (in_sentence); the decoded view cuts the rest, escapes and all.
    assert cut.text == f'{BEFORE} {{"code": " \\n"}} {AFTER}'
    assert cut.forms == {"encoded": 1, "in_sentence": 2} and cut.segments == 3 and cut.lines == 1
    assert cut.chars == len(json.dumps(code)) - len('"\\n"')  # all but the closing escaped break and quotes
    html_cut = strip(f"{BEFORE}\n{html.escape(code).replace(chr(10), '<br>')}\n{AFTER}")
    assert html_cut.text == f"{BEFORE}\n{AFTER}" and html_cut.forms == {"encoded": 1, "in_sentence": 2}


def test_raw_code_is_cut_as_before_and_not_counted_again():
    """Raw code and its decoded view are the same code: one cut, counted once, by its own form."""
    raw = f"{BEFORE}\n```python\n{SEED_B}```\nIt keeps best = max(d) there; R&amp;D is 20% of it.\n{AFTER}"
    cut = strip(raw)
    assert cut.forms == {"fenced": 1, "in_sentence": 1}
    assert [line for line in cut.text.splitlines() if line] == [
        BEFORE, "It keeps   there; R&amp;D is 20% of it.", AFTER]


def test_decoding_is_bounded_in_rounds_and_length():
    nested = "".join(f"\\u{ord(ch):04x}" for ch in "best = max(d)")  # no code as written
    for _ in range(DECODE_ROUNDS - 1):
        nested = json.dumps(nested)  # DECODE_ROUNDS layers in all
    assert strip_code(f"{BEFORE} {nested} {AFTER}") == (f"{BEFORE}   {AFTER}", 1)  # the run cut, one blank left
    deeper = json.dumps(nested)
    views, _ = _decodings(deeper)  # one layer more: the rounds stop at the bound
    assert len(views) == DECODE_ROUNDS and all(len(v) <= len(deeper) for v, _, _ in views)
    heavy = ("&amp;amp;amp;amp;amp;quot; \\\\\\\\n %2525 \u200b " * 2000)[:20_000]
    views, _ = _decodings(heavy)
    assert len(views) <= DECODE_ROUNDS and all(len(v) <= len(heavy) for v, _, _ in views)
    start = time.perf_counter()
    strip(heavy)
    strip(json.dumps(SEED_B * 30)[:20_000])
    assert time.perf_counter() - start < 20  # linear: well under a second each on a laptop


# -- what must survive --------------------------------------------------------------------------
PROSE = [
    "Prefer moves with positive gain; avoid ties.",
    "TYPE: STRATEGY\nPRINCIPLE: Serve far customers first, then fill gaps near the depot.",
    "1. Prefer far customers.\n2. Keep routes short.\n3. Wait when a teammate is closer.",
    "Serve customers (far ones) first; e.g. the outliers, i.e. the far ones.",
    "Use a 1.2x margin: take the specialty task when it is within 20% of the cheapest.",
    "When cost > budget, stop. Rule of thumb: cost/benefit >= 1 means act.",
    "Return early when nothing fits; always return the cheapest candidate, never return None.",
    "Each vehicle(s) and route(s) should stay balanced. Note (A): results [1] agree.",
    "**Strategy:** serve far first.\n**Why:** it shortens the tail.",
    "Gain = saved cost minus waiting cost. First. Then second.",
    'TYPE: STRATEGY\nPRINCIPLE: Treat "near" customers as one cluster & serve R&D depots first; a 20% (or 50%) '
    "margin is enough.",
    "TYPE: COORDINATION\nPRINCIPLE: Don't chase a task a teammate's route covers \u2014 it's wasted; \u201cyield\u201d "
    "instead\u2026 as a caf\u00e9 queue would.",
    "Keep 10%\u201315% slack when loads are high; compare A/B; the path C:\\new\\table is irrelevant.",
    "Prefer <b>far</b> customers &amp; keep routes short; cost &lt; budget means act, cost &gt; budget means wait.",
    "Serve far customers first.\\nThen keep routes short.\\n\\tWait when a teammate is closer.",
    "Internationalization responsibilities: characteristically straightforwardness.",
    "A 100%25 margin is too wide; %20 of the time it helps.",
]
PROSE_ENCODINGS = {
    "as written": lambda t: t,
    "json": json.dumps,
    "json, double-escaped": lambda t: json.dumps(json.dumps(t)),
    "html": html.escape,
    "html with <br>": lambda t: html.escape(t).replace("\n", "<br>"),
    "percent-encoded": urllib.parse.quote,
    "python repr": repr,
}


def _prompt_prose() -> list[str]:
    """The instructions of the paper's prompts (C.3-C.4), with the role's program and signature taken out."""
    fence = re.compile(r"```python\n.*?```\n?|^\[Source Signature\].*$", re.S | re.M)
    target, parent = "[Target Function]", SEED_B
    messages = [prompts.lift(target, parent, BEFORE), prompts.bridge(target, parent, AFTER, "A"),
                prompts.reflect(target, parent, "You pull weight on 3 of 5 instances; teammates cover the rest."),
                prompts.refine(target, parent), prompts.distill("B", parent, 0.125, f"- [STRATEGY] {BEFORE}"),
                prompts.cross_distill("B", parent, [BEFORE, AFTER])]
    # The system instruction names np.random, which is code by design; its other sentences are prose.
    return [fence.sub("", m["content"]) for ms in messages for m in ms if m["role"] == "user"] + [
        prompts.SYSTEM.replace("Do not call np.random; use", "Use"), prompts.SEED_NOTE, prompts.FORMAT]


@pytest.mark.parametrize("encoding", list(PROSE_ENCODINGS))
def test_ordinary_text_survives_whole_written_any_way(encoding):
    for text in PROSE + _prompt_prose():
        written = PROSE_ENCODINGS[encoding](text)
        assert strip_code(written) == (written, 0), written[:80]


# -- end to end, from a scripted server --------------------------------------------------------------
OPERATORS = ("[Principle to Implement]", "[Public Principle]", "[Reflection]", "[Current Skill (parent)]")
E2E_FORMS = ("json string", "json, double-escaped", "html, <br> and &nbsp;", "html hex entities", "percent-encoded",
             "json, every character \\u-escaped", "zero-width characters", "base64, a line each")


def _operator_and_parent(user: str, code: str) -> str:
    """A proposal's scale is a function of the operator and the parent alone: the search takes the same path
    whatever the guard leaves of the principles."""
    return f"{next(op for op in OPERATORS if op in user)}{code}"


def _leak_encoded(code: str, reveal: bool) -> str:
    """A knowledge reply: the role's program, encoded in each of :data:`E2E_FORMS`, inside the principle lines
    and around them."""
    leaks_ = "\n".join(ENCODINGS[form](code) for form in E2E_FORMS)
    if reveal:
        return f"{BEFORE} In JSON: {json.dumps(code)}\n{leaks_}"
    return (f"TYPE: STRATEGY\nPRINCIPLE: {BEFORE} As JSON: {json.dumps({'code': code})}\n{leaks_}\n"
            f"TYPE: COORDINATION\nPRINCIPLE: {AFTER} {html.escape(code)} {urllib.parse.quote(code)}")


def test_a_model_leaking_encoded_code_puts_none_of_it_in_any_other_role_prompt(tmp_path, openai_server, leaky_model):
    model = leaky_model.LeakyModel(_leak_encoded, scale_key=_operator_and_parent)
    openai_server.responder = model
    client = OpenAIClient("leaky", base_url=openai_server.base_url, api_key="test", backoff_s=0.0)
    config = RelicConfig(env="hmtsp", llm="openai:leaky", batches=2, proposals=2, seed=2, workers=1)
    with TeamEvaluator("hmtsp", sandbox=False, workers=1) as evaluator:
        relic = Relic(config, tmp_path / "run", llm=client, evaluator=evaluator)
        relic.learn()
    assert all(len(reply) < 20_000 for reply in model.replies)  # within what the guard reads
    # What of each role must not reach the others: its seed's def line, parameters and docstring, and every
    # statement of any of its programs that no teammate's program has.
    lines = {r: {" ".join(x.split()) for p in model.programs[r] for x in _lines(p)} for r in "ABC"}
    own = {}
    for r in "ABC":
        found = markers(seed_source("hmtsp", r))
        others = set().union(*(lines[o] for o in "ABC" if o != r))
        own[r] = {name: p for name, p in found.items() if not name.startswith("statement ")
                  and not any(p.search(x) for o in "ABC" if o != r for x in lines[o])}
        own[r].update({f"statement {x}": re.compile(re.escape(x)) for x in lines[r] - others if len(x) >= 6})
    assert {"def line", "docstring", "parameter route_cost", "statement best = best_own"} <= set(own["B"])
    assert len(model.programs["B"]) > 1  # B's programs changed during the run: the leaks carry them too
    requests = [r["body"] for r in openai_server.requests]
    prompts_ = ["\n".join(m["content"] for m in body["messages"]) for body in requests]
    for body, prompt in zip(requests, prompts_, strict=True):
        role = leaky_model.role(body)
        for other in "ABC":
            if other != role:
                assert leaks(prompt, own[other]) == [], f"a request of role {role} carries {other}'s code"
    # ... and the run did put the principles in teammates' prompts, from replies that carried the code.
    carried = set().union(*(leaks(reply, own["B"]) for reply in model.replies))
    assert {"def line", "docstring", "parameter route_cost", "statement best = best_own"} <= carried
    assert len(requests) == 3 * 2 * 2 + len(model.replies)
    assert any("[Public Principle]" in p for p in prompts_) and any("[Principle to Implement]" in p for p in prompts_)
    assert any("[Existing Public Principles]\n- [" in p for p in prompts_)  # a Distill prompt shows the public tree
    assert sum(leaky_model.role(body) != "B" for body in requests) >= 16
    events = relic.run.events()
    cut = [e for e in events if e["kind"] == "boundary"]
    assert {e["tag"] for e in cut} == {"reveal", "distill", "cross_distill"}
    assert len(cut) == len(model.replies) and not any(e["rejected"] for e in cut)  # the principle survives each
    assert all(e["forms"].get("encoded", 0) >= 1 for e in cut)
    texts = [e["text"] for e in events if e["kind"] in ("reveal", "distill", "cross_distill")]
    assert texts and all(BEFORE in t or AFTER in t for t in texts)
    assert events[-1]["kind"] == "run_end" and events[-1]["boundary"]["forms"]["encoded"] >= len(cut)
