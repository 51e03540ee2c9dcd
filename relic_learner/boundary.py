"""The information boundary for text (Appendix C.5): code never crosses between roles.

Reveal, Distill and Cross-distill replies are the only text one role's programs
leave behind for the others (archives feed Lift, the public tree feeds Bridge and
later Distill/Cross-distill prompts). The prompts ask for "no code", but a model can
answer with code anyway, and then a role's source would reach its teammates. This
guard finds code by *parsing*, not by keywords, and cuts it out:

* fenced blocks (three backticks) and inline spans (one backtick) whose body parses
  as Python and holds a code construct;
* runs of consecutive lines that parse as Python and hold a code construct (an
  English sentence almost never parses; when it does, as ``TYPE: STRATEGY`` or a
  bare word, it holds no construct below).

A "code construct" is a definition, an assignment with a value, a call, an
attribute, a subscript, an operator expression, a comparison, control flow or an
import: things prose does not parse into. A lone one-line expression counts only
with a call, subscript, attribute, lambda or comprehension ("well-known" parses as a
subtraction).
"""

from __future__ import annotations

import ast
import re
import textwrap

_FENCE = re.compile(r"```[^\n`]*\n?(.*?)(?:```|\Z)", re.S)
_INLINE = re.compile(r"`([^`\n]+)`")
_CODE_NODES = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Assign, ast.AugAssign, ast.Return,
    ast.For, ast.While, ast.If, ast.With, ast.Try, ast.Import, ast.ImportFrom, ast.Call, ast.Attribute,
    ast.Subscript, ast.BinOp, ast.Compare, ast.ListComp, ast.GeneratorExp, ast.DictComp, ast.SetComp,
)
_EXPRESSION_CODE = (ast.Call, ast.Subscript, ast.Attribute, ast.Lambda, ast.ListComp, ast.GeneratorExp, ast.DictComp,
                    ast.SetComp)
MAX_LINES = 300  # replies are a few sentences; beyond this the line scan is cut (the rest is dropped)


def is_code(text: str) -> bool:
    """Whether ``text`` parses as Python holding at least one code construct.

    >>> is_code("def f(x):\\n    return x + 1"), is_code("TYPE: STRATEGY"), is_code("Move late.")
    (True, False, False)
    """
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr) and "\n" not in text.strip():
        # One bare expression on one line: "well-known" parses as a subtraction, so only calls,
        # indexing, attributes, lambdas and comprehensions make it code.
        return any(isinstance(node, _EXPRESSION_CODE) for node in ast.walk(tree))
    return any(isinstance(node, _CODE_NODES) for node in ast.walk(tree))


def _strip_line_runs(text: str) -> tuple[str, int]:
    """Remove the longest code-parsing run of lines starting at each line, top to bottom."""  # O(n^2) parses; n is small
    lines = text.splitlines()[:MAX_LINES]
    kept, removed, i = [], 0, 0
    while i < len(lines):
        end = next((j for j in range(len(lines), i, -1) if lines[i].strip() and is_code("\n".join(lines[i:j]))), None)
        if end is None:
            kept.append(lines[i])
            i += 1
            continue
        # Give back trailing lines that are prose-like on their own (a "TYPE: PATTERN" header parses too).
        while end - 1 > i and not is_code(lines[end - 1]) and is_code("\n".join(lines[i:end - 1])):
            end -= 1
        removed += 1
        i = end
    return "\n".join(kept), removed


def strip_code(text: str) -> tuple[str, int]:
    """``text`` with every code segment removed, and how many were removed.

    >>> strip_code("Cover far customers first.\\n```python\\ndef f(x):\\n    return x\\n```")
    ('Cover far customers first.', 1)
    """
    removed = 0

    def cut(match: re.Match[str]) -> str:
        nonlocal removed
        if is_code(match.group(1)):
            removed += 1
            return " "
        return match.group(0)

    text = _FENCE.sub(cut, text)
    text = _INLINE.sub(cut, text)
    text, runs = _strip_line_runs(text)
    return text.strip(), removed + runs
