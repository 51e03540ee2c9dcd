"""Program intake: from LLM reply text to a checked role program (Appendix C.2).

The reply is reduced to the requested function (a fenced block or raw source; prose
before the function is discarded), ``import numpy as np`` is added when the code uses
``np`` without importing it, and the result is checked against the role's
:class:`~relic_envs.core.signature.Signature` with the suite's one rule set
(:func:`relic_envs.core.program.check_source`). Nothing else is rewritten.

Intake never raises on bad text, whatever the parser does with it (``MemoryError`` and
``RecursionError`` on deeply nested text included): it returns a :class:`Rejection`
with a reason the search can charge and log, and ``relic learn --resume`` replays
that rejection rather than a crash.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import io
import re
import tokenize

from relic_envs.core.program import check_source
from relic_envs.core.signature import Signature
from relic_envs.errors import ProgramError

MAX_SOURCE_CHARS = 100_000  # a reply longer than this is not a role function
MAX_PARSE_ATTEMPTS = 64  # when trimming trailing prose: each attempt parses the candidate once


@dataclasses.dataclass(frozen=True)
class Program:
    """A checked role program: normalised source that passed validation."""

    role: str
    function: str
    source: str

    @property
    def digest(self) -> str:
        """sha256 of the source: the identity used for caching and duplicates."""
        return hashlib.sha256(self.source.encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class Rejection:
    """Why text did not become a program: ``syntax``, ``signature`` or ``forbidden``."""

    reason: str
    detail: str


def extract_function(text: str, function: str) -> str | None:
    """The source of ``function`` from reply ``text``; ``None`` if it has no such def.

    Fenced blocks are preferred (the last one that defines the function). Code that
    parses as a whole (a block, or raw text without prose) is kept whole, so helpers
    and imports written above the function survive; otherwise everything before the
    ``def`` line is discarded and trailing lines that do not parse are dropped.
    """
    definition = re.compile(rf"^[ \t]*def[ \t]+{re.escape(function)}[ \t]*\(", re.MULTILINE)
    blocks = [b for b in _fenced_blocks(text) if definition.search(b)]
    if blocks:
        code = blocks[-1]
        if _parses(code):
            return _with_numpy(code.strip("\n") + "\n")
    else:
        code = text
        if definition.search(code) and _parses(code):  # all of it is code: keep helpers above
            return _with_numpy(code.strip("\n") + "\n")
    match = definition.search(code)
    if match is None:
        return None
    lines = code[match.start():].splitlines()
    indent = len(lines[0]) - len(lines[0].lstrip())
    lines = [line[indent:] if line[:indent].strip() == "" else line for line in lines]
    text = "\n".join(lines)
    error_line = _error_line(text)
    if error_line is None:
        return _with_numpy(_without_trailing_comments(lines))
    if error_line in (_TOO_DEEP, 1):
        # Nesting the parser gives up on, or the def line itself: no prefix mends it, and
        # tokenizing a long hostile text to find out costs more than validation.
        return _with_numpy(text.rstrip() + "\n")
    # Drop trailing prose: the longest prefix that parses wins. Only prefixes that end a
    # statement can parse, and a failed parse names a line no parsing prefix reaches
    # past (so only the lines before it are tokenized), so few candidates are tried (at
    # most MAX_PARSE_ATTEMPTS; then validation names the syntax error).
    bound = error_line - 1 if error_line > 1 else len(lines)
    attempts = 0
    for end in reversed(_statement_ends("\n".join(lines[:bound]))):
        if end > bound:
            continue
        if attempts == MAX_PARSE_ATTEMPTS:
            break
        attempts += 1
        candidate = "\n".join(lines[:end]).rstrip() + "\n"
        error_line = _error_line(candidate)
        if error_line is None:
            return _with_numpy(candidate)
        if error_line == 1:
            break  # the def line itself: every prefix holds it
        bound = error_line - 1 if error_line > 1 else end - 1
    return _with_numpy(text.rstrip() + "\n")  # let validation name the syntax error


def _without_trailing_comments(lines: list[str]) -> str:
    """Code that parses, without the comment and blank lines after its last statement."""
    end = len(lines)
    while end and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return "\n".join(lines[:end]).rstrip() + "\n"


def _statement_ends(code: str) -> list[int]:
    """Lines (1-based, ascending) at which a statement ends, as far as ``code`` tokenizes."""
    ends = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.NEWLINE:
                ends.append(token.start[0])
    except Exception:  # noqa: BLE001 - TokenError, IndentationError: no statement ends past here
        pass
    return ends


def _fenced_blocks(text: str) -> list[str]:
    """The bodies of ```-fenced blocks: from the line after an opening fence to the next fence.

    ``str.find`` rather than a regex: a regex for this backtracks quadratically on a long
    fence line without an end, and a reply is hostile text.
    """
    bodies = []
    position = 0
    while (start := text.find("```", position)) >= 0:
        body_start = text.find("\n", start + 3) + 1
        end = text.find("```", body_start) if body_start else -1
        if end < 0:
            break  # no later fence can close either
        bodies.append(text[body_start:end])
        position = end + 3
    return bodies


def _parses(code: str) -> bool:
    return _error_line(code) is None


_TOO_DEEP = -1  # _error_line: the parser gave up on the nesting (or the size), at no line


def _error_line(code: str) -> int | None:
    """``None`` if ``code`` parses, else the line the parser stopped at (0 when it does not say, _TOO_DEEP)."""
    try:
        ast.parse(code)
    except SyntaxError as exc:
        return exc.lineno or 0
    except (MemoryError, RecursionError):  # deep nesting
        return _TOO_DEEP
    except Exception:  # noqa: BLE001 - ValueError (null bytes), whatever else a parser raises
        return 0
    return None


def _with_numpy(code: str) -> str:
    """Prepend ``import numpy as np`` when ``np`` is used but never imported."""
    uses_np = re.search(r"\bnp\.", code) is not None
    imports_np = re.search(r"^[ \t]*import[ \t]+numpy[ \t]+as[ \t]+np\b", code, re.MULTILINE) is not None
    return f"import numpy as np\n\n{code}" if uses_np and not imports_np else code


def intake(text: str, signature: Signature) -> Program | Rejection:
    """Turn reply text into a checked :class:`Program`, or say why not.

    >>> from relic_envs import get_benchmark
    >>> sig = get_benchmark("dgc").signatures()["A"]
    >>> reply = "Here it is:\\n```python\\ndef select_values_A(cur, delta, u, t, violation_now, repair_gain):\\n    return np.array(cur)\\n```"
    >>> program = intake(reply, sig)
    >>> program.source.splitlines()[0]
    'import numpy as np'
    >>> intake("def select_values_A(cur):\\n    return cur", sig).reason
    'signature'
    """
    if not isinstance(text, str):
        return Rejection("syntax", f"reply must be text, got {type(text).__name__}")
    if len(text) > MAX_SOURCE_CHARS:
        return Rejection("syntax", f"reply of {len(text)} characters exceeds the {MAX_SOURCE_CHARS}-character limit")
    try:
        return _checked(text, signature)
    except Exception as exc:  # noqa: BLE001 - a reply is data: nothing in it may stop the run
        return Rejection("syntax", f"the reply could not be read as a program ({type(exc).__name__})")


def _checked(text: str, signature: Signature) -> Program | Rejection:
    source = extract_function(text, signature.function)
    if source is None:
        return Rejection("signature", f"no function named {signature.function!r} in the reply")
    try:
        check_source(source, signature)
    except ProgramError as exc:
        return Rejection(exc.reason, str(exc))
    return Program(signature.role, signature.function, source)
