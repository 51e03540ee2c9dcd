"""Program mutation on the AST: the offline backend's stand-in for an LLM proposal.

Three kinds of edit, each leaving the function's name and parameters untouched:

- ``"constant"``: scale a float constant (or shift an int one) in the function body;
- ``"operator"``: swap an arithmetic, boolean-mask or comparison operator
  (``+``/``-``, ``*``/``/``, ``&``/``|``, ``<``/``<=``/``>`` ...);
- ``"term"``: add a term built from one of the function's own numeric parameters to an
  arithmetic expression (``expr + 0.1 * float(np.mean(param))``), or scale one of
  its constants by such a statistic.

Edits skip subscripts and shape-like keywords (``axis=``, ``dtype=`` ...) where a changed
number would only break indexing. A mutant can still fail at run time (a division
swapped in, a term on an integer array used as an index); the sandbox judges that,
exactly as it judges an LLM's program.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import random
import re
import textwrap

MUTATION_KINDS = ("constant", "operator", "term")

_ARITH_SWAPS: dict[type, tuple[type, ...]] = {
    ast.Add: (ast.Sub,),
    ast.Sub: (ast.Add,),
    ast.Mult: (ast.Div,),
    ast.Div: (ast.Mult,),
    ast.BitAnd: (ast.BitOr,),
    ast.BitOr: (ast.BitAnd,),
}
_COMPARE_SWAPS: dict[type, tuple[type, ...]] = {
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt, ast.LtE),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
}
_SYMBOL = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.BitAnd: "&", ast.BitOr: "|",
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
}
_NUMERIC_TERMS = (ast.Add, ast.Sub, ast.Mult, ast.Div)
# Keyword arguments whose value is a shape, an axis or a type: a changed number breaks the call.
_STRUCTURAL_KEYWORDS = frozenset({"axis", "axes", "keepdims", "dtype", "shape", "ndmin", "k", "n", "minlength"})
_NUMERIC_ANNOTATIONS = frozenset({"np.ndarray", "numpy.ndarray", "ndarray", "int", "float", "np.float64", "np.int64"})
_FACTORS = (0.5, 0.75, 0.9, 1.1, 1.25, 1.5, 2.0)
_STATS = ("mean", "max", "min", "std")

_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
_DEF_LINE = re.compile(r"^[ \t]*def [A-Za-z_]\w*\s*\(", re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class Mutation:
    """A mutated program and what was changed.

    ``kind`` is one of :data:`MUTATION_KINDS`, or ``"none"`` when the program offered
    no site (it is then returned unchanged); ``detail`` says what changed and where.
    """

    kind: str
    detail: str
    source: str


def find_program(text: str) -> str | None:
    """The last program in ``text``: a fenced Python block, else source from the last ``def``.

    Only text that parses and defines a function counts.

    >>> find_program("Parent:\\n```python\\ndef f(x):\\n    return x + 1\\n```\\nThanks")
    'def f(x):\\n    return x + 1'
    >>> find_program("no code here") is None
    True
    """
    for block in reversed(_FENCE.findall(text)):
        source = textwrap.dedent(block).strip()
        if _defines_function(source):
            return source
    for match in reversed(list(_DEF_LINE.finditer(text))):
        lines = textwrap.dedent(text[match.start():]).splitlines()
        # Prose may follow the function: keep the longest prefix that parses.
        for end in range(len(lines), 0, -1):
            source = "\n".join(lines[:end]).strip()
            if _defines_function(source):
                return source
    return None


def normalize(source: str) -> str | None:
    """``source`` re-printed by ``ast`` (comments and layout dropped), or ``None`` if it does not parse."""
    try:
        return ast.unparse(ast.parse(source))
    except (SyntaxError, ValueError):
        return None


def mutate_program(source: str, rng: random.Random, kind: str | None = None) -> Mutation:
    """Apply one mutation to ``source``, drawing every choice from ``rng``.

    Parameters
    ----------
    source:
        Python source defining at least one function.
    rng:
        The only source of randomness (same state, same mutant).
    kind:
        Force a kind from :data:`MUTATION_KINDS`; ``None`` draws one among those with a site.

    Raises
    ------
    ValueError
        ``source`` does not parse or defines no function, or ``kind`` is unknown.
    """
    if kind is not None and kind not in MUTATION_KINDS:
        raise ValueError(f"kind must be None or one of {', '.join(MUTATION_KINDS)}; got {kind!r}")
    tree = ast.parse(source)
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    if not functions:
        raise ValueError("source defines no top-level function to mutate")
    sites = _Sites()
    for fn in functions:
        sites.collect(fn)
    appliers = {"constant": _mutate_constant, "operator": _mutate_operator, "term": _add_term}
    available = [k for k in MUTATION_KINDS if sites.has(k)]
    if kind is not None:
        available = [kind] if kind in available else []
    if not available:
        return Mutation("none", "no mutation site found; parent returned unchanged", ast.unparse(tree))
    chosen = rng.choice(available)
    detail = appliers[chosen](tree, sites, rng)
    if chosen == "term":
        _ensure_numpy_import(tree)
    ast.fix_missing_locations(tree)
    mutated = ast.unparse(tree)
    _check_same_interface(source, mutated)
    return Mutation(chosen, detail, mutated)


# -- sites -----------------------------------------------------------------------------------
class _Sites:
    """Mutable places in function bodies, outside indexing and structural keywords."""

    def __init__(self) -> None:
        self.floats: list[ast.Constant] = []
        self.ints: list[ast.Constant] = []
        self.binops: list[ast.BinOp] = []
        self.compares: list[ast.Compare] = []
        self.numeric_params: list[str] = []

    def has(self, kind: str) -> bool:
        if kind == "constant":
            return bool(self.floats or self.ints)
        if kind == "operator":
            return bool(self.compares or any(type(b.op) in _ARITH_SWAPS for b in self.binops))
        scalable = any(abs(c.value) >= 1e-6 for c in self.floats)
        return bool(self.numeric_params and (scalable or any(type(b.op) in _NUMERIC_TERMS for b in self.binops)))

    def collect(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for arg in fn.args.posonlyargs + fn.args.args:
            annotation = ast.unparse(arg.annotation) if arg.annotation is not None else None
            if (annotation is None or annotation in _NUMERIC_ANNOTATIONS) and arg.arg not in self.numeric_params:
                self.numeric_params.append(arg.arg)
        body = fn.body
        if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
            body = body[1:]  # the docstring is text, not a constant to tune
        for stmt in body:
            self._visit(stmt, structural=False)

    def _visit(self, node: ast.AST, structural: bool) -> None:
        if isinstance(node, ast.arguments):
            return  # defaults and annotations of nested functions are interface, not logic
        if isinstance(node, ast.Subscript):
            self._visit(node.value, structural)
            self._visit(node.slice, True)
            return
        if isinstance(node, ast.keyword):
            self._visit(node.value, structural or node.arg in _STRUCTURAL_KEYWORDS)
            return
        if not structural:
            if isinstance(node, ast.Constant) and type(node.value) is float:
                self.floats.append(node)
            elif isinstance(node, ast.Constant) and type(node.value) is int:
                self.ints.append(node)
            elif isinstance(node, ast.BinOp):
                self.binops.append(node)
            elif isinstance(node, ast.Compare):
                self.compares.append(node)
        for child in ast.iter_child_nodes(node):
            self._visit(child, structural)


# -- the three kinds -----------------------------------------------------------------------------
def _tunable(floats: list[ast.Constant]) -> list[ast.Constant]:
    """Float constants that act as weights or thresholds: not 0 and not an epsilon guard like 1e-9."""
    return [c for c in floats if abs(c.value) >= 1e-6] or floats


def _mutate_constant(tree: ast.Module, sites: _Sites, rng: random.Random) -> str:
    # Floats are weights and thresholds; ints are more often counts, so prefer floats.
    if sites.floats:
        node = rng.choice(_tunable(sites.floats))
        old = node.value
        new = float(f"{old * rng.choice(_FACTORS):.4g}") if old != 0 else rng.choice((0.05, 0.1, -0.05))
    else:
        node = rng.choice(sites.ints)
        old = node.value
        new = old + rng.choice((-1, 1))
    node.value = new
    return f"constant {old!r} -> {new!r} (line {node.lineno})"


def _mutate_operator(tree: ast.Module, sites: _Sites, rng: random.Random) -> str:
    candidates: list[tuple[ast.AST, int]] = [(b, -1) for b in sites.binops if type(b.op) in _ARITH_SWAPS]
    candidates += [(c, i) for c in sites.compares for i, op in enumerate(c.ops) if type(op) in _COMPARE_SWAPS]
    node, index = rng.choice(candidates)
    if index < 0:
        old = type(node.op)
        new = rng.choice(_ARITH_SWAPS[old])
        node.op = new()
    else:
        old = type(node.ops[index])
        new = rng.choice(_COMPARE_SWAPS[old])
        node.ops[index] = new()
    return f"operator {_SYMBOL[old]} -> {_SYMBOL[new]} (line {node.lineno})"


def _add_term(tree: ast.Module, sites: _Sites, rng: random.Random) -> str:
    param = rng.choice(sites.numeric_params)
    stat = rng.choice(_STATS)
    coef = rng.choice((0.05, 0.1, 0.2, -0.1))
    statistic = ast.parse(f"float(np.{stat}({param}))", mode="eval").body
    numeric = [b for b in sites.binops if type(b.op) in _NUMERIC_TERMS]
    # Prefer expressions that already carry a float weight: they are scores, not indices.
    weighted = [b for b in numeric if any(isinstance(n, ast.Constant) and type(n.value) is float for n in ast.walk(b))]
    scalable = [c for c in sites.floats if abs(c.value) >= 1e-6]  # scaling 0 or an epsilon changes nothing
    if scalable and (not weighted or rng.random() < 0.5):
        node = rng.choice(scalable)
        # Scale a constant by the statistic: c -> c * (1 + coef * tanh(stat(param))), bounded near c.
        scale = ast.parse(f"(1.0 + {coef} * float(np.tanh(np.{stat}({param}))))", mode="eval").body
        _replace(tree, node, ast.BinOp(left=ast.Constant(node.value), op=ast.Mult(), right=scale))
        return f"term: constant {node.value!r} scaled by {coef} * tanh({stat}({param})) (line {node.lineno})"
    target = rng.choice(weighted or numeric)
    term = ast.BinOp(left=ast.Constant(abs(coef)), op=ast.Mult(), right=statistic)
    added = ast.BinOp(left=copy.deepcopy(target), op=ast.Add() if coef > 0 else ast.Sub(), right=term)
    _replace(tree, target, added)
    return f"term: {'+' if coef > 0 else '-'} {abs(coef)} * {stat}({param}) added (line {target.lineno})"


# -- helpers -------------------------------------------------------------------------------------
def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, ast.copy_location(new, old))
                return
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if item is old:
                        value[i] = ast.copy_location(new, old)
                        return
    raise AssertionError("mutation site is not in the tree")  # internal invariant


def _ensure_numpy_import(tree: ast.Module) -> None:
    for node in tree.body:
        if isinstance(node, ast.Import) and any(a.name == "numpy" and a.asname == "np" for a in node.names):
            return
    tree.body.insert(0, ast.Import(names=[ast.alias(name="numpy", asname="np")]))


def _defines_function(source: str) -> bool:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) for n in tree.body)


def _interface(source: str) -> list[tuple[str, tuple[str, ...]]]:
    tree = ast.parse(source)
    return [
        (n.name, tuple(a.arg for a in n.args.posonlyargs + n.args.args))
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def _check_same_interface(before: str, after: str) -> None:
    if _interface(before) != _interface(after):  # internal invariant: edits never touch a def line
        raise AssertionError("mutation changed a function's name or parameters")
