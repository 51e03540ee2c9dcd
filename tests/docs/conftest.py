"""The built documentation site, shared by the strict-build test and the browser test (one build per session)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="session")
def site_build(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """``(site directory, the completed ``mkdocs build --strict`` process)``."""
    pytest.importorskip("mkdocs")
    site = tmp_path_factory.mktemp("docs") / "site"
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    return site, out
