"""The paper's case-study programs: verbatim, at the exact signatures, valid on the test split."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import relic_envs
from relic_envs.case_studies import case_study_names, case_study_path, case_study_source, case_study_team
from relic_envs.core.registry import SPECS

# The paper sits beside the checkout (CONTRIBUTING.md: ../shared/paper/relic.tex).
PAPER = Path(__file__).resolve().parents[1].parent / "shared" / "paper" / "relic.tex"
SHIPPED = [(name, role) for name in case_study_names() for role in "ABC"]
HEADER = re.compile(r"\A((?:#[^\n]*\n)+)")


def label(name: str, role: str) -> str:
    return f"lst:case-{name.replace('_', '-')}-{role.lower()}"


@pytest.fixture(scope="module")
def listings() -> dict[str, str]:
    """``{label: code}`` of every labelled lstlisting in relic.tex."""
    if not PAPER.exists():
        pytest.skip(f"the paper is not at {PAPER}")
    blocks = re.findall(r"\\begin\{lstlisting\}\[(.*?)\]\n(.*?)\n\\end\{lstlisting\}", PAPER.read_text(), re.S)
    return {m.group(1): code for opts, code in blocks if (m := re.search(r"label=\{([^}]*)\}", opts))}


def test_every_built_benchmark_with_a_case_study_ships_it(listings):
    slugs = {m.group(1) for lab in listings if (m := re.fullmatch(r"lst:case-(.+)-a", lab))}
    names = {slug.replace("-", "_") for slug in slugs}
    spec_names = {s.name for s in SPECS}
    assert names <= spec_names, names - spec_names  # every case study belongs to a catalogued benchmark
    assert set(case_study_names()) == {n for n in names if n in relic_envs.names()}


@pytest.mark.parametrize(("name", "role"), SHIPPED)
def test_code_is_the_papers_listing_byte_for_byte(listings, name, role):
    source = case_study_source(name, role)
    header = HEADER.match(source).group(1)
    assert f"Listing {label(name, role)};" in header
    assert source[len(header):] == listings[label(name, role)] + "\n"


@pytest.mark.parametrize(("name", "role"), SHIPPED)
def test_listing_has_our_exact_signature(name, role):
    """Name, parameters and annotations as our ``to_kwargs`` delivers them."""
    tree = ast.parse(case_study_source(name, role))
    (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    params = ", ".join(f"{a.arg}: {ast.unparse(a.annotation)}" for a in fn.args.args)
    header = f"def {fn.name}({params}) -> {ast.unparse(fn.returns)}:"
    assert header == relic_envs.get_benchmark(name).signatures()[role].header()


@pytest.mark.parametrize("name", case_study_names())
def test_case_study_team_is_valid_on_the_test_split(name):
    instances = [i for regime in relic_envs.splits(name).test.values() for i in regime]
    results = relic_envs.rollout(name, case_study_team(name), instances)
    assert all(r.valid for r in results), [r.invalid for r in results if not r.valid]


def test_missing_role_file_names_the_path():
    with pytest.raises(FileNotFoundError, match="case-study program for dgc role D"):
        case_study_source("dgc", "D")
    assert case_study_path("dgc", "A").name == "A.py"
