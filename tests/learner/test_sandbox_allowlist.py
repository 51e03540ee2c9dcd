"""Issue 22: validation by allowlist. Every shipped program still passes; what a program
can reach from the allowed names holds no module, no reflective builtin, no clock and no
uninitialised memory; ``str.format`` cannot walk attributes; programs make no classes."""

from __future__ import annotations

import builtins
import collections
import math
import random
import textwrap
import types
import warnings

import numpy as np
import pytest

import relic_envs
from relic_envs.case_studies import case_study_names, case_study_source
from relic_envs.core import program as rules
from relic_envs.core.program import check_source
from relic_envs.errors import ProgramError
from relic_envs.seeds import seed_source
from relic_learner.llm.mutate import mutate_program

SIG = relic_envs.get_benchmark("dgc").signatures()["A"]
HEADER = "import numpy as np\n\ndef select_values_A(cur, delta, u, t, violation_now, repair_gain):\n"


def program(body: str, prelude: str = "") -> str:
    return prelude + HEADER + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"


def _shipped():
    for name in relic_envs.names():
        bench = relic_envs.get_benchmark(name)
        for interface in bench.interfaces:
            for role, sig in bench.signatures(interface).items():
                yield f"seed {name}/{interface}/{role}", seed_source(name, role, interface), sig
    for interface in ("paper", "alt"):
        for name in case_study_names(interface):
            for role, sig in relic_envs.get_benchmark(name).signatures(interface).items():
                yield f"case study {name}/{interface}/{role}", case_study_source(name, role, interface), sig


def test_every_shipped_program_passes():
    for label, source, sig in _shipped():
        try:
            check_source(source, sig)
        except ProgramError as exc:
            pytest.fail(f"{label}: {exc}")


def test_the_offline_backends_mutants_pass_as_before():
    # A mutant may be invalid (the sandbox judges it), but never for a rule of issue 22.
    for label, source, sig in _shipped():
        rng = random.Random(label)
        for _ in range(8):
            source = mutate_program(source, rng).source
            try:
                check_source(source, sig)
            except ProgramError as exc:
                pytest.fail(f"mutant of {label}: {exc}\n{source}")


REFUSED = {
    "the issue's route to os": 'g = np.ma.core.builtins.getattr\nreturn cur',
    "np.lib": "x = np.lib\nreturn cur",
    "a module as a value": "m = np\nreturn m.zeros(3)",
    "a module in a container": "m = [np][0]\nreturn cur",
    "a submodule as a value": "la = np.linalg\nreturn cur",
    "a name off the list": "x = np.show_config\nreturn cur",
    "numpy internals": "x = np.core.multiarray\nreturn cur",
    "import of a submodule off the list": "return cur",
    "str.format walking attributes": 'raise ValueError("{0.real.imag}".format(cur))',
    "str.format walking items": 'raise ValueError("{0[0]}".format(cur))',
    "str.format in a nested spec": 'raise ValueError("{:{0.real}}".format(1))',
    "str.format on a variable": 'f = "{0}"\nraise ValueError(f.format(1))',
    "format_map": 'raise ValueError("{x}".format_map({"x": 1}))',
    "a class": "class A:\n    pass\nreturn cur",
    "three-argument type": 'E = type("E", (Exception,), {})\nreturn cur',
    "type at all": "if type(cur) == list:\n    pass\nreturn cur",
    "object": "x = object()\nreturn cur",
    "super": "x = super\nreturn cur",
    "rebinding isinstance": "isinstance = len\nreturn cur",
    "rebinding isinstance in a match": "match len:\n    case isinstance:\n        pass\nreturn cur",
    "a parameter named like a module": "def helper(np):\n    return np\nreturn cur",
    "numpy error callback": "with np.errstate(call=len):\n    pass\nreturn cur",
    "np.seterrcall": "np.seterrcall(len)\nreturn cur",
    "print options": 'np.set_printoptions(precision=1)\nreturn cur',
    "keyword expansion": 'return np.sum(cur, **{"axis": 0})',
    "rebinding a module name": "np = 3\nreturn cur",
}
PRELUDE = {"import of a submodule off the list": "import numpy.ma\n"}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(case):
    with pytest.raises(ProgramError) as info:
        check_source(program(REFUSED[case], PRELUDE.get(case, "")), SIG)
    assert info.value.reason == "forbidden", str(info.value)


@pytest.mark.parametrize("body", [
    'return np.asarray(cur) if isinstance(cur, np.ndarray) else cur',
    'n = np.linalg.norm(delta, axis=1)\nreturn cur',
    'x = np.fft.rfft(u[:, 0])\nreturn cur',
    'x = math.floor(math.pi * np.float64(2.5))\nreturn cur',
    's = "{:.3f} {} {name}".format(1.0, 2, name=3)\nreturn cur',
    's = f"{cur.sum():.3f} {cur!r:>10}"\nreturn cur',
    'with np.errstate(divide="ignore", invalid="ignore"):\n    r = delta / delta\nreturn cur',
    'h = hash(("a", 1, 2.0))\nreturn cur',
    'from numpy.linalg import norm\nreturn cur',
])
def test_ordinary_numeric_code_is_allowed(body):
    check_source(program(body, "import math\n"), SIG)


def test_annotations_and_module_forms_are_allowed():
    source = ("import numpy\nimport numpy.linalg as la\nfrom numpy import fft\nfrom math import sqrt\n\n"
              "def select_values_A(cur: numpy.ndarray, delta, u, t, violation_now, repair_gain) -> numpy.ndarray | None:\n"
              "    return cur + 0 * la.norm(delta) * fft.fft(u[0]).real.sum() * sqrt(1.0)\n")
    check_source(source, SIG)


def test_the_allowlists_hold_no_module_but_the_declared_submodules():
    modules = {"numpy": np, "numpy.linalg": np.linalg, "numpy.fft": np.fft, "math": math}
    for module, names in rules.MODULE_ATTRIBUTES.items():
        for name in names:
            value = getattr(modules[module], name, None)
            if isinstance(value, types.ModuleType):
                assert rules._SUBMODULES.get((module, name)) == f"{module}.{name}", f"{module}.{name}"


# What no chain of attribute look-ups may reach from an allowed name or an ordinary value.
_OUT_OF_REACH = {
    **{id(getattr(builtins, n)): f"builtins.{n}" for n in (
        "getattr", "setattr", "delattr", "eval", "exec", "compile", "open", "__import__", "vars",
        "globals", "locals", "breakpoint", "input", "memoryview", "type", "object", "super")},
    **{id(getattr(np, n)): f"np.{n}" for n in (
        "empty", "empty_like", "ndarray", "datetime64", "timedelta64", "seterrcall", "seterr",
        "set_printoptions", "dtype", "frombuffer", "memmap", "load", "fromfile")},
}


def _roots() -> dict[str, object]:
    modules = {"numpy": np, "numpy.linalg": np.linalg, "numpy.fft": np.fft, "math": math}
    roots: dict[str, object] = {}
    for module, names in rules.MODULE_ATTRIBUTES.items():
        for name in names:
            if hasattr(modules[module], name) and (module, name) not in rules._SUBMODULES | dict.fromkeys(rules._TYPE_ONLY):
                roots[f"{module}.{name}"] = getattr(modules[module], name)
    roots.update({f"builtins.{n}": v for n, v in rules.SAFE_BUILTINS.items()})
    a = np.arange(6.0).reshape(2, 3)
    values = dict(
        array=a, ints=np.arange(3), mask=a > 1, f8=np.float64(1.5), i8=np.int64(2), int=1, float=1.0,
        complex=1j, str="s", bytes=b"b", list=[1], dict={1: 2}, tuple=(1,), set={1}, range=range(3),
        slice=slice(1), exception=ValueError("x"), function=lambda x: x, generator=(i for i in range(2)),
        iterator=iter([1]), errstate=np.errstate(), finfo=np.finfo(float), iinfo=np.iinfo(int),
        poly=np.poly1d([1, 2]), vectorize=np.vectorize(abs), ndindex=np.ndindex(2), ndenumerate=np.ndenumerate(a),
        broadcast=np.broadcast(a, a), flat=a.flat, dtype=a.dtype, view=a[:1], data=a.data, keys={1: 2}.keys(),
        map=map(abs, [1]), zip=zip([1]), unique=np.unique(a, return_counts=True),
    )
    roots.update({f"<{k}>": v for k, v in values.items()})
    return roots


def test_no_attribute_chain_reaches_a_module_or_a_reflective_builtin():
    """Breadth-first over every public attribute a validated program may ask for, 4 deep."""
    seen: set[int] = set()
    found = []
    queue = collections.deque((path, value, 0) for path, value in _roots().items())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while queue:
            path, value, depth = queue.popleft()
            if id(value) in seen:
                continue
            seen.add(id(value))
            if isinstance(value, types.ModuleType | types.FrameType | types.CodeType) or id(value) in _OUT_OF_REACH:
                found.append(f"{path} -> {_OUT_OF_REACH.get(id(value), type(value).__name__)}")
                continue
            if depth == 4:
                continue
            for name in dir(value):
                if name.startswith("_") or name in rules.FORBIDDEN_ATTRIBUTES or name in ("format", "random"):
                    continue
                try:
                    queue.append((f"{path}.{name}", getattr(value, name), depth + 1))
                except Exception:  # noqa: BLE001, S112 - a property that needs a state it lacks
                    continue
    assert not found, found
    assert len(seen) > 5000  # the walk really went through numpy
