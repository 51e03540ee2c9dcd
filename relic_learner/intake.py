"""Program intake: from LLM reply text to a checked role program (Appendix C.2).

The reply is reduced to the requested function (a fenced block or raw source; prose
before the function is discarded), ``import numpy as np`` is added when the code uses
``np`` without importing it, and the result is checked against the role's
:class:`~relic_envs.core.signature.Signature` with the suite's one rule set
(:func:`relic_envs.core.program.check_source`). Nothing else is rewritten.

Intake never raises on bad text: it returns a :class:`Rejection` with a reason the
search can charge and log.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import re

from relic_envs.core.program import check_source
from relic_envs.core.signature import Signature
from relic_envs.errors import ProgramError

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)
MAX_SOURCE_CHARS = 100_000  # a reply longer than this is not a role function


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
    blocks = [m.group(2) for m in _FENCE.finditer(text) if definition.search(m.group(2))]
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
    # Drop trailing prose: the longest prefix that parses wins.
    for end in range(len(lines), 0, -1):
        candidate = "\n".join(lines[:end]).rstrip() + "\n"
        if _parses(candidate):
            return _with_numpy(candidate)
    return _with_numpy("\n".join(lines).rstrip() + "\n")  # let validation name the syntax error


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return True


def _with_numpy(code: str) -> str:
    """Prepend ``import numpy as np`` when ``np`` is used but never imported."""
    uses_np = re.search(r"\bnp\.", code) is not None
    imports_np = re.search(r"^\s*import\s+numpy\s+as\s+np\b", code, re.MULTILINE) is not None
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
    source = extract_function(text, signature.function)
    if source is None:
        return Rejection("signature", f"no function named {signature.function!r} in the reply")
    try:
        check_source(source, signature)
    except ProgramError as exc:
        return Rejection(exc.reason, str(exc))
    return Program(signature.role, signature.function, source)
