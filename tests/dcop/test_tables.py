"""Configurations, the results table and the optimum columns with and without OR-Tools."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import relic_envs
from baselines.cli import main
from baselines.dcop import configs, cpsat, table
from baselines.dcop.dsa import DSA
from baselines.dcop.mgm import MGM2
from relic_envs.errors import InvalidConfig, MissingExtra


def test_configuration_names():
    assert configs.make_solver("dsa-b", "dgc") == DSA(0.7, "B")
    assert configs.make_solver("dsa-c:p=0.3", "dgc") == DSA(0.3, "C")
    assert configs.make_solver("mgm2:q=0.7", "shds") == MGM2(0.7)
    tuned = configs.load_tuned()["sensor_dcsp"]["dsa-b"]
    assert configs.make_solver("dsa-b:tuned", "sensor_dcsp") == DSA(tuned["chosen"], "B")
    # The chosen value is the grid value of least training mean.
    assert tuned["chosen"] == min(configs.GRIDS["dsa-b"], key=lambda v: tuned["train_mean"][str(v)])


@pytest.mark.parametrize(
    "spec,match",
    [("dsa-d", "algorithm must be one of"), ("dsa-b:q=0.3", r"NAME in \['p'\]"), ("dsa-b:p=x", "must be a number"),
     ("mgm:paper", "no paper reading"), ("dsa-b:p=2", r"p must lie in \[0, 1\]")],
)
def test_bad_configuration_names_are_precise_errors(spec, match):
    with pytest.raises(InvalidConfig, match=match):
        configs.make_solver(spec, "dgc")


def test_paper_readings_are_never_the_defaults():
    for algorithm, readings in configs.PAPER_READINGS.items():
        default = configs.settings_of(algorithm, "dgc")[1]
        for name, reading in readings.items():
            assert configs.settings_of(f"{algorithm}:paper", name)[1] != default
            assert reading["source"]


def test_table_rows_and_gap_to_the_bound():
    rows = table.build_rows("dgc", specs=["mgm"])
    assert [r.name for r in rows] == ["random assignment", "seeds", "case-study", "mgm"]  # DGC has a case study
    instances = relic_envs.splits("dgc").test_instances()
    assert rows[0].mean == pytest.approx(np.mean([relic_envs.get_benchmark("dgc").problem.cost(i, i.x0) for i in instances]))
    assert rows[3].trace.shape == (51,) and np.all(np.diff(rows[3].trace) <= 1e-9)  # MGM is monotone
    optimum = table.optimum_rows("dgc")
    text = table.format_table("dgc", rows, optimum, table.paper_rows("dgc"))
    bound = optimum[1].mean
    assert f"{100 * (rows[3].mean - bound) / bound:+.1f}%" in text
    assert "paper: RELIC (Qwen-3.6-Flash)" in text and "849.28" in text
    assert table.gap(3.0, 0.0) == "+3.00 (abs)"


def test_without_ortools_tables_work_and_say_how_to_get_the_optimum(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ortools", None)
    monkeypatch.setitem(sys.modules, "ortools.sat.python", None)
    with pytest.raises(MissingExtra, match=r"relic-envs\[solvers\]"):
        cpsat.solve_cpsat("dgc", relic_envs.splits("dgc").test_instances()[0])
    assert cpsat.load_cache("dgc") is not None  # reading the cache needs no solver
    missing = cpsat.load_cache("dgc", tmp_path / "none.npz")
    assert missing is None
    text = table.format_table("dgc", table.build_rows("dgc", specs=[]), [], [])
    assert "pip install 'relic-envs[solvers]'" in text


def test_cli_eval_runs_classical_configurations(capsys):
    assert main(["eval", "--env", "sensor_dcsp", "--team", "mgm", "--team", "dsa-a:p=0.2", "--split", "train1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "mgm" in out and "dsa-a:p=0.2" in out
    assert main(["eval", "--env", "dgc", "--team", "dsa-b:zz=1", "--quiet"]) == 2
    assert "NAME=VALUE" in capsys.readouterr().err


def test_cli_optimum_summarises_the_cache(capsys):
    assert main(["optimum"]) == 0
    out = capsys.readouterr().out
    for name in ("dgc", "dimes", "sensor_dcsp", "shds"):  # one DCOP summary each (MAS and routing follow theirs)
        assert sum(line.startswith(f"{name}: best") and "OR-Tools" in line for line in out.splitlines()) == 1


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    rows = table.build_rows("dgc", specs=["dsa-b"])
    path = table.plot("dgc", rows, table.optimum_rows("dgc"), tmp_path / "dgc.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
