"""Program policies: role programs given as Python source.

This module turns program text into a policy in the *same* process. It checks the
function against the role's :class:`Signature` and rejects the obvious forbidden uses
(independent randomness, imports other than ``numpy``/``math``), but it is not a
sandbox: a hostile program can still hang or exhaust memory here. Untrusted programs
(LLM output) belong in the sandboxed evaluator of ``relic_learner``.
"""

from __future__ import annotations

import ast
import builtins
import math
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from relic_envs.core.signature import Signature
from relic_envs.errors import InvalidReturn, ProgramError

ALLOWED_IMPORTS = frozenset({"numpy", "math"})

# Names a program may not mention: they reach code, the interpreter or the outside
# world without an import statement (``getattr(x, "__cl" + "ass__")`` defeats any
# attribute check, so the reflective builtins go too).
FORBIDDEN_NAMES = frozenset({
    "eval", "exec", "compile", "__import__", "open", "input", "breakpoint", "help",
    "globals", "locals", "vars", "getattr", "setattr", "delattr", "exit", "quit",
    "memoryview", "__builtins__", "__loader__", "__spec__",
})
# Attributes that lead to randomness, files, processes or foreign code through
# numpy itself (``np.load``, ``arr.tofile``, ``np.ctypeslib``, ``np.testing``'s os).
FORBIDDEN_ATTRIBUTES = frozenset({
    "random", "ctypeslib", "ctypes", "testing", "f2py", "distutils", "lib", "os", "sys",
    "load", "loads", "save", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt",
    "fromfile", "tofile", "memmap", "fromregex", "dump", "dumps", "DataSource",
    # inputs are read-only arrays; these are the only way to make them writable again
    "setflags", "flags",
    # frames and code objects lead back to trusted globals
    "f_globals", "f_locals", "f_back", "f_builtins", "f_code", "tb_frame", "tb_next",
    "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "co_code", "func_globals",
})

# The builtins a program runs with: computation only. Class statements need
# ``__build_class__``; programs cannot name it (dunder), the interpreter can.
SAFE_BUILTINS: dict[str, Any] = {
    name: getattr(builtins, name)
    for name in (
        "abs", "all", "any", "bool", "callable", "dict", "divmod", "enumerate", "filter", "float",
        "frozenset", "hash", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max",
        "min", "next", "object", "pow", "print", "range", "repr", "reversed", "round", "set", "slice",
        "sorted", "str", "sum", "super", "tuple", "type", "zip", "__build_class__",
        "ArithmeticError", "AssertionError", "Exception", "FloatingPointError", "IndexError",
        "KeyError", "LookupError", "OverflowError", "RuntimeError", "StopIteration", "TypeError",
        "ValueError", "ZeroDivisionError", "NotImplementedError", "NotImplemented", "Ellipsis",
    )
}


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _forbidden_use(tree: ast.Module) -> str | None:
    """The first forbidden construct in ``tree``, described; ``None`` if clean."""
    for node in ast.walk(tree):
        # No attribute stores at all: numpy and math are shared with teammates and the
        # simulator, and any alias (``m = np.linalg; m.norm = f``) could reach them.
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
            return f"assignment to the attribute {node.attr!r} (programs may only assign local names and items)"
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                if name.split(".")[0] not in ALLOWED_IMPORTS or name.startswith("numpy.random"):
                    return f"import of {name!r} (allowed: numpy, math)"
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    return "relative import (allowed: numpy, math)"
                for alias in node.names:
                    if alias.name == "random":
                        return "numpy.random: randomness must come from the instance (the argument u for DCOPs)"
                    if alias.name == "*" or alias.name in FORBIDDEN_ATTRIBUTES or alias.name.startswith("_"):
                        return f"from {node.module} import {alias.name}"
        elif isinstance(node, ast.Attribute):
            if node.attr == "random":
                return "np.random: randomness must come from the instance (the argument u for DCOPs)"
            if node.attr.startswith("_"):
                return f"access to the private attribute {node.attr!r}"
            if node.attr in FORBIDDEN_ATTRIBUTES:
                return f"access to {node.attr!r} (file, process or foreign-code access)"
        elif isinstance(node, ast.Name) and (node.id in FORBIDDEN_NAMES or _is_dunder(node.id)):
            return f"use of {node.id!r}"
        elif isinstance(node, ast.Global | ast.Nonlocal):
            return f"'{type(node).__name__.lower()}' statement (programs may not rebind module state)"
        elif isinstance(node, ast.Await | ast.AsyncFor | ast.AsyncWith | ast.Yield | ast.YieldFrom):
            return "async or generator code (a role function is a plain synchronous def)"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _is_dunder(node.value.strip()):
            return f"the string {node.value!r} (dunder names are off limits)"
    return None


def check_source(source: str, signature: Signature) -> ast.Module:
    """Parse ``source`` and check it against ``signature``; return the AST.

    The rules (Appendix C.2, "Executable validation"): the exact function name as a
    plain synchronous top-level ``def`` without decorators, the paper's positional
    parameters in order and nothing else, imports of ``numpy`` and ``math`` only, no
    independent randomness, no I/O, no reflective builtins (``eval``, ``exec``,
    ``getattr``, ``open``, ``__import__``, ...), no private or dunder attribute, no
    attribute assignment, no ``global`` statements.

    Raises
    ------
    ProgramError
        ``reason="syntax"`` when it does not parse, ``"signature"`` when the function
        is missing or its definition differs from the paper's, ``"forbidden"`` for a
        forbidden construct.
    """
    if not isinstance(source, str):
        raise ProgramError("syntax", f"program source must be a str, got {type(source).__name__}")
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:  # ValueError: null bytes in the source
        line = getattr(exc, "lineno", None)
        raise ProgramError("syntax", f"line {line}: {getattr(exc, 'msg', exc)}") from None
    except RecursionError:
        raise ProgramError("syntax", "the source nests too deeply to parse") from None
    problem = _forbidden_use(tree)
    if problem is not None:
        raise ProgramError("forbidden", problem)
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == signature.function]
    if any(isinstance(n, ast.AsyncFunctionDef) and n.name == signature.function for n in tree.body):
        raise ProgramError("signature", f"{signature.function} must be a plain synchronous def, not async")
    if not functions:
        raise ProgramError("signature", f"no top-level function named {signature.function!r}")
    function = functions[-1]
    if function.decorator_list:
        raise ProgramError("signature", f"{signature.function} must be a plain def without decorators")
    args = function.args
    names = tuple(a.arg for a in args.posonlyargs + args.args)
    if names != signature.param_names or args.vararg or args.kwarg or args.kwonlyargs or args.defaults:
        raise ProgramError(
            "signature",
            f"{signature.function} must take exactly ({', '.join(signature.param_names)}), got ({', '.join(names)})",
        )
    return tree


def load_function(program: ast.Module | types.CodeType, signature: Signature, filename: str = "<program>") -> Callable[..., Any]:
    """Execute a checked module (its AST or compiled code) in a fresh namespace; return the role function.

    The namespace's builtins are :data:`SAFE_BUILTINS`, and ``import`` reaches
    ``numpy`` and ``math`` only.
    """
    code = program if isinstance(program, types.CodeType) else compile(program, filename, "exec")
    safe = dict(SAFE_BUILTINS)
    # The checked tree only imports numpy and math; hand over an importer for those two
    # without giving the program the import machinery itself.
    safe["__import__"] = _import_allowed
    namespace: dict[str, Any] = {"__builtins__": safe, "np": np, "numpy": np, "math": math, "__name__": "relic_program"}
    exec(code, namespace)
    return namespace[signature.function]


def _import_allowed(name: str, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
    if level or name.split(".")[0] not in ALLOWED_IMPORTS or name.startswith("numpy.random"):
        raise ImportError(f"import of {name!r} is not allowed (allowed: numpy, math)")
    return builtins.__import__(name, globals, locals, fromlist, level)



class ProgramPolicy:
    """A policy made from role program source.

    Calling it with an observation decodes the observation into the paper's
    arguments (``signature.to_kwargs``), runs the function, and checks the return
    An exception inside the program becomes
    :class:`~relic_envs.errors.InvalidReturn` with reason ``"exception"``; the
    episode then checks the returned value against the return contract, and
    :func:`~relic_envs.core.rollout.rollout` turns either failure into an
    invalid-rollout record naming the role.

    >>> from relic_envs.core.registry import get_benchmark
    >>> sig = get_benchmark("dgc").signatures()["A"]
    >>> src = "def select_values_A(cur, delta, u, t, violation_now, repair_gain):\\n    return cur"
    >>> ProgramPolicy(src, sig).signature.function
    'select_values_A'
    """

    def __init__(self, source: str, signature: Signature, *, name: str | None = None):
        tree = check_source(source, signature)
        self.source = source
        self.signature = signature
        self.name = name or signature.function
        self._function = load_function(tree, signature, f"<{self.name}>")

    @classmethod
    def from_file(cls, path: str | Path, signature: Signature) -> ProgramPolicy:
        """Load a program from a ``.py`` file."""
        return cls(Path(path).read_text(), signature, name=str(path))

    def __call__(self, obs: Mapping[str, Any]) -> Any:
        kwargs = self.signature.to_kwargs(obs)
        try:
            value = self._function(**kwargs)
        except Exception as exc:  # a program's own error is its verdict, not ours
            raise InvalidReturn("exception", f"{type(exc).__name__}: {exc}") from exc
        return value

    def __repr__(self) -> str:
        return f"ProgramPolicy({self.name!r})"
