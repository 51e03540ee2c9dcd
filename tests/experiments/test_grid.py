"""Experiment grids: specs, tables, resume after SIGKILL, and a real local Ray cluster that loses a worker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from relic_envs.errors import InvalidConfig
from relic_experiments.cell import CellResult, load_result
from relic_experiments.runner import run_grid
from relic_experiments.spec import GridSpec, load_spec, parse_spec
from relic_experiments.tables import aggregate, csv, markdown

TINY = dict(name="tiny", methods=("relic", "eoh"), envs=("mapp_pc",), seeds=(0,), batches=1, proposals=3)


def _files(path: Path) -> dict[str, str]:
    return {r: (path / "team" / f"{r}.py").read_text() for r in "ABC"}


def test_spec_errors_name_the_key(tmp_path):
    with pytest.raises(InvalidConfig, match="methods: unknown"):
        GridSpec(name="x", methods=("nope",), envs=("dgc",))
    with pytest.raises(InvalidConfig, match="unknown grid keys"):
        parse_spec({"name": "x", "methods": ["eoh"], "envs": ["dgc"], "colour": 1})
    with pytest.raises(InvalidConfig, match="misses"):
        parse_spec({"name": "x"})
    with pytest.raises(InvalidConfig, match="batches"):
        GridSpec(name="x", methods=("eoh",), envs=("dgc",), batches=6)
    (tmp_path / "g.toml").write_text('name = "g"\nmethods = ["eoh"]\nenvs = ["dgc", "mapp_pc"]\n'
                                     'interfaces = ["paper", "alt"]\nseeds = [0]\n')
    spec = load_spec(tmp_path / "g.toml")
    assert [c.key for c in spec.cells()] == ["eoh/dgc-paper/seed0", "eoh/mapp_pc-paper/seed0",
                                             "eoh/mapp_pc-alt/seed0"]  # DGC has no alternative interface
    (tmp_path / "bad.toml").write_text("name = ")
    with pytest.raises(InvalidConfig, match="not valid TOML"):
        load_spec(tmp_path / "bad.toml")


def test_tables_follow_the_papers_aggregation():
    def result(method, seed, value):
        from relic_experiments.cell import Cell

        return CellResult(Cell(method, "dgc", "paper", seed), {"test": value}, {"test": [value]}, {}, 0, 0.0)

    results = [result("a", 0, 10.0), result("a", 1, 14.0), result("b", 0, 20.0), result("b", 1, 20.0)]
    rows, columns, entries = aggregate(results)
    a, b = entries[("a", "dgc/test")], entries[("b", "dgc/test")]
    assert (a.mean, a.std, a.best, a.gap) == (12.0, 2.0, True, 0.0)  # DGC is minimised: 12 is best
    assert b.gap == pytest.approx(100 * 8 / 12) and not b.best
    assert "**12 ± 2**" in markdown(results) and "b,dgc/test,20.0,0.0,2," in csv(results)


def test_table_command_prints_every_format_and_a_chart(tmp_path):
    from relic_experiments.cli import main
    from relic_experiments.runner import write_spec

    spec = GridSpec(name="t", methods=("eoh",), envs=("dgc",), seeds=(0,))
    write_spec(spec, tmp_path)
    with pytest.raises(SystemExit):
        main(["table", str(tmp_path), "--format", "nope"])
    assert main(["table", str(tmp_path / "missing")]) == 2  # no grid there: a one-line error
    cell = spec.cells()[0]
    cell.path(tmp_path).mkdir(parents=True)
    result = CellResult(cell, {"test": 900.0}, {"test": [900.0]}, {"proposal": 150, "auxiliary": 0}, 0, 1.0)
    (cell.path(tmp_path) / "result.json").write_text(json.dumps(result.to_json()))
    for fmt in ("md", "csv", "tex"):
        assert main(["table", str(tmp_path), "--format", fmt, "--plot", str(tmp_path / "bars.png")]) == 0
    assert (tmp_path / "bars.png").stat().st_size > 1000


def test_a_killed_grid_resumes_and_skips_finished_cells(tmp_path):
    spec_path = tmp_path / "tiny.toml"
    spec_path.write_text('name = "tiny"\nmethods = ["relic", "eoh"]\nenvs = ["mapp_pc"]\nseeds = [0]\n'
                         "batches = 1\nproposals = 2\n")
    whole = run_grid(load_spec(spec_path), tmp_path / "whole", progress=False)
    assert not whole.failures and len(whole.results) == 2
    cmd = [sys.executable, "-m", "relic_experiments.cli", "run", str(spec_path), "--out", str(tmp_path / "cut"),
           "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    first = tmp_path / "cut" / "relic" / "mapp_pc-paper" / "seed0"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (first / "result.json").exists():
        time.sleep(0.05)  # the first cell finishes; kill during the second
    while time.monotonic() < deadline and not (tmp_path / "cut" / "eoh" / "mapp_pc-paper" / "seed0" /
                                               "events.jsonl").exists():
        time.sleep(0.02)
    assert proc.poll() is None, "the grid finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    stamp = (first / "result.json").stat().st_mtime_ns
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and "1 run now, 1 already done" in again.stdout
    assert (first / "result.json").stat().st_mtime_ns == stamp  # never run twice
    for r in whole.results:
        cut = load_result(r.cell, tmp_path / "cut")
        assert cut.objective == r.objective
        assert _files(r.cell.path(tmp_path / "cut")) == _files(r.cell.path(tmp_path / "whole"))


@pytest.mark.slow
def test_ray_cluster_survives_a_killed_worker_and_matches_the_local_backend(tmp_path):
    ray = pytest.importorskip("ray")
    spec = GridSpec(**TINY)
    local = run_grid(spec, tmp_path / "local", progress=False)
    victim = spec.cells()[0].path(tmp_path / "ray")
    killed = threading.Event()

    def kill_midway():
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            events = victim / "events.jsonl"
            if events.exists() and len(events.read_text().splitlines()) >= 5 and (victim / "worker.pid").exists():
                os.kill(int((victim / "worker.pid").read_text()), signal.SIGKILL)
                killed.set()
                return
            time.sleep(0.02)

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        killer = threading.Thread(target=kill_midway, daemon=True)
        killer.start()
        report = run_grid(spec, tmp_path / "ray", backend="ray", progress=False)
        killer.join(timeout=5)
    finally:
        ray.shutdown()
    assert killed.is_set(), "the worker was never killed"
    assert not report.failures and len(report.results) == len(local.results)
    for r in local.results:
        remote = load_result(r.cell, tmp_path / "ray")
        assert remote.objective == r.objective and remote.per_instance == r.per_instance
        assert _files(r.cell.path(tmp_path / "ray")) == _files(r.cell.path(tmp_path / "local"))
    kinds = [json.loads(x)["kind"] for x in (victim / "events.jsonl").read_text().splitlines()]
    assert kinds.count("run_start") == 1  # the retried task resumed the cell, it did not start it over
