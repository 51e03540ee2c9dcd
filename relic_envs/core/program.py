"""Program policies: role programs given as Python source.

This module turns program text into a policy in the *same* process. It checks the
function against the role's :class:`Signature` and rejects the obvious forbidden uses
(independent randomness, imports other than ``numpy``/``math``), but it is not a
sandbox: a hostile program can still hang or exhaust memory here. Untrusted programs
(LLM output) belong in the sandboxed evaluator of ``relic_learner``.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from relic_envs.core.signature import Signature
from relic_envs.errors import InvalidReturn, ProgramError

ALLOWED_IMPORTS = frozenset({"numpy", "math"})


def check_source(source: str, signature: Signature) -> ast.Module:
    """Parse ``source`` and check it against ``signature``; return the AST.

    Raises
    ------
    ProgramError
        ``reason="syntax"`` when it does not parse, ``"signature"`` when the function
        is missing or its parameters differ from the paper's, ``"forbidden"`` for
        ``np.random``/``random`` or an import other than ``numpy`` and ``math``.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ProgramError("syntax", f"line {exc.lineno}: {exc.msg}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                if name.split(".")[0] not in ALLOWED_IMPORTS or name.startswith("numpy.random"):
                    raise ProgramError("forbidden", f"import of {name!r} (allowed: numpy, math)")
            if isinstance(node, ast.ImportFrom) and any(a.name == "random" for a in node.names):
                raise ProgramError("forbidden", "numpy.random: randomness must come from the argument u")
        if isinstance(node, ast.Attribute) and node.attr == "random":
            raise ProgramError("forbidden", "np.random: randomness must come from the argument u")
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == signature.function]
    if not functions:
        raise ProgramError("signature", f"no top-level function named {signature.function!r}")
    args = functions[-1].args
    names = tuple(a.arg for a in args.posonlyargs + args.args)
    if names != signature.param_names or args.vararg or args.kwarg or args.kwonlyargs:
        raise ProgramError(
            "signature",
            f"{signature.function} must take exactly ({', '.join(signature.param_names)}), got ({', '.join(names)})",
        )
    return tree


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
        namespace: dict[str, Any] = {"np": np, "numpy": np, "math": math, "__name__": "relic_program"}
        exec(compile(tree, name or f"<{signature.function}>", "exec"), namespace)
        self.source = source
        self.signature = signature
        self.name = name or signature.function
        self._function = namespace[signature.function]

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
