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


def test_the_throughput_command_prints_a_row_per_benchmark():
    pytest.importorskip("jax")
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "jax_throughput.py"), "--env", "dgc", "mas_jd", "hmtsp",
         "mapp_pc", "--batches", "2", "--loop-cap", "1", "--repeats", "1", "--no-f32"],
        capture_output=True, text=True, timeout=600, cwd=ROOT, check=False)
    assert out.returncode == 0, out.stderr
    rows = {line.split("|")[0].strip(): line for line in out.stdout.splitlines() if line.count("|") == 12}
    assert {"dgc", "mas_jd", "hmtsp", "mapp_pc"} <= set(rows), out.stdout
    assert "device: cpu" in out.stdout or "device: gpu" in out.stdout
    for name in ("dgc", "mas_jd", "hmtsp", "mapp_pc"):
        jax_rate = float(rows[name].split("|")[6])
        assert jax_rate > 0


def test_the_profile_command_names_the_compiled_programs_operations():
    pytest.importorskip("jax")
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "jax_profile.py"), "--env", "mrcps", "--batch", "2", "--top", "5"],
        capture_output=True, text=True, timeout=600, cwd=ROOT, check=False)
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.count("|") == 3 and not line.strip().startswith("ms")]
    assert 1 <= len(rows) <= 5, out.stdout
    assert all(float(row.split("|")[0]) >= 0 and int(row.split("|")[1]) >= 1 for row in rows)
    assert any("while" in row or "fusion" in row for row in rows), out.stdout
