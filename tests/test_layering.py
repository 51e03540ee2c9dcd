"""Layers point down: ``relic_envs`` < ``relic_learner`` < ``baselines`` < ``relic_experiments``.

``relic_envs`` never imports ``baselines`` or ``relic_learner``; ``relic_learner`` never imports
``baselines`` or ``relic_experiments``; ``baselines`` never imports ``relic_experiments``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import relic_envs

UPPER = ("baselines", "relic_learner", "relic_experiments")
ROOT = Path(relic_envs.__file__).parent
ABOVE = {"relic_envs": UPPER, "relic_learner": ("baselines", "relic_experiments"), "baselines": ("relic_experiments",)}


def _imported_modules(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):  # every import, at module level or inside a function
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("package", sorted(ABOVE))
def test_no_module_imports_an_upper_layer(package):
    upper, root = ABOVE[package], ROOT.parent / package
    offenders = []
    for path in root.rglob("*.py"):
        text = path.read_text()
        modules = _imported_modules(ast.parse(text))
        # Doctest lines are code too.
        doctest = [line.strip()[4:] for line in text.splitlines() if line.strip().startswith(">>> ")]
        modules |= _imported_modules(ast.parse("\n".join(s for s in doctest if s.startswith(("import ", "from ")))))
        offenders += [f"{path.relative_to(root)}: {m}" for m in modules if m.split(".")[0] in upper]
    assert not offenders


def test_relic_envs_and_its_cli_work_with_the_upper_layers_missing():
    script = textwrap.dedent(
        """
        import importlib, pkgutil, sys
        for name in ("baselines", "relic_learner"):
            sys.modules[name] = None  # any import of them now raises ImportError
        import relic_envs
        skip = (".seeds", ".case_studies", "jax")  # program files; JAX is an optional extra
        for mod in pkgutil.walk_packages(relic_envs.__path__, "relic_envs."):
            if not any(s in mod.name for s in skip) and not mod.name.endswith("__main__"):
                importlib.import_module(mod.name)
        from relic_envs.cli import main
        assert main(["list"]) == 0
        assert main(["eval", "--env", "dgc", "--team", "initial", "--split", "train1", "--quiet"]) == 0
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


FAMILIES = ("dcop", "mapp", "mas", "co")


@pytest.mark.parametrize("family", FAMILIES)
def test_no_family_imports_another(family):
    """What families share lives in ``relic_envs.core`` (codecs, the JAX policy adapter, ...)."""
    others = {f"relic_envs.{f}" for f in FAMILIES if f != family}
    offenders = []
    for path in (ROOT / family).rglob("*.py"):
        modules = _imported_modules(ast.parse(path.read_text()))
        offenders += [f"{path.relative_to(ROOT)}: {m}" for m in modules
                      if any(m == o or m.startswith(o + ".") for o in others)]
    assert not offenders
