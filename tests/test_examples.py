"""The examples run as their docstrings say (small settings)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("env", ["mapp_pc", "dgc"])
def test_jax_pg_trains_and_compares_the_two_drivers(env, tmp_path):
    pytest.importorskip("optax")
    plot = tmp_path / "curve.png"
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "jax_pg.py"), "--env", env, "--iters", "6", "--batch", "4",
         "--pz-iters", "1", "--plot", str(plot)],
        capture_output=True, text=True, timeout=600, cwd=ROOT, check=False)
    assert out.returncode == 0, out.stderr
    curve = [float(m) for m in re.findall(r"^\s+\d+ \| (-?[\d.e+]+)$", out.stdout, re.M)]
    assert len(curve) >= 2 and all(map(lambda x: x == x, curve))  # finite, printed per update
    rates = re.search(r"jax ([\d,]+) .*\| pettingzoo ([\d,]+) ", out.stdout)
    assert rates, out.stdout
    assert all(int(r.replace(",", "")) > 0 for r in rates.groups())
    assert plot.stat().st_size > 1000
