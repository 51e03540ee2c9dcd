"""The information boundary for text (Appendix C.5): code never crosses between roles.

Reveal, Distill and Cross-distill replies are the only text one role's programs
leave behind for the others (archives feed Lift, the public tree feeds Bridge and
later Distill/Cross-distill prompts). The prompts ask for "no code", but a model can
answer with code anyway, and then a role's source would reach its teammates. This
guard finds code by *parsing* with :mod:`ast`, not by keywords, and cuts it out,
however the reply carries it:

1. **Fenced** blocks (three backticks or tildes, any language tag, closed or not) and
   ``<pre>`` blocks: cut whole when their body holds any code found by the passes
   below, or when tagged as Python.
2. **Inline** spans (one or more backticks, ``<code>``): cut when the span parses as
   code.
3. **Lines and windows of lines**: every line, read without its list marker (``-``,
   ``*``, ``1.``, ``(a)``), interpreter prompt (``>>>``, ``...``), quote marker
   (``>``) or line number (``12 |``, ``L12:``), and without a prose label (``Key step:``,
   ``PRINCIPLE:``, which stays), starts a window of up to :data:`WINDOW` consecutive
   lines; the longest window that parses as code is cut. A header whose body is missing
   (``if own.size:``) is completed with ``pass`` before parsing, an orphan
   ``else:``/``except:`` with the statement it continues. This catches unfenced,
   indented, numbered, bulleted and prompted code, one line or a whole function.
4. **In-sentence** fragments: within a paragraph, every stretch of at most
   :data:`FRAGMENT_ATOMS` tokens that starts near a code anchor (a call or index
   bracket, ``=``, a dotted name, a snake_case name, ``def``, ``lambda``, ``return``,
   triple quotes) and parses as code is cut, longest first. This catches code written
   inside a prose sentence, after a colon, a one-line ``def f(x): return x`` after prose,
   a lambda assignment, a docstring.

5. **Encoded** code: a reply can carry code escaped as a string, as JSON
   (``"def f(x):\\n    \\"\\"\\"Add one.\\"\\"\\"..."``), a Python ``repr``, Markdown
   backslash escapes (``select\\_next``), HTML (``&quot;``, ``&#34;``, ``&#x22;``, ``<br>``,
   highlighter spans), percent-encoding, base64, or with look-alike or invisible
   characters. Passes 1-4 also read every *decoded view* of the reply. One round decodes
   one layer, left to right, token by token, each by the standard library: JSON and
   Python backslash escapes (``\\n``, ``\\"``, ``\\\\``, ``\\uXXXX`` and surrogate pairs,
   ``\\xNN``, ``\\N{...}``, octal; :mod:`json`, :mod:`codecs`), other backslashed ASCII
   punctuation (Markdown), HTML character references (:func:`html.unescape`) and tags
   (``<br>``, ``<p>``, ``<li>``... a line break, any other tag nothing), percent-escapes
   (:func:`urllib.parse.unquote`, UTF-8), runs of base64 of at least 8 characters that
   decode to printable ASCII, and non-ASCII characters (NFKC, so fullwidth letters read
   as ASCII; zero-width and other format characters dropped). Rounds repeat while they
   change the text, up to :data:`DECODE_ROUNDS`, so double-escaped code (``\\\\n``,
   ``&amp;quot;``, JSON inside HTML) is read too. Each view is searched on its own, and
   what a view cuts is cut from the reply *as written*: every escape that produced a cut
   character, and the escaped line breaks, tags and invisible characters between cut
   code. These cuts are counted under the form ``encoded``. Two readings help it: the
   letter of an escape (``\\n`` in ``\\n[1] Serve``) starts no in-sentence fragment in
   any view, and a line may start its window after the quotes that open a string
   (``"import math``). A reply that, once cut, holds no letter or digit in any view
   (the quotes and ``\\n`` of an escaped string, say) is left empty, as one whose code
   was plain.

What counts as code (so that ordinary English, which sometimes parses, survives): a
definition, lambda, comprehension, assignment, ``name(...)`` or ``name[...]`` with the
bracket touching the name, ``a.b`` with no space around the dot (``e.g`` excluded), a
comparison with ``==``/``!=``, an operator over a snake_case or camelCase name, a
``return`` of something other than a bare word, an import, a docstring, or a compound
statement with its body on a later line. ``TYPE: STRATEGY`` (an annotation),
``well-known`` (a subtraction), ``cost(s)``, ``Note (A)``, ``it is not cheap`` (a
comparison of bare words) and ``gain > 0`` all parse, and none of them is code here.

Cost: windows and fragments are bounded, and a fragment's parse error position prunes
every longer fragment, so the work is linear in the reply's length (capped at
:data:`MAX_LINES` lines and :data:`MAX_CHARS` characters; the rest is dropped and
counted). A decoded view is never longer than the text it comes from, and there are at
most :data:`DECODE_ROUNDS` of them (none when the reply has nothing to decode), so an
encoded reply costs at most ``1 + DECODE_ROUNDS`` times a plain one.
"""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
import dataclasses
import html
import json
import keyword
import re
import textwrap
import unicodedata
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

MAX_LINES = 300  # replies are a few sentences; beyond this the reply is cut (the rest is dropped and counted)
MAX_CHARS = 20_000
WINDOW = 16  # lines per parse window
FRAGMENT_ATOMS = 96  # tokens per in-sentence fragment
LEAD_ATOMS = 8  # tokens a fragment may start before its first code anchor
DECODE_ROUNDS = 4  # layers of escaping decoded (each round one layer; a round that changes nothing ends it)
FORMS = ("fenced", "inline", "lines", "in_sentence", "encoded", "beyond_limit")

_PY_LANGS = frozenset({"python", "python3", "py", "py3", "pycon", "ipython", "ipython3", "pyi", "numpy", "sage"})
_FENCE = re.compile(r"(```+|~~~+)(?:[ \t]*([\w+#.-]*)[ \t]*\n)?(.*?)(?:\1|\Z)", re.S)
_PRE = re.compile(r"<(pre)\b[^>]*>(.*?)(?:</pre\s*>|\Z)", re.S | re.I)
_INLINE = re.compile(r"(`+)([^`\n]+?)\1(?!`)")
_CODE_TAG = re.compile(r"<code\b[^>]*>(.*?)</code\s*>", re.S | re.I)
_MARKER = re.compile(r"""[ \t]*(?:
      >>>|\.\.\.                                  # interpreter prompts
    | >                                           # a quote
    | [-*+\u2022\u2023\u25e6\u25aa\u25cf\u2013\u2014]  # a bullet
    | \(?\d{1,4}[.):]                             # 1.  1)  (1)  1:
    | \(?[A-Za-z][.)]                             # a.  a)  (a)
    | (?:[Ll](?:ine)?[ \t]?)?\d{1,4}[ \t]*[|:]    # L12:  line 12:  12 |
    | \d{1,4}(?=[ \t])                            # a bare line number
    )(?:[ \t]|$)""", re.X)
_KEYWORD_LED = "|".join(sorted(keyword.kwlist + ["match", "case"], key=len, reverse=True))
_LABEL = re.compile(  # a prose label before a colon: "Key step: ...", "**PRINCIPLE:** ..."
    rf"[ \t]*(?:\*\*|__)?(?!(?:{_KEYWORD_LED})\b)[A-Za-z][A-Za-z '/-]{{0,40}}?(?:\*\*|__)?[ \t]*:(?:\*\*|__)?[ \t]+(?=\S)")
_FORMAT = re.compile(r"\W*(?:TYPE|PRINCIPLE)\s*:", re.I)  # the reply format parse_principles reads
_BARE_HEADER = re.compile(r"[ \t]*(?:(?:else|try|finally|except)[ \t]*:|\.\.\.|pass)[ \t]*$")
_DECORATOR = re.compile(r"[ \t]*@[^\W\d][\w.]*(?:\(.*\))?[ \t]*$")
_CLOSERS = re.compile(r"[ \t]*[)\]}]+[ \t]*[,;:]?[ \t]*$")
_ELSE = re.compile(r"(?:else|elif)\b")
_EXCEPT = re.compile(r"(?:except|finally)\b")
_TRAILING_COMMENT = re.compile(r"\s#[^'\"]*$")
_DEF = re.compile(r"\b(?:async[ \t]+)?def[ \t]+[^\W\d]\w*[ \t]*\(")
_ATOM = re.compile(r"[^\W\d]\w*|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?[jJ]?|\*\*=?|//=?|->|:=|<<=?|>>=?|[-+*/%&|^@<>=!]=|\S")
_CODEY = re.compile(r"[^\W_]_+[^\W_]|[a-z][A-Z]")  # snake_case, camelCase
_PROSE_WORD = re.compile(r"[A-Za-z][a-z]*")
_OPENERS = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
_STARTS = frozenset("([{-+~*@\"'")
_ENDS = frozenset(")]}\"':")
_NOT_STARTS = frozenset({"and", "or", "is", "in", "as"})
_NOT_ENDS = frozenset(set(keyword.kwlist) - {"True", "False", "None", "pass", "break", "continue"})
_ANCHOR_WORDS = frozenset({"lambda", "def", "return", "import", "class", "yield", "await"})
_ASSIGN_OPS = frozenset({"=", "==", "!=", "<=", ">=", ":=", "->", "+=", "-=", "*=", "/=", "//=", "%=", "**=", "&=",
                         "|=", "^=", "@=", "<<=", ">>="})
_STRING_PREFIXES = frozenset({"f", "F", "r", "R", "b", "B", "rb", "br", "fr", "rf", "Rb", "bR", "Fr", "fR"})
_PLURALS = frozenset({"s", "es", "ies", "ren"})  # "cost(s)" is prose
_QUOTES = {"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'", "\u00ab": '"', "\u00bb": '"'}
_INCOMPLETE = ("was never closed", "expected an indented block", "unterminated triple-quoted", "unexpected EOF")
_PRUNABLE = ("invalid syntax", "invalid character", "invalid decimal literal", "unterminated string literal",
             "unmatched")

_ALWAYS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
           ast.GeneratorExp, ast.NamedExpr, ast.Assign, ast.AugAssign)
_COMPOUND = tuple(getattr(ast, name) for name in ("If", "For", "AsyncFor", "While", "With", "AsyncWith", "Try",
                                                  "TryStar") if hasattr(ast, name))

# One layer of encoding, one token at a time (see "Encoded code" above); each is decoded by the library.
_ENCODED = re.compile(r"""
      (?P<pair>\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})   # JSON: a surrogate pair
    | (?P<json>\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt]))                            # JSON string escapes
    | (?P<py>\\(?:U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|N\{[A-Za-z0-9 -]{1,80}\}|[0-7]{1,3}|['av]))  # Python's others
    | (?P<md>\\[!#-&(-.:-@\[\]^_`{-~])                        # Markdown: any other ASCII punctuation, escaped
    | (?P<entity>&(?:\#[xX][0-9a-fA-F]{1,6}|\#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});?)      # HTML references
    | (?P<tag></?(?P<name>[A-Za-z][A-Za-z0-9]{0,15})(?:[ \t][^<>\n]{0,200})?/?>)             # an HTML tag
    | (?P<pct>%[0-7][0-9a-fA-F]|(?:%[89a-fA-F][0-9a-fA-F])+)                # percent-escapes (a UTF-8 sequence whole)
    | (?P<b64>(?<![\w+/=])(?=[\w+/=]{8})(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?(?![\w+/=]))
    | (?P<wide>[^\x00-\x7f])                                    # non-ASCII: NFKC, format characters dropped
""", re.X)
_PLAIN = {**{c: " " for c in range(0x3001)  # every blank but a line break or tab reads as a space (none past U+3000)
            if chr(c) not in "\n\t" and (chr(c).isspace() or unicodedata.category(chr(c)) == "Zs")},
          **{ord(q): plain for q, plain in _QUOTES.items()}}
_CUT_RUN = re.compile(rb"[^\x00]+")
_WORD = re.compile(r"\S+")
_BLOCK_TAGS = frozenset({"br", "p", "div", "li", "tr", "pre", "blockquote", "ul", "ol", "table", "h1", "h2", "h3",
                         "h4", "h5", "h6"})


@dataclasses.dataclass(frozen=True)
class Stripped:
    """A reply with its code cut out, and what was cut.

    ``segments``: pieces cut (a fenced block, an inline span, a run of lines, an
    in-sentence fragment); ``lines``: lines of the reply that lost characters (wholly or
    in part); ``chars``: characters removed (newlines not counted); ``forms``: segments
    by form (:data:`FORMS`).
    """

    text: str
    segments: int = 0
    lines: int = 0
    chars: int = 0
    forms: Mapping[str, int] = dataclasses.field(default_factory=dict)

    @property
    def removed(self) -> int:
        return self.segments


def strip(text: str) -> Stripped:
    """``text`` with every piece of source code removed, and a count of what was removed.

    >>> r = strip("Serve far first.\\n1. def f(x):\\n2.     return x + 1\\nIt uses best = max(d) then.")
    >>> r.text, r.segments, r.lines
    ('Serve far first.\\nIt uses   then.', 2, 3)
    """
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n")
    forms: Counter[str] = Counter()
    over_lines = over_chars = 0
    read = "\n".join(text.split("\n", MAX_LINES)[:MAX_LINES])[:MAX_CHARS]
    if len(read) < len(text):  # what lies beyond the limits is not read: it is dropped, and counted
        rest = text[len(read):]
        whole = text[len(read)] == "\n"  # the last line read is complete
        over_lines = text.count("\n") - read.count("\n") + (0 if whole else 1)
        over_chars = len(rest) - rest.count("\n")
        forms["beyond_limit"] += 1
        text = read
    cut = bytearray(len(text))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes in a parsed fragment
        _passes(text, cut, forms)
        _cut_decoded(text, cut, forms)
    kept, touched, chars = _assemble(text, cut)
    if kept and forms and not _worded(kept):  # what the cuts left is punctuation and escapes (' \\n"'): nothing
        chars += len(kept) - sum(ch.isspace() for ch in kept)
        kept = ""
    return Stripped(kept, sum(forms.values()), touched + over_lines, chars + over_chars, dict(sorted(forms.items())))


def strip_code(text: str) -> tuple[str, int]:
    """``text`` with every code segment removed, and how many were removed (see :func:`strip`).

    >>> strip_code("Cover far customers first.\\n```python\\ndef f(x):\\n    return x\\n```")
    ('Cover far customers first.', 1)
    """
    result = strip(text)
    return result.text, result.segments


def is_code(text: str) -> bool:
    """Whether ``text`` as a whole parses as Python holding at least one code construct.

    >>> is_code("def f(x):\\n    return x + 1"), is_code("TYPE: STRATEGY"), is_code("Move late.")
    (True, False, False)
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _check(text)[0] == "code"


def tally(events: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """A run's total over its ``boundary`` events: replies cut, replies rejected whole, segments, lines,
    characters, segments by form."""
    total: dict[str, Any] = {"replies": 0, "rejected": 0, "segments": 0, "lines": 0, "chars": 0, "forms": {}}
    forms: Counter[str] = Counter()
    for event in events:
        if event.get("kind") != "boundary":
            continue
        total["replies"] += 1
        total["rejected"] += bool(event.get("rejected"))
        total["segments"] += int(event.get("removed", 0))
        total["lines"] += int(event.get("lines", 0))  # older runs recorded segments only
        total["chars"] += int(event.get("chars", 0))
        forms.update(event.get("forms") or {})
    total["forms"] = dict(sorted(forms.items()))
    return total


# -- passes ------------------------------------------------------------------------------
def _passes(text: str, cut: bytearray, forms: Counter[str]) -> None:
    _cut_blocks(text, cut, forms)
    _cut_inline(_view(text, cut), cut, forms)
    _cut_lines(_view(text, cut), cut, forms)
    _cut_fragments(_view(text, cut), cut, forms)
    _cut_backstop(_view(text, cut), cut, forms)


def _view(text: str, cut: bytearray) -> str:
    """The text as the passes read it: cut characters blanked (offsets kept), typographic spaces and quotes plain."""
    view = text.translate(_PLAIN)
    pieces, pos = [], 0
    for run in _CUT_RUN.finditer(cut):
        pieces += [view[pos:run.start()], " " * (run.end() - run.start())]
        pos = run.end()
    return "".join(pieces) + view[pos:] if pieces else view


def _mark(text: str, cut: bytearray, start: int, end: int) -> None:
    for k in range(start, end):
        if text[k] != "\n":
            cut[k] = 1


def _holds_code(body: str) -> bool:
    if _check(body)[0] == "code":
        return True
    probe = bytearray(len(body))
    forms: Counter[str] = Counter()
    _cut_lines(body, probe, forms)
    _cut_fragments(_view(body, probe), probe, forms)
    return bool(forms)


def _cut_blocks(text: str, cut: bytearray, forms: Counter[str]) -> None:
    view = _view(text, cut)
    for match in _FENCE.finditer(view):
        lang = (match.group(2) or "").lower()
        if not (lang in _PY_LANGS or _holds_code(match.group(3))):
            continue
        closed = view.startswith(match.group(1), match.end() - len(match.group(1)), match.end()) \
            and match.end() - len(match.group(1)) >= match.start(3)
        # A fence never closed: cut its opening line; the passes below find the code in what follows
        # and keep the prose after it.
        end = match.end() if closed else match.start(3)
        _mark(text, cut, match.start(), end)
        forms["fenced"] += 1
    view = _view(text, cut)
    for match in _PRE.finditer(view):
        if _holds_code(match.group(2)):
            _mark(text, cut, match.start(), match.end())
            forms["fenced"] += 1


def _cut_inline(view: str, cut: bytearray, forms: Counter[str]) -> None:
    for pattern, group in ((_INLINE, 2), (_CODE_TAG, 1)):
        for match in pattern.finditer(view):
            if _check(match.group(group))[0] == "code" or _lenient(match.group(group)):
                _mark(view, cut, match.start(), match.end())
                forms["inline"] += 1
        view = _view(view, cut)


def _cut_lines(view: str, cut: bytearray, forms: Counter[str]) -> None:
    """Windows of whole lines (list markers, prompts, line numbers read past; a prose label kept)."""
    lines, offsets = _split(view)
    n = len(lines)
    marks = [_demark(line) for line in lines]
    views = [line[m:] for line, m in zip(lines, marks)]
    protected = [bool(_FORMAT.match(v)) for v in views]
    gone = [False] * n
    i = 0
    while i < n:
        hit = None
        if views[i].strip():
            for keep, first in _starts(lines[i], marks[i], views[i], protected[i]):
                end = _window(first, views, protected, i)
                if end is not None:
                    hit = (keep, end)
                    break
        if hit is None:
            i += 1
            continue
        keep, end = hit
        _mark(view, cut, offsets[i] + keep, offsets[i] + len(lines[i]))
        for k in range(i + 1, end):
            _mark(view, cut, offsets[k], offsets[k] + len(lines[k]))
        gone[i:end] = [keep == 0] + [True] * (end - i - 1)
        forms["lines"] += 1
        i = end
    # Orphans next to cut code: a bare "else:"/"try:" or a line of closing brackets.
    for k in range(n - 1, -1, -1):  # bottom up: a decorator above a cut decorator goes too
        after = k + 1 < n and gone[k + 1]
        orphan = any(_BARE_HEADER.match(v) or _CLOSERS.match(v) or after and _DECORATOR.match(v) for v in (views[k], lines[k]))
        if gone[k] or not orphan:
            continue
        if (k > 0 and gone[k - 1]) or after:
            _mark(view, cut, offsets[k], offsets[k] + len(lines[k]))
            gone[k] = True
            forms["lines"] += 1


def _window(first: str, views: list[str], protected: list[bool], i: int) -> int | None:
    """The end (exclusive) of the longest code window starting at line ``i`` read as ``first``, or ``None``."""
    status = _check(first)[0]
    if status in ("prose", "invalid"):  # parses as prose on its own, or no continuation can make it parse
        return None
    best = i + 1 if status == "code" else None
    top = i + 1
    while top < len(views) and top - i < WINDOW and not protected[top]:
        top += 1
    for j in range(top, i + 1, -1):
        if views[j - 1].strip() and _check("\n".join([first, *views[i + 1:j]]))[0] == "code":
            best = j
            break
    if best is None:
        return None
    # Give back trailing lines that are prose on their own ("TYPE: PATTERN" parses too), unless indented
    # under the window's first line (a block's body).
    indent = _indent(first)
    while best - 1 > i and (not views[best - 1].strip() or (
            _indent(views[best - 1]) <= indent and _check(views[best - 1])[0] == "prose"
            and _check("\n".join([first, *views[i + 1:best - 1]]))[0] == "code")):
        best -= 1
    return best


def _indent(line: str) -> int:
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


def _starts(line: str, mark: int, view: str, protected: bool) -> list[tuple[int, str]]:
    """How line ``i`` may start a window: (characters kept at its start, the text parsed)."""
    alts = []
    label = _LABEL.match(view)
    if label and view[label.end():].strip():
        alts.append((mark + label.end(), view[label.end():]))
    if not protected:
        alts.append((0, view))
        if mark:
            alts.append((0, line))
        body = view.lstrip(" \t").lstrip("\"'")
        if len(body) < len(view.lstrip(" \t")):  # inside a string: '"import math' (a decoded view), '""x = 1'
            alts.append((mark + len(view) - len(body), body))
    return alts


def _demark(line: str) -> int:
    """Length of the list marker / prompt / quote / line number prefix of ``line`` (up to three, nested)."""
    m = 0
    for _ in range(3):
        match = _MARKER.match(line, m)
        if not match or match.end() == m:
            break
        m = match.end()
    return m


def _split(text: str) -> tuple[list[str], list[int]]:
    lines = text.split("\n")
    offsets, pos = [], 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    return lines, offsets


def _cut_fragments(view: str, cut: bytearray, forms: Counter[str]) -> None:
    """Code inside prose: the longest parsing stretch of tokens around each code anchor."""
    atoms = [(m.start(), m.end()) for m in _ATOM.finditer(view)]
    n = len(atoms)
    if not n:
        return
    words = [view[s:e] for s, e in atoms]
    newline = [k > 0 and "\n" in view[atoms[k - 1][1]:atoms[k][0]] for k in range(n)]
    touching = [k > 0 and atoms[k - 1][1] == atoms[k][0] for k in range(n)]
    # "\n[1] Serve" in an escaped string: the letter of an escape starts no code (a decoded view reads it)
    escaped = [s > 0 and view[s - 1] == "\\" and view[s].isalnum() for s, _ in atoms]
    depth, level = [], 0
    for w in words:
        depth.append(level)
        level += _OPENERS.get(w, 0)
    anchor = [_is_anchor(k, words, touching) or words[k] == "for" and depth[k] > 0 for k in range(n)]
    next_anchor: list[int | None] = [None] * (n + 1)
    for k in range(n - 1, -1, -1):
        next_anchor[k] = k if anchor[k] else next_anchor[k + 1]
    k = 0
    while k < n:
        a = next_anchor[k]
        if a is None:
            break
        if a - k > LEAD_ATOMS:
            k = a - LEAD_ATOMS
            continue
        w = words[k]
        if not (w[0] in _STARTS or w[0].isalnum() or w[0] == "_") or w in _NOT_STARTS or escaped[k]:
            k += 1
            continue
        found = _fragment(view, atoms, words, newline, k, a)
        if found is None:
            k += 1
            continue
        # A later start up to the anchor may reach further ("5 | best = x" in a table row: "best = x", not "5 | best").
        for later in range(k + 1, a + 1):
            if (words[later][0] in _STARTS or words[later][0].isalnum() or words[later][0] == "_") and not escaped[later]:
                other = _fragment(view, atoms, words, newline, later, a)
                if other is not None and other[1] > found[1]:
                    found = other
        s, e = found
        _mark(view, cut, atoms[s][0], atoms[e - 1][1])
        forms["in_sentence"] += 1
        k = e


def _is_anchor(k: int, words: list[str], touching: list[bool]) -> bool:
    w = words[k]
    if w in ("(", "["):
        return touching[k] and (words[k - 1][-1].isalnum() or words[k - 1] in (")", "]", "_"))
    if w in _ASSIGN_OPS:
        return True
    if w == ".":
        return touching[k] and k + 1 < len(words) and touching[k + 1] and words[k - 1][-1].isalnum() \
            and words[k + 1][0].isalpha()
    if w in ("\"", "'"):
        if touching[k] and words[k - 1] in _STRING_PREFIXES:  # f"{x}"
            return True
        return k + 2 < len(words) and words[k + 1] == words[k + 2] == w and touching[k + 1] and touching[k + 2]
    return w in _ANCHOR_WORDS or bool(_CODEY.search(w))


def _fragment(view: str, atoms: list[tuple[int, int]], words: list[str], newline: list[bool], s: int,
              a: int) -> tuple[int, int] | None:
    """The longest code fragment starting at token ``s`` and holding the anchor token ``a``."""
    ends, depth = [], 0
    for e in range(s, min(len(atoms), s + FRAGMENT_ATOMS)):
        if e > s and newline[e] and depth == 0:  # a fragment crosses a line only inside brackets
            break
        depth += _OPENERS.get(words[e], 0)
        if depth < 0:
            break
        w = words[e]
        if e >= a and depth == 0 and (w[-1] in _ENDS or (w[-1].isalnum() or w[-1] == "_") and w not in _NOT_ENDS):
            ends.append(e + 1)
    start = atoms[s][0]
    idx = len(ends) - 1
    while idx >= 0:
        stop = atoms[ends[idx] - 1][1]
        status, error_at = _check(view[start:stop].replace("\n", " "), fragment=True)
        if status == "code":
            return _unlabel(view, atoms, words, s, ends[idx]), ends[idx]
        idx -= 1
        if error_at is not None:  # no fragment reaching past a syntax error parses
            while idx >= 0 and atoms[ends[idx] - 1][1] > start + error_at:
                idx -= 1
    return None


def _unlabel(view: str, atoms: list[tuple[int, int]], words: list[str], s: int, e: int) -> int:
    """Keep a prose label a fragment starts with ("The rule: best = x" cuts "best = x" only)."""
    k = s
    while k < e and k - s < 4 and _PROSE_WORD.fullmatch(words[k]) and not keyword.iskeyword(words[k]):
        k += 1
    if k == s or k + 1 >= e or words[k] != ":":
        return s
    rest = view[atoms[k + 1][0]:atoms[e - 1][1]].replace("\n", " ")
    return k + 1 if _check(rest, fragment=True)[0] == "code" else s


def _cut_backstop(view: str, cut: bytearray, forms: Counter[str]) -> None:
    """A ``def name(`` that no parse took (a signature too long for a fragment, say): cut it to the line's end."""
    for match in _DEF.finditer(view):
        end = view.find("\n", match.start())
        _mark(view, cut, match.start(), len(view) if end < 0 else end)
        forms["in_sentence"] += 1


def _assemble(text: str, cut: bytearray) -> tuple[str, int, int]:
    """The kept text (each cut run one space; a line left empty by cuts dropped), lines touched, characters cut."""
    out, touched, chars, pos = [], 0, 0, 0
    for line in text.split("\n"):
        flags = cut[pos:pos + len(line)]
        pos += len(line) + 1
        if not any(flags):
            out.append(line)
            continue
        touched += 1
        chars += sum(flags)
        pieces, k = [], 0
        while k < len(line):
            if flags[k]:
                while k < len(line) and flags[k]:
                    k += 1
                pieces.append(" ")
            else:
                pieces.append(line[k])
                k += 1
        kept = "".join(pieces).rstrip()
        if kept.strip():
            out.append(kept)
    return "\n".join(out).strip(), touched, chars


# -- encoded code ----------------------------------------------------------------------------
def _cut_decoded(text: str, cut: bytearray, forms: Counter[str]) -> None:
    """Search every decoded view of ``text`` and cut, in ``text`` itself, what produced the code found there."""
    views, filler = _decodings(text)
    if not views:
        return
    before = bytes(cut)
    for view, starts, ends in views:
        found = bytearray(len(view))
        _passes(view, found, Counter())
        for run in _CUT_RUN.finditer(found):
            first, last = starts[run.start()], ends[run.end() - 1]
            for word in _WORD.finditer(text, first, last):  # the reply's own blanks go with the filler, below
                cut[word.start():word.end()] = b"\x01" * (word.end() - word.start())
    _cut_filler(text, cut, filler, before)
    # Count each stretch the decoded views alone cut, across the blanks and escaped breaks inside it.
    runs, inside = 0, False
    for k, ch in enumerate(text):
        if cut[k] and not before[k]:
            runs += not inside
            inside = True
        elif not (inside and (ch.isspace() or filler[k] or cut[k])):
            inside = False
    if runs:
        forms["encoded"] += runs


def _worded(text: str) -> bool:
    """Whether ``text``, decoded, holds a letter or a digit."""
    views, _ = _decodings(text)
    return any(ch.isalnum() for ch in (views[-1][0] if views else text))


def _decodings(text: str) -> tuple[list[tuple[str, list[int], list[int]]], bytearray]:
    """The decoded views of ``text``, one per round that changed something, each with, for every character, the
    span of ``text`` it came from (``starts``, ``ends``); and which characters of ``text`` decode to blanks or to
    nothing (escaped breaks and spaces, tags, invisible characters)."""
    views: list[tuple[str, list[int], list[int]]] = []
    filler = bytearray(len(text))
    view, starts, ends = text, list(range(len(text))), list(range(1, len(text) + 1))
    for _ in range(DECODE_ROUNDS):
        decoded = _decode_once(view, starts, ends, filler)
        if decoded is None:
            break
        view, starts, ends = decoded
        views.append(decoded)
    return views, filler


def _decode_once(view: str, starts: list[int], ends: list[int],
                 filler: bytearray) -> tuple[str, list[int], list[int]] | None:
    """``view`` with one layer of encoding decoded, and where each character came from; ``None`` if unchanged."""
    out: list[str] = []
    new_starts: list[int] = []
    new_ends: list[int] = []
    pos = 0
    for match in _ENCODED.finditer(view):
        decoded = _decode_token(match)
        if decoded is None or decoded == match.group():
            continue
        out.append(view[pos:match.start()])
        new_starts.extend(starts[pos:match.start()])
        new_ends.extend(ends[pos:match.start()])
        first, last = starts[match.start()], ends[match.end() - 1]
        if not decoded.strip():
            filler[first:last] = b"\x01" * (last - first)
        new_starts.extend([first] * len(decoded))  # a token decoding to several characters: each came from all of it
        new_ends.extend([last] * len(decoded))
        out.append(decoded)
        pos = match.end()
    if not out:
        return None
    out.append(view[pos:])
    new_starts.extend(starts[pos:])
    new_ends.extend(ends[pos:])
    return "".join(out), new_starts, new_ends


def _decode_token(match: re.Match[str]) -> str | None:
    """What one token of :data:`_ENCODED` stands for, or ``None`` (not an encoding after all)."""
    token, kind = match.group(), match.lastgroup
    try:
        if kind in ("pair", "json"):
            decoded = json.loads(f'"{token}"')
        elif kind == "py":
            decoded = codecs.decode(token, "unicode_escape")
        elif kind == "md":
            decoded = token[1]
        elif kind == "entity":
            decoded = html.unescape(token)
        elif kind == "tag":
            decoded = "\n" if match.group("name").lower() in _BLOCK_TAGS else ""
        elif kind == "pct":
            decoded = unquote(token, errors="strict")
        elif kind == "b64":
            decoded = base64.b64decode(token, validate=True).decode("ascii")  # base64 of code: printable ASCII
            if not all(ch.isprintable() or ch in "\n\t" for ch in decoded):
                return None
        elif ord(token) in _PLAIN:
            return None  # a blank or a typographic quote: the passes read it plain already
        else:
            decoded = "" if unicodedata.category(token) == "Cf" else unicodedata.normalize("NFKC", token)
    except (ValueError, UnicodeError, binascii.Error):
        return None
    if any("\ud800" <= ch <= "\udfff" for ch in decoded):  # a lone surrogate is no text
        return None
    return decoded


def _cut_filler(text: str, cut: bytearray, filler: bytearray, before: bytes) -> None:
    """Cut what decodes to blanks or nothing (an escaped break, a tag, a zero-width character) when it lies between
    cut characters, or between cut characters and a line's end, and the reply's own blanks between characters that
    a decoded view cut (the text's own breaks are kept; blanks between two cuts of the reply as written too)."""
    n = len(text)
    k = 0
    while k < n:
        if cut[k] or text[k] == "\n" or not (filler[k] or text[k] in " \t"):
            k += 1
            continue
        start = k
        while k < n and not cut[k] and text[k] != "\n" and (filler[k] or text[k] in " \t"):
            k += 1
        if not any(filler[start:k]):
            if 0 < start and k < n and cut[start - 1] and cut[k] and not (before[start - 1] and before[k]):
                cut[start:k] = b"\x01" * (k - start)
            continue
        left = start == 0 or text[start - 1] == "\n" or cut[start - 1]
        right = k == n or text[k] == "\n" or cut[k]
        edges = (start > 0 and cut[start - 1]) + (k < n and cut[k])
        if left and right and edges:
            cut[start:k] = b"\x01" * (k - start)


# -- parsing -------------------------------------------------------------------------------
def _check(src: str, *, fragment: bool = False) -> tuple[str, int | None]:
    """Classify ``src``: ``"code"``; ``"prose"`` (parses, no code construct); ``"header"`` (parses once its
    missing body or opening statement is supplied, no code construct); ``"open"`` (incomplete: a bracket
    or block left open); ``"invalid"``. For an invalid fragment, also the offset of the syntax error when
    no longer fragment can parse either."""
    if not fragment:
        src = textwrap.dedent(src).strip("\n")
    if not src.strip():
        return "invalid", None
    tree, incomplete, error_at = _parse(src)
    if tree is not None:
        return ("code" if _strong(tree, src, 1, src.count("\n") + 1, fragment) else "prose"), None
    completed = _complete(src)
    if completed is not None:
        text, first = completed
        tree, _, _ = _parse(text)
        if tree is not None:
            return ("code" if _strong(tree, text, first, first + src.count("\n"), fragment) else "header"), None
        if first > 1:
            error_at = None  # the error may lie in the part the completion supplies
    return ("open" if incomplete else "invalid"), error_at


def _parse(src: str) -> tuple[ast.Module | None, bool, int | None]:
    try:
        return ast.parse(src), False, None
    except SyntaxError as exc:
        msg = exc.msg or ""
        incomplete = any(m in msg for m in _INCOMPLETE)
        error_at = None
        if not incomplete and msg.startswith(_PRUNABLE) and exc.lineno == 1 and exc.offset:
            error_at = exc.offset - 1 if exc.offset - 1 < len(src.split("\n", 1)[0]) else None
        return None, incomplete, error_at
    except (ValueError, MemoryError, RecursionError, OverflowError):
        return None, False, None


def _complete(src: str) -> tuple[str, int] | None:
    """``src`` with a missing body (``pass``) or opening statement supplied, and its first line there."""
    lines = src.split("\n")
    head = lines[0]
    prefix = ""
    if _ELSE.match(head):
        prefix = "if 1:\n    pass\n"
    elif _EXCEPT.match(head):
        prefix = "try:\n    pass\n"
    last = next((line for line in reversed(lines) if line.strip()), "")
    suffix = ""
    if _TRAILING_COMMENT.sub("", last).rstrip().endswith(":"):
        indent = last[:len(last) - len(last.lstrip())]
        suffix = f"\n{indent}    pass"
    if not prefix and not suffix:
        return None
    return prefix + src + suffix, prefix.count("\n") + 1


def _strong(tree: ast.AST, src: str, first: int, last: int, fragment: bool) -> bool:
    """Whether the real lines ``first..last`` of ``tree`` hold a code construct (see the module docstring)."""
    rows = [row.encode() for row in src.split("\n")]  # ast columns are UTF-8 byte offsets

    def at(line: int, col: int, width: int = 1) -> bytes:
        return rows[line - 1][col:col + width] if 1 <= line <= len(rows) else b""

    for node in ast.walk(tree):
        line = getattr(node, "lineno", None)
        if line is None or not first <= line <= last:
            continue  # what the completion supplied
        if _code_node(node, at, first, last, fragment):
            return True
    return False


def _code_node(node: ast.AST, at: Any, first: int, last: int, fragment: bool) -> bool:
    if fragment and isinstance(node, ast.Assign) and len(node.targets) == 1 and _bare(node.targets[0]) \
            and _bare(node.value):
        return False  # "Gain = saved cost minus waiting cost": a word equals a word, inside a sentence
    if isinstance(node, _ALWAYS):
        return True
    if isinstance(node, ast.AnnAssign):
        return node.value is not None  # "TYPE: STRATEGY" is an annotation without a value
    if isinstance(node, ast.Call):
        func = node.func
        if at(func.end_lineno, func.end_col_offset) != b"(":  # "Note (important)"
            return False
        plural = (isinstance(func, ast.Name) and len(node.args) == 1 and not node.keywords
                  and isinstance(node.args[0], ast.Name) and node.args[0].id in _PLURALS)
        return not plural
    if isinstance(node, ast.Subscript):
        return at(node.value.end_lineno, node.value.end_col_offset) == b"["  # "results [1]" is a citation
    if isinstance(node, ast.Attribute):
        value = node.value
        if value.end_lineno != node.end_lineno or at(value.end_lineno, value.end_col_offset, 2)[:1] != b".":
            return False  # "first. Then" parses as an attribute
        if at(value.end_lineno, value.end_col_offset + 1).isspace():
            return False
        if isinstance(value, ast.Name):
            if len(value.id) == 1 and len(node.attr) == 1:  # e.g, i.e
                return False
            if value.id.isalpha() and value.id.islower() and node.attr.istitle() and node.attr.isalpha():
                return False  # "first.Then", a missing space
        return True
    if isinstance(node, ast.Compare):
        return any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops) or _codey(node)
    if isinstance(node, (ast.BinOp, ast.BoolOp, ast.UnaryOp)):
        return _codey(node)  # "well-known", "it is not cheap" are prose
    if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await)):
        value = node.value
        if value is None or isinstance(value, ast.Name) and not _CODEY.search(value.id):
            return False  # "return early", "yield when", "await teammates"
        return not (isinstance(value, ast.Constant) and (value.value is None or isinstance(value.value, str)))
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return not fragment or isinstance(node, ast.ImportFrom) or any(a.asname or "." in a.name for a in node.names)
    if isinstance(node, _COMPOUND):
        body = node.body[0] if node.body else None
        return body is not None and body.lineno > node.lineno and first <= body.lineno <= last
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.FormattedValue) for v in node.values)
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        head = at(node.lineno, node.col_offset, 5).lstrip(b"rRuUbBfF")
        return head.startswith((b'"""', b"'''"))  # a docstring
    return False


def _bare(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and not _CODEY.search(node.id)


def _codey(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and _CODEY.search(n.id) for n in ast.walk(node))


def _lenient(span: str) -> bool:
    """A backtick span: any construct but a lone bare word or a bare subtraction counts (it was marked as code)."""
    try:
        tree = ast.parse(textwrap.dedent(span))
    except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError):
        return False
    return any(isinstance(n, (ast.Call, ast.Subscript, ast.Attribute, ast.Lambda, ast.Assign, ast.AugAssign,
                              ast.Return, ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom))
               for n in ast.walk(tree))
