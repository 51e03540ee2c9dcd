"""The documentation site: it builds with warnings as errors, and every Python snippet in the docs runs.

Snippets are the ```python blocks of docs/**/*.md (README.md's run in tests/test_readme.py); the blocks of one page run
in order in one fresh interpreter (a later block may use an earlier block's names), in a
temporary directory. A block preceded by ``<!-- snippet: skip (reason) -->`` is shown but
not run; the reason is required. A ```bash block preceded by ``<!-- snippet: shell -->`` runs
too, at its place among the page's Python blocks (a newcomer's command line, such as training
a policy that the next Python block loads), with this interpreter's ``bin`` first on ``PATH``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
BLOCK = re.compile(r"(<!-- snippet: skip \((?P<why>[^)]+)\) -->\n)?```python\n(?P<code>.*?)```"
                   r"|<!-- snippet: shell -->\n```bash\n(?P<shell>.*?)```", re.S)
SHELL = """import os as _os, subprocess as _sp, sys as _sys
_sp.run({!r}, shell=True, check=True, executable="/bin/bash",
        env={{**_os.environ, "PATH": _os.path.dirname(_sys.executable) + _os.pathsep + _os.environ.get("PATH", "")}})
"""


def snippets(text: str) -> list[str]:
    """The runnable blocks of a Markdown text, in order, as Python (a shell block becomes its ``subprocess`` call)."""
    return [SHELL.format("set -euo pipefail\n" + m["shell"]) if m["shell"] is not None else m["code"]
            for m in BLOCK.finditer(text) if not m["why"]]


def run_page(code_blocks: list[str], cwd: Path) -> subprocess.CompletedProcess:
    script = "\n".join(code_blocks)
    return subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, timeout=600)


PAGES = sorted(p for p in ROOT.glob("docs/**/*.md") if snippets(p.read_text()))


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_snippet_of_a_page_runs(page, tmp_path):
    out = run_page(snippets(page.read_text()), tmp_path)
    assert out.returncode == 0, f"{page.relative_to(ROOT)}:\n{out.stderr[-3000:]}"


def test_a_broken_snippet_fails_and_a_skipped_one_does_not_run(tmp_path):
    page = "```python\nx = 1\n```\n<!-- snippet: skip (slow) -->\n```python\nraise SystemExit(3)\n```\n" \
           "```python\nassert x == 2, 'the snippet is wrong'\n```\n"
    assert len(snippets(page)) == 2
    out = run_page(snippets(page), tmp_path)
    assert out.returncode != 0 and "the snippet is wrong" in out.stderr


def test_a_shell_snippet_runs_in_its_place_and_a_failing_one_fails(tmp_path):
    page = "<!-- snippet: shell -->\n```bash\necho made > made.txt\n```\n" \
           "```python\nassert open('made.txt').read() == 'made\\n'\n```\n```bash\nexit 3\n```\n"
    assert len(snippets(page)) == 2  # an unmarked bash block is shown only
    assert run_page(snippets(page), tmp_path).returncode == 0
    failing = "<!-- snippet: shell -->\n```bash\nfalse\necho not reached > late.txt\n```\n"
    assert run_page(snippets(failing), tmp_path).returncode != 0 and not (tmp_path / "late.txt").exists()


def test_home_page_shows_the_readmes_two_commands():
    fence = re.compile(r"```bash\n(.*?)```", re.S)
    readme = fence.findall((ROOT / "README.md").read_text())[:2]
    assert fence.findall((ROOT / "docs" / "index.md").read_text())[:2] == readme


def test_site_builds_strict(site_build):
    site, out = site_build
    assert out.returncode == 0, out.stderr[-3000:]
    pages = {p.parent.name for p in (site / "benchmarks").glob("*/index.html")}
    import relic_envs

    assert set(relic_envs.names()) <= pages  # one page per benchmark
    dgc = (site / "benchmarks" / "dgc" / "index.html").read_text()
    assert "relic/dgc-v0" in dgc and "select_values_A" in dgc and "dgc.png" in dgc
