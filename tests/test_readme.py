"""README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 2
    namespace: dict = {}
    for block in blocks:  # later blocks reuse names of earlier ones, as a reader would
        exec(compile(block, str(README), "exec"), namespace)
    assert namespace["infos"]["A"]["objective"] >= 0
    assert len(namespace["results"]) == 50 and all(r.valid for r in namespace["results"])


def test_readme_set_up_commands_match_ci():
    text = README.read_text()
    ci = (README.parent / ".ci" / "run").read_text()
    test_command = "bash scripts/install-sandbox.sh && pip install -e '.[dev,jax,solvers,jaxmarl]' && python -m pytest -n auto --dist loadfile"
    assert test_command in text and test_command in ci
