"""Program policies: role programs given as Python source.

This module turns program text into a policy in the *same* process. It checks the
function against the role's :class:`Signature` with the suite's one rule set
(:func:`check_source`: an allowlist of what a program may reach on ``numpy`` and
``math``, no module objects as values, no classes, no clock reads or uninitialised
memory, ...), but it is not a sandbox: a hostile program can still hang or exhaust
memory here. Untrusted programs (LLM output) belong in the sandboxed evaluator of
``relic_learner``, whose workers run the same check.
"""

from __future__ import annotations

import ast
import builtins
import collections
import hashlib
import math
import re
import string
import threading
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from relic_envs.core.signature import Signature
from relic_envs.errors import InvalidReturn, ProgramError

ALLOWED_IMPORTS = frozenset({"numpy", "math"})

# What a program may reach on the modules, by allowlist (issue 22): public numeric names
# only. Not here: module objects (``np.ma.core.builtins`` led to ``getattr``), I/O, the
# error-callback and print-option state the trusted simulator shares, clock reads
# (``datetime64``), uninitialised memory (``empty*``), ``frombuffer``/``nditer``-style
# raw memory views, class factories (``vectorize`` is fine: it only calls what it is given).
# Here but checked where used: ``ndarray`` (a type only), ``pad`` (no mode "empty").
# Not here: ``object_`` (issue 54: an object array's buffer is its elements' addresses).
NUMPY_ATTRIBUTES = frozenset("""
    e euler_gamma inf nan newaxis pi little_endian False_ True_
    bool bool_ byte ubyte short ushort intc uintc int_ uint long ulong longlong ulonglong
    int8 int16 int32 int64 uint8 uint16 uint32 uint64 intp uintp
    half single double longdouble float16 float32 float64 float128
    csingle cdouble clongdouble complex64 complex128 complex256 str_ bytes_
    generic number integer signedinteger unsignedinteger inexact floating complexfloating
    finfo iinfo issubdtype isdtype result_type promote_types can_cast min_scalar_type common_type
    mintypecode typename isscalar iterable ndim shape size iscomplexobj isrealobj isfortran
    array asarray asanyarray ascontiguousarray asfortranarray asarray_chkfinite require astype copy
    zeros zeros_like ones ones_like full full_like arange linspace logspace geomspace eye identity
    diag diagflat tri tril triu vander meshgrid indices fromfunction fromiter ix_
    reshape ravel transpose matrix_transpose permute_dims swapaxes moveaxis rollaxis expand_dims squeeze
    concatenate concat stack unstack vstack hstack dstack column_stack row_stack block
    split array_split hsplit vsplit dsplit tile repeat flip fliplr flipud roll rot90
    atleast_1d atleast_2d atleast_3d broadcast broadcast_to broadcast_arrays broadcast_shapes
    append insert delete resize trim_zeros pad take take_along_axis put put_along_axis place putmask
    copyto fill_diagonal diagonal trace choose compress select extract piecewise
    apply_along_axis apply_over_axes vectorize ndindex ndenumerate
    add subtract multiply divide true_divide floor_divide power float_power pow mod remainder fmod
    divmod negative positive absolute abs fabs sign signbit copysign nextafter spacing heaviside
    sqrt cbrt square reciprocal exp exp2 expm1 log log2 log10 log1p logaddexp logaddexp2
    sin cos tan arcsin arccos arctan arctan2 asin acos atan atan2 hypot sinc
    sinh cosh tanh arcsinh arccosh arctanh asinh acosh atanh degrees radians deg2rad rad2deg unwrap
    rint round around floor ceil trunc fix modf frexp ldexp i0
    maximum minimum fmax fmin clip nan_to_num real imag conj conjugate angle real_if_close
    iscomplex isreal isnan isinf isfinite isneginf isposinf isnat isclose allclose array_equal array_equiv
    gcd lcm logical_and logical_or logical_not logical_xor
    bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_invert bitwise_count invert
    left_shift right_shift bitwise_left_shift bitwise_right_shift packbits unpackbits
    greater greater_equal less less_equal equal not_equal
    dot vdot inner outer matmul matvec vecmat vecdot tensordot einsum einsum_path kron cross
    convolve correlate interp diff ediff1d gradient trapezoid cumsum cumprod cumulative_sum cumulative_prod
    sum prod mean average median percentile quantile std var min max amin amax ptp
    nansum nanprod nanmean nanmedian nanpercentile nanquantile nanstd nanvar nanmin nanmax
    nanargmin nanargmax nancumsum nancumprod
    any all count_nonzero nonzero flatnonzero argwhere where argmin argmax argsort sort lexsort
    partition argpartition searchsorted sort_complex
    unique unique_values unique_counts unique_inverse unique_all isin intersect1d union1d setdiff1d setxor1d
    bincount histogram histogram2d histogramdd histogram_bin_edges digitize corrcoef cov
    poly poly1d polyfit polyval polyadd polysub polymul polydiv polyder polyint roots
    unravel_index ravel_multi_index diag_indices diag_indices_from tril_indices tril_indices_from
    triu_indices triu_indices_from shares_memory may_share_memory
    bartlett blackman hamming hanning kaiser base_repr binary_repr
    format_float_positional format_float_scientific errstate linalg fft ndarray
""".split())
LINALG_ATTRIBUTES = frozenset("""
    LinAlgError cholesky cond cross det diagonal eig eigh eigvals eigvalsh inv lstsq matmul
    matrix_norm matrix_power matrix_rank matrix_transpose multi_dot norm outer pinv qr slogdet
    solve svd svdvals tensordot tensorinv tensorsolve trace vecdot vector_norm
""".split())
FFT_ATTRIBUTES = frozenset("""
    fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft ihfft
    fftfreq rfftfreq fftshift ifftshift
""".split())
MATH_ATTRIBUTES = frozenset("""
    e inf nan pi tau acos acosh asin asinh atan atan2 atanh cbrt ceil comb copysign cos cosh degrees
    dist erf erfc exp exp2 expm1 fabs factorial floor fma fmod frexp fsum gamma gcd hypot isclose
    isfinite isinf isnan isqrt lcm ldexp lgamma log log10 log1p log2 modf nextafter perm pow prod
    radians remainder sin sinh sqrt sumprod tan tanh trunc ulp
""".split())
# Module (dotted) -> the names a program may reach on it; the submodules are modules, so
# a program may only reach through them (``np.linalg.norm``), never hold them.
MODULE_ATTRIBUTES: dict[str, frozenset[str]] = {
    "numpy": NUMPY_ATTRIBUTES, "numpy.linalg": LINALG_ATTRIBUTES, "numpy.fft": FFT_ATTRIBUTES, "math": MATH_ATTRIBUTES,
}
_SUBMODULES = {("numpy", "linalg"): "numpy.linalg", ("numpy", "fft"): "numpy.fft"}
# Names that may only be looked at, not called: ``np.ndarray(n)`` is uninitialised memory.
# They may appear in annotations and as the class argument of ``isinstance``/``issubclass``,
# and there only as the name itself (see _type_names).
_TYPE_ONLY = frozenset({("numpy", "ndarray")})
_DEFAULT_MODULE_NAMES = {"np": "numpy", "numpy": "numpy", "math": "math"}  # what load_function provides

# Names a program may not mention: they reach code, the interpreter or the outside
# world without an import statement (``getattr(x, "__cl" + "ass__")`` defeats any
# attribute check, so the reflective builtins go too). ``type`` goes because its
# three-argument form makes classes, and ``object``/``super`` serve only classes.
FORBIDDEN_NAMES = frozenset({
    "eval", "exec", "compile", "__import__", "open", "input", "breakpoint", "help",
    "globals", "locals", "vars", "getattr", "setattr", "delattr", "exit", "quit",
    "memoryview", "__builtins__", "__loader__", "__spec__", "type", "object", "super",
})
# The checks on ``np.ndarray`` trust these to be the builtins, so programs may not rebind them.
_UNSHADOWED = frozenset({"isinstance", "issubclass"})
# Attributes no value may be asked for (the modules are covered by the allowlist above;
# these are about what values hold): randomness, files, processes and foreign code
# through numpy itself (``arr.tofile``, ``arr.ctypes``), frames and code objects, and
# modules by their usual names, should some value ever hold one.
FORBIDDEN_ATTRIBUTES = frozenset({
    "random", "ctypeslib", "ctypes", "testing", "f2py", "distutils", "lib", "os", "sys",
    "builtins", "modules", "ma", "core", "emath", "polynomial", "importlib",
    "load", "loads", "save", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt",
    "fromfile", "tofile", "memmap", "fromregex", "dump", "dumps", "DataSource",
    # inputs are read-only arrays; these are the only way to make them writable again
    "setflags", "flags",
    # frames and code objects lead back to trusted globals
    "f_globals", "f_locals", "f_back", "f_builtins", "f_code", "tb_frame", "tb_next",
    "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "cr_origin",
    "ag_frame", "ag_code", "ag_await", "co_code", "co_consts", "func_globals",
    # str.format walks attributes and items the validator never sees ("{0.lib.os}");
    # ``"literal {0:.3f}".format(x)`` with plain fields stays allowed (see _format_problem)
    "format_map",
    # an array's raw buffer (issue 54): on an object array (``np.array([None])`` is one,
    # whatever a program spells) ``.data`` is a writable view of element pointers, so
    # ``.data.cast(...)`` forges objects; ``tobytes`` reads addresses. No buffer export
    # is reachable otherwise: ``memoryview``/``bytes``/``frombuffer`` are not available.
    "data", "cast", "tobytes", "tostring",
})
# Keyword ``where=`` leaves the unselected entries of a ufunc's fresh output uninitialised;
# in reductions it only skips entries, so it is allowed there, when the callee is provably
# one (see _where_problem).
_WHERE_REDUCTIONS = frozenset({
    "sum", "prod", "mean", "std", "var", "min", "max", "amin", "amax", "any", "all", "reduce",
    "nansum", "nanprod", "nanmean", "nanstd", "nanvar", "nanmin", "nanmax",
})
# Clock reads: numpy turns these strings into the current date or time (any case).
_CLOCK_WORDS = frozenset({"now", "today"})
_DATETIME_DTYPE = re.compile(r"[<>=|]?(?:[Mm]8|datetime64|timedelta64)")
_DATETIME_LETTER = re.compile(r"[<>=|]?[Mm]")
# Object dtypes by name (issue 54); what a program builds at run time is closed by the
# buffer attributes above, this only says so early.
_OBJECT_DTYPE = re.compile(r"[<>=|]?O\d*|object_?")  # a bare "M"/"m" is a datetime dtype as an argument
MAX_NESTING = 500  # AST depth; from about 1000 levels on, compile() raises RecursionError
CHECK_CACHE_SIZE = 2048  # verdicts of check_source remembered, by digest of (signature, source)

# Values whose hash is computed from the value alone. A function's or an object's hash is
# its address, and so, since Python 3.10, is a NaN's (of any float or complex type), so
# those are refused. Not numpy's structured (void) scalars: they hash their fields.
_VALUE_HASHED = (str, bytes, int, float, complex, type(None), np.number, np.bool_, np.str_, np.bytes_)


def _safe_hash(value: Any) -> int:
    """``hash`` for values whose hash does not depend on memory addresses.

    With ``PYTHONHASHSEED=0`` (sandbox workers) these hashes are the same in every run;
    an address is not, so ``hash(len)`` and ``hash(float("nan"))`` raise ``TypeError``.

    Not closed here, and not closable by a check on ``hash``: a set's iteration order is
    its elements' hash order, so a set that holds a NaN (or a function) iterates in an
    order that depends on addresses; so does what is computed from that order (``list(s)``,
    ``sum(s)``, ``max(s)`` with a NaN in it). A dict is not affected (it keeps insertion
    order, and looks a NaN key up by identity). Refusing it here would mean refusing sets
    or rewriting every set display and set operation, so it stays open at this layer.
    """
    if isinstance(value, tuple | frozenset):
        for item in value:
            _safe_hash(item)
    elif not isinstance(value, _VALUE_HASHED):
        raise TypeError(f"hash() of a {type(value).__name__} is not available to programs (it depends on memory addresses)")
    elif value != value:
        raise TypeError("hash() of a NaN is not available to programs (a NaN hashes by its memory address)")
    return hash(value)


def _no_print(*args: Any, **kwargs: Any) -> None:
    """``print`` for programs: does nothing, and formats nothing.

    A program has no output to give (workers send stdout nowhere, and a closed or full
    stdout must not fail or stall a call); its arguments are not even turned into text.
    """


# The builtins a program runs with: computation only (no class statements, no ``type``);
# ``hash`` and ``print`` are replaced by _safe_hash and _no_print.
SAFE_BUILTINS: dict[str, Any] = {
    name: getattr(builtins, name)
    for name in (
        "abs", "all", "any", "bool", "callable", "dict", "divmod", "enumerate", "filter", "float",
        "frozenset", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max",
        "min", "next", "pow", "range", "repr", "reversed", "round", "set", "slice",
        "sorted", "str", "sum", "tuple", "zip",
        "ArithmeticError", "AssertionError", "Exception", "FloatingPointError", "IndexError",
        "KeyError", "LookupError", "OverflowError", "RuntimeError", "StopIteration", "TypeError",
        "ValueError", "ZeroDivisionError", "NotImplementedError", "NotImplemented", "Ellipsis",
    )
}
SAFE_BUILTINS["hash"] = _safe_hash
SAFE_BUILTINS["print"] = _no_print


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


# Operators and load/store markers: shared leaf nodes with nothing to check.
_LEAF_KINDS = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


def _walk(tree: ast.AST) -> tuple[list[ast.AST], dict[ast.AST, ast.AST]]:
    """Every node and each node's parent; the first walk, and the depth check.

    Iterative (no recursion on hostile depth), and it stops at the first node deeper than
    :data:`MAX_NESTING`, so no rule ever walks a tree that deep: every later walk and
    climb is then bounded by the tree's size or by that depth.
    """
    nodes: list[ast.AST] = []
    parents: dict[ast.AST, ast.AST] = {}
    stack = [(tree, 0)]
    while stack:
        node, level = stack.pop()
        if level > MAX_NESTING:  # compile() would fail on it anyway
            raise ProgramError("syntax", f"code nested more than {MAX_NESTING} levels deep")
        nodes.append(node)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _LEAF_KINDS):
                parents[child] = node
                stack.append((child, level + 1))
    return nodes, parents


def _module_names(nodes: list[ast.AST]) -> tuple[dict[str, str], str | None]:
    """Name -> module (``"numpy"``, ``"numpy.linalg"``, ...) for every name that can hold a module."""
    names = dict(_DEFAULT_MODULE_NAMES)
    bound: list[tuple[str, str]] = []
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound.append((alias.asname, alias.name))
                else:
                    top = alias.name.split(".")[0]
                    bound.append((top, top))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}"
                if dotted in MODULE_ATTRIBUTES:
                    bound.append((alias.asname or alias.name, dotted))
    for name, module in bound:
        if module not in MODULE_ATTRIBUTES:
            continue  # an import the import rule refuses anyway
        if names.get(name, module) != module:
            return names, f"the name {name!r} bound to both {names[name]} and {module}"
        names[name] = module
    return names, None


def _import_problem(node: ast.Import | ast.ImportFrom) -> str | None:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.startswith("numpy.random"):
                return "numpy.random: randomness must come from the instance (the argument u for DCOPs)"
            if alias.name not in MODULE_ATTRIBUTES:
                return f"import of {alias.name!r} (allowed: numpy, math, numpy.linalg, numpy.fft)"
        return None
    module = node.module or ""
    if node.level:
        return "relative import (allowed: numpy, math)"
    if module.startswith("numpy.random") or any(a.name == "random" for a in node.names):
        return "numpy.random: randomness must come from the instance (the argument u for DCOPs)"
    if module not in MODULE_ATTRIBUTES:
        return f"import from {module!r} (allowed: numpy, math, numpy.linalg, numpy.fft)"
    for alias in node.names:
        # A type-only or checked-call name imported bare could be used other than the checks see.
        if alias.name not in MODULE_ATTRIBUTES[module] or (module, alias.name) in _TYPE_ONLY or (module, alias.name) in _CHECKED_CALLS:
            return f"from {module} import {alias.name} (not among the numeric names a program may use)"
    return None


def _type_root(node: ast.AST) -> ast.expr | None:
    """The expression ``node`` only looks at as a type: an annotation, or isinstance/issubclass's class argument."""
    if isinstance(node, ast.arg | ast.AnnAssign):
        return node.annotation
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return node.returns
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2):
        return node.args[1]
    return None


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_name(node: ast.AST) -> bool:
    """A name or a dotted name (``list``, ``np.ndarray``), nothing computed."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _type_names(expression: ast.expr) -> list[ast.expr]:
    """The names a type expression is made of; none unless it is only names, tuples and ``| None``.

    Any other expression around a type-only name could hand the class itself out:
    ``{}[np.ndarray]`` raises a ``KeyError`` that carries it, and ``cur | np.ndarray``
    passes it to a value's own ``|`` (numpy's puts it in an object array). ``None`` has
    no ``|`` of its own, so ``np.ndarray | None`` only reaches ``type.__or__``.
    """
    names: list[ast.expr] = []
    stack = [expression]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Tuple):
            stack.extend(node.elts)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr) and (_is_none(node.left) or _is_none(node.right)):
            stack.append(node.right if _is_none(node.left) else node.left)
        elif _is_name(node):
            names.append(node)
        elif not _is_none(node):
            return []
    return names


def _type_positions(nodes: list[ast.AST]) -> set[ast.AST]:
    """Every name that is only looked at as a type (see _type_names), found top-down.

    Linear: each node lies under at most one annotation or class argument, and is
    visited once from there (a climb from every name to the top was quadratic).
    """
    positions: set[ast.AST] = set()
    for node in nodes:
        root = _type_root(node)
        if root is not None:
            positions.update(_type_names(root))
    return positions


def _in_type_position(node: ast.AST, type_positions: set[ast.AST]) -> bool:
    """True when ``node`` is only looked at: an annotation, or isinstance/issubclass's class argument."""
    return node in type_positions


def _pad_problem(call: ast.Call) -> str | None:
    """``np.pad``'s mode must be written out, as a string other than "empty" (uninitialised padding)."""
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        return "np.pad with *arguments (its mode must be written out)"
    for mode in [*call.args[2:3], *(k.value for k in call.keywords if k.arg == "mode")]:
        if not (isinstance(mode, ast.Constant) and isinstance(mode.value, str)):
            return "np.pad with a mode other than a string literal (mode='empty' leaves the padding uninitialised)"
        if mode.value == "empty":
            return "np.pad(..., mode='empty') (it leaves the padding uninitialised)"
    return None


# Names that may only be called directly, with their arguments checked where they are
# called: held as a value (``p = np.pad``), they could be called with anything.
_CHECKED_CALLS: dict[tuple[str, str], Callable[[ast.Call], str | None]] = {("numpy", "pad"): _pad_problem}


def _module_use_problem(name: ast.Name, module: str, parents: dict[ast.AST, ast.AST], type_positions: set[ast.AST]) -> str | None:
    """A module name may only start an attribute chain that ends on an allowed non-module name."""
    if not isinstance(name.ctx, ast.Load):
        return f"rebinding {name.id!r}, a module name"
    node: ast.AST = name
    dotted = name.id
    while True:
        parent = parents.get(node)
        if not (isinstance(parent, ast.Attribute) and parent.value is node):
            return f"use of the module {dotted!r} as a value (programs may only use its functions and constants)"
        dotted += f".{parent.attr}"
        if parent.attr not in MODULE_ATTRIBUTES[module]:
            return f"{dotted} (not among the numeric names a program may use)"
        if (module, parent.attr) in _TYPE_ONLY and not _in_type_position(parent, type_positions):
            return (f"{dotted} used other than as a type in isinstance or an annotation, by name, in a tuple "
                    "or with | None (calling it gives uninitialised memory)")
        check_call = _CHECKED_CALLS.get((module, parent.attr))
        if check_call is not None:
            call = parents.get(parent)
            if not (isinstance(call, ast.Call) and call.func is parent):
                return f"{dotted} other than called directly (its arguments are checked where it is called)"
            return check_call(call)
        submodule = _SUBMODULES.get((module, parent.attr))
        if submodule is None:
            return None
        module, node = submodule, parent


def _format_fields_plain(text: str, depth: int = 0) -> bool:
    """True when every replacement field of a format string names an argument without walking it."""
    try:
        for _, field, spec, _ in string.Formatter().parse(text):
            if field is not None and not re.fullmatch(r"\w*", field):
                return False
            if spec and (depth > 1 or not _format_fields_plain(spec, depth + 1)):
                return False
    except ValueError:
        return False
    return True


def _format_problem(node: ast.Attribute) -> str | None:
    literal = node.value
    if isinstance(literal, ast.Constant) and isinstance(literal.value, str) and _format_fields_plain(literal.value):
        return None
    return "str.format other than on a literal with plain fields ('{0.attr}' and '{0[key]}' walk objects; use an f-string)"


def _string_problem(value: str | bytes) -> str | None:
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    if _is_dunder(text.strip()):
        return f"the string {value!r} (dunder names are off limits)"
    if text.lower() in _CLOCK_WORDS or _DATETIME_DTYPE.match(text):
        return f"the string {value!r} (clock reads and datetime types make evaluation depend on when it runs)"
    if _OBJECT_DTYPE.fullmatch(text):
        return f"the string {value!r} (numpy reads it as the object dtype: arrays of references are not for programs)"
    return None


def _where_problem(func: ast.expr) -> str | None:
    """``where=`` only on a call that is provably a reduction: an attribute named like one.

    ``np.sum``, ``a.max``, ``np.add.reduce``: no value a program can reach holds a
    reduction's name as an attribute for anything but that reduction or a number (the
    names on the modules are the allowlist's; values get no attributes, since a program
    assigns none and makes no classes). A bare name proves nothing: ``sum = np.add``, a
    parameter or a loop variable may be bound to a ufunc, so ``where=`` on a name is
    refused, whatever it is spelled (the builtins' ``sum``/``max`` take no ``where=``).
    """
    if isinstance(func, ast.Attribute) and func.attr in _WHERE_REDUCTIONS:
        return None
    callee = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else "a computed callee"
    return (f"where= in {callee}() (only a reduction called by attribute may take it, as in np.sum(a, where=m) or "
            "a.max(initial=0, where=m): a ufunc leaves the unselected entries uninitialised; use np.where)")


def _call_problem(node: ast.Call) -> str | None:
    keywords = {k.arg for k in node.keywords}
    if None in keywords:
        return "'**' in a call (keyword arguments must be written out)"
    if "call" in keywords:
        return "keyword 'call=' (a numpy error callback would run outside the program's own calls)"
    if "where" in keywords and (problem := _where_problem(node.func)) is not None:
        return problem
    for arg in [*node.args, *(k.value for k in node.keywords)]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str | bytes):
            text = arg.value.decode("latin-1") if isinstance(arg.value, bytes) else arg.value
            if _DATETIME_LETTER.fullmatch(text):
                return f"the argument {arg.value!r} (numpy reads it as a datetime/timedelta dtype)"
    return None


# Nodes that bind a name other than through ast.Name (parameters, defs, handlers,
# import aliases, match captures).
_BINDERS = (ast.arg, ast.FunctionDef, ast.ExceptHandler, ast.alias, ast.MatchAs, ast.MatchStar, ast.MatchMapping)


def _bound_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.arg):
        return node.arg
    if isinstance(node, ast.alias):
        return node.asname
    if isinstance(node, ast.MatchMapping):
        return node.rest
    return node.name


def _node_problem(
    node: ast.AST, parents: dict[ast.AST, ast.AST], modules: dict[str, str], type_positions: set[ast.AST],
) -> str | None:
    """What is forbidden about this one node, or ``None``."""
    if isinstance(node, ast.Attribute):
        if not isinstance(node.ctx, ast.Load):
            # numpy and math are shared with teammates and the simulator.
            return f"assignment to the attribute {node.attr!r} (programs may only assign local names and items)"
        if node.attr == "random":
            return "np.random: randomness must come from the instance (the argument u for DCOPs)"
        if node.attr.startswith("_"):
            return f"access to the private attribute {node.attr!r}"
        if node.attr in FORBIDDEN_ATTRIBUTES:
            return f"access to {node.attr!r} (file, process, module or foreign-code access)"
        if node.attr == "format":
            return _format_problem(node)
    elif isinstance(node, ast.Name):
        if node.id in FORBIDDEN_NAMES or _is_dunder(node.id):
            return f"use of {node.id!r}"
        if node.id in _UNSHADOWED and not isinstance(node.ctx, ast.Load):
            return f"rebinding {node.id!r}"
        if node.id in modules:
            return _module_use_problem(node, modules[node.id], parents, type_positions)
    elif isinstance(node, ast.Import | ast.ImportFrom):
        return _import_problem(node)
    elif isinstance(node, ast.Call):
        return _call_problem(node)
    elif isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
        return _string_problem(node.value)
    elif isinstance(node, _BINDERS):
        bound = _bound_name(node)
        # A module name bound to something else would still be checked as that module.
        if bound in _UNSHADOWED or (bound in _DEFAULT_MODULE_NAMES and not isinstance(node, ast.alias)):
            return f"rebinding {bound!r}"
    elif isinstance(node, ast.ClassDef):
        return f"class {node.name} (programs return plain data; a class's own methods could run outside the limits)"
    elif isinstance(node, ast.Global | ast.Nonlocal):
        return f"'{type(node).__name__.lower()}' statement (programs may not rebind module state)"
    elif isinstance(node, ast.Await | ast.AsyncFor | ast.AsyncWith | ast.Yield | ast.YieldFrom):
        return "async or generator code (a role function is a plain synchronous def)"
    return None


def _forbidden_use(nodes: list[ast.AST], parents: dict[ast.AST, ast.AST]) -> str | None:
    """The first forbidden construct among ``nodes`` (all of a tree), described; ``None`` if clean."""
    modules, problem = _module_names(nodes)
    if problem is not None:
        return problem
    type_positions = _type_positions(nodes)
    for node in nodes:
        problem = _node_problem(node, parents, modules, type_positions)
        if problem is not None:
            return problem
    return None


def _parse(source: str) -> ast.Module:
    """``ast.parse`` that fails only with ``ProgramError("syntax")``, whatever the text."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError) as exc:  # ValueError: null bytes in the source
        line = getattr(exc, "lineno", None)
        raise ProgramError("syntax", f"line {line}: {getattr(exc, 'msg', exc)}") from None
    except (RecursionError, MemoryError):  # the parser's own limits on nesting
        raise ProgramError("syntax", "the source nests too deeply to parse") from None
    except Exception as exc:  # noqa: BLE001 - a parser failure is the text's fault, never ours
        raise ProgramError("syntax", f"the source does not parse ({type(exc).__name__})") from None


def check_source(source: str, signature: Signature) -> ast.Module:
    """Parse ``source`` and check it against ``signature``; return the AST.

    The rules (Appendix C.2, "Executable validation", and issue 22): the exact function
    name as a plain synchronous top-level ``def`` without decorators, the paper's
    positional parameters in order and nothing else, imports of ``numpy`` (with
    ``numpy.linalg``, ``numpy.fft``) and ``math`` only; on those modules only the public
    numeric names of :data:`MODULE_ATTRIBUTES`, and no module as a value; no
    independent randomness, clock reads or uninitialised memory; no I/O, no reflective
    builtins (``eval``, ``exec``, ``getattr``, ``type``, ...), no private or dunder
    attribute, no ``str.format`` attribute walks, no class definitions, no attribute
    assignment, no ``global`` statements; no code nested deeper than :data:`MAX_NESTING`
    (checked before any rule is walked).

    A verdict is remembered by a digest of the signature and the text (the last
    :data:`CHECK_CACHE_SIZE` of them), so the same text is validated once per process;
    the text is still parsed on every call, and the tree returned is a fresh one.

    Raises
    ------
    ProgramError
        ``reason="syntax"`` when it does not parse (whatever the parser raises),
        ``"signature"`` when the function is missing or its definition differs from the
        paper's, ``"forbidden"`` for a forbidden construct.
    """
    if not isinstance(source, str):
        raise ProgramError("syntax", f"program source must be a str, got {type(source).__name__}")
    # Parsed on every call: callers get a tree of their own, and a parser failure may be
    # this process's (MemoryError) rather than the text's, so it is never remembered.
    tree = _parse(source)
    key = _check_key(source, signature)
    verdict = _CHECKED.recall(key)
    if verdict is _UNKNOWN:
        try:
            _check_tree(tree, signature)
            verdict = None
        except ProgramError as exc:
            verdict = (exc.reason, str(exc).removeprefix(f"{exc.reason}: "))
        except (RecursionError, MemoryError):  # this process's limits, not the text's: not remembered
            raise ProgramError("syntax", "the source is too large to check") from None
        _CHECKED.remember(key, verdict)
    if verdict is not None:
        raise ProgramError(*verdict)
    return tree


def _check_tree(tree: ast.Module, signature: Signature) -> None:
    """The rules on a parsed tree, depth first (see check_source); raises ProgramError."""
    nodes, parents = _walk(tree)
    problem = _forbidden_use(nodes, parents)
    if problem is not None:
        raise ProgramError("forbidden", problem)
    _check_signature(tree, signature)


def _check_key(source: str, signature: Signature) -> bytes:
    """A digest of all that a verdict depends on: the function's name, its parameters and the text."""
    digest = hashlib.sha256()
    for part in (signature.function, *signature.param_names):
        digest.update(part.encode() + b"\0")
    digest.update(source.encode("utf-8", "surrogatepass"))  # a lone surrogate is the parser's to refuse
    return digest.digest()


_UNKNOWN = object()


class _Verdicts:
    """check_source's verdicts (``None`` or ``(reason, detail)``) by key, least recently used out first.

    The same text comes back often (re-validation, a program shared by many teams, each
    worker's own check); a bounded map keeps its cost to one validation. A lock: the
    evaluator may check from several threads.
    """

    def __init__(self, size: int):
        self.size = size
        self._verdicts: collections.OrderedDict[bytes, tuple[str, str] | None] = collections.OrderedDict()
        self._lock = threading.Lock()

    def recall(self, key: bytes) -> Any:
        with self._lock:
            if key not in self._verdicts:
                return _UNKNOWN
            self._verdicts.move_to_end(key)
            return self._verdicts[key]

    def remember(self, key: bytes, verdict: tuple[str, str] | None) -> None:
        with self._lock:
            self._verdicts[key] = verdict
            self._verdicts.move_to_end(key)
            while len(self._verdicts) > self.size:
                self._verdicts.popitem(last=False)

    def __len__(self) -> int:
        return len(self._verdicts)


_CHECKED = _Verdicts(CHECK_CACHE_SIZE)


def _check_signature(tree: ast.Module, signature: Signature) -> ast.Module:
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

    :func:`load_named` with the signature's function name.
    """
    return load_named(program, signature.function, filename)


def load_named(program: ast.Module | types.CodeType, function: str, filename: str = "<program>") -> Callable[..., Any]:
    """Execute a checked module in a fresh namespace; return its function ``function``.

    What a role worker calls: it knows its role's function name, not the benchmark (a
    jailed worker holds no benchmark code, see docs/learner.md).

    The namespace's builtins are :data:`SAFE_BUILTINS` (no ``type``, ``object`` or class
    statements; a ``hash`` that refuses address-based hashes, a NaN's included; a
    ``print`` that does nothing), and ``import`` reaches ``numpy`` and ``math`` only.
    """
    code = program if isinstance(program, types.CodeType) else compile(program, filename, "exec")
    safe = dict(SAFE_BUILTINS)
    # The checked tree only imports numpy and math; hand over an importer for those two
    # without giving the program the import machinery itself.
    safe["__import__"] = _import_allowed
    namespace: dict[str, Any] = {"__builtins__": safe, "np": np, "numpy": np, "math": math, "__name__": "relic_program"}
    exec(code, namespace)
    return namespace[function]


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
