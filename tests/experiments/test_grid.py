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
from relic_experiments.cell import Cell, CellResult, load_result
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
    with pytest.raises(InvalidConfig, match="rpm must be a positive int"):
        GridSpec(name="x", methods=("eoh",), envs=("dgc",), rpm=0)
    with pytest.raises(InvalidConfig, match="rate_window_s"):
        GridSpec(name="x", methods=("eoh",), envs=("dgc",), tpm=10, rate_window_s=-1)
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


def test_table_command_prints_every_format_and_a_chart(tmp_path, capsys):
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
    capsys.readouterr()
    assert main(["table", str(tmp_path), "--solver", "--paper"]) == 0
    out = capsys.readouterr().out
    assert "| *CP-SAT best found* | 211.32 |" in out and "| *eoh (paper)* | 926.29 ± 6.53 |" in out
    assert main(["usage", str(tmp_path)]) == 0 and "total (1 cells)" in capsys.readouterr().out


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


def _fake_server():
    """The learner tests' scripted chat-completions server, loaded by path (``--import-mode=importlib``)."""
    import importlib.util

    path = Path(__file__).parents[1] / "learner" / "fake_openai_server.py"
    spec = importlib.util.spec_from_file_location("relic_tests_grid_fake_openai_server", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module.FakeOpenAIServer()


def _program_reply(body: dict) -> str:
    """A pure function of the request: the parent program back (a valid candidate), or a principle."""
    import re

    user = body["messages"][-1]["content"]
    if body["messages"][0]["role"] == "system":
        return "```python\n" + re.findall(r"```python\n(.*?)```", user, re.S)[-1] + "```"
    return "TYPE: STRATEGY\nPRINCIPLE: Serve the closest requests first."


def test_concurrent_cells_share_one_rate_limit_and_one_response_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with _fake_server() as server:
        server.responder = _program_reply
        spec = GridSpec(name="limited", methods=("relic", "eoh"), envs=("mapp_pc",), seeds=(0,), batches=1,
                        proposals=2, llm="openai:fake-model", base_url=server.base_url, rpm=3, rate_window_s=0.5)
        report = run_grid(spec, tmp_path / "grid", workers=2, progress=False)
        assert not report.failures, report.failures
        times = sorted(r["time"] for r in server.requests)
        assert len(times) >= 12  # 6 proposals per cell, plus RELIC's auxiliary calls
        spans = [times[k + 3] - times[k] for k in range(len(times) - 3)]
        # Never more than rpm arrivals in one window, across both cells, as the server stamps them: a
        # request goes a window after the earlier one's answer came back (causality; load cannot break it).
        assert min(spans) >= 0.5 - 1e-6, spans
        used = len(server.requests)
        assert sum(r.tokens for r in report.results) == sum(
            18 * sum(r.calls.values()) for r in report.results)  # the fake server reports 11 + 7 tokens a call
        # Lose every run directory but the grid's response cache: the rerun makes no call.
        for r in report.results:
            for f in sorted(r.cell.path(tmp_path / "grid").rglob("*"), reverse=True):
                f.unlink() if f.is_file() else f.rmdir()
        again = run_grid(spec, tmp_path / "grid", workers=2, progress=False)
        assert len(server.requests) == used
    assert not again.failures and [r.objective for r in again.results] == [r.objective for r in report.results]


def _result(method: str, env: str, seed: int, objective: dict[str, float], **kw) -> CellResult:
    cell = Cell(method, env, "paper", seed)
    return CellResult(cell, objective, {s: [v] for s, v in objective.items()}, kw.pop("calls", {}), 0, 1.0, **kw)


def test_reference_rows_sit_beside_the_grid_rows_and_never_take_the_best(tmp_path, monkeypatch):
    from relic_experiments import references

    results = [_result("relic", "dgc", s, {"test": 900.0 + 2 * s}) for s in range(2)]
    results += [_result("eoh", "dgc", 0, {"test": 950.0})]
    monkeypatch.setitem(references.CLASSICAL, "dgc", ("dsa-b",))
    envs = [("dgc", "paper")]
    refs = references.classical(envs, tmp_path) + references.solver(envs) + references.paper(envs)
    rows, columns, entries = aggregate(results, refs)
    assert columns == ["dgc/test"] and rows[:2] == ["relic", "eoh"]
    assert entries[("relic", "dgc/test")].best and not any(e.best for (r, _), e in entries.items() if r != "relic")
    # The paper's RELIC row (Table 2, GPT-4o-mini): 859.70 ± 68.16, gap to our best 901 is negative.
    paper = entries[("relic (paper)", "dgc/test")]
    assert (paper.mean, paper.std, paper.reference) == (859.70, 68.16, True)
    assert paper.gap == pytest.approx(100 * (859.70 - 901.0) / 901.0)
    optimum = entries[("CP-SAT best found", "dgc/test")]
    assert optimum.mean < entries[("classical: dsa-b", "dgc/test")].mean  # the optimum beats a local search
    cached = json.loads((tmp_path / "references" / "dgc-paper" / "dsa-b.json").read_text())
    assert len(cached["test"]) == 50
    assert entries[("classical: dsa-b", "dgc/test")].mean == pytest.approx(sum(cached["test"]) / 50)
    # A second table reads the cache: nothing is played again.
    import baselines.cli

    monkeypatch.setattr(baselines.cli, "evaluate", lambda *a, **k: pytest.fail("played again"))
    assert references.classical(envs, tmp_path)[0].values == refs[0].values
    text = markdown(results, refs)
    assert "| *relic (paper)* | 859.7 ± 68.2 |" in text and "| *classical: dsa-b* |" in text
    assert csv(results, refs).splitlines()[-1].endswith(",0,1")  # best 0, reference 1


def test_paper_numbers_match_the_papers_tables():
    from relic_envs.paper_numbers import PAPER

    # Hand-read from relic.tex: tab:main-heterogeneous, tab:generalization, tab:alternative-interface.
    assert PAPER["paper"]["mapp_pc/test50"]["relic"] == (38.98, 0.74)
    assert PAPER["paper"]["mas_jd/test80"]["mcts_ahd"] == (848.88, 9.26)
    assert PAPER["paper"]["fjagv/test200"]["relic"] == (78110.0, 767.0)
    assert PAPER["paper"]["fstsp/test100"]["motif"] == (9.65, 0.79)
    assert PAPER["alt"]["mapp_ds/test80"]["reevo"] == (47.17, 6.80)
    assert len(PAPER["paper"]) == 20 and len(PAPER["alt"]) == 12  # 10 benchmarks x 2 sizes; MAPP + MAS alt
    assert all(len(rows) == 6 for cols in PAPER.values() for rows in cols.values())


def test_usage_prices_the_tokens_each_cell_reported(tmp_path, capsys):
    from relic_experiments.cli import usage_table

    results = [_result("relic", "dgc", 0, {"test": 1.0}, calls={"proposal": 150, "auxiliary": 40},
                       prompt_tokens=2_000_000, completion_tokens=500_000, attempts=195, cache_hits=2)]
    text = usage_table(results, 0.15, 0.60)
    first = text.splitlines()[1].split()
    assert first[:6] == ["relic/dgc-paper/seed0", "190", "195", "2", "2000000", "500000"]
    assert float(first[6]) == pytest.approx(2 * 0.15 + 0.5 * 0.60)
    assert "cost column" in usage_table(results, None, None)


def _unshare_net_works() -> bool:
    import shutil

    if shutil.which("bwrap") is None:
        return False
    probe = subprocess.run(["bwrap", "--dev-bind", "/", "/", "--unshare-net", "true"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.slow
def test_the_cluster_recipe_runs_verbatim_on_a_cluster_started_before_the_key(tmp_path):
    """docs/grid_cost.md's recipe: `ray start`, then export the key, then run with a relative --out, then table.

    Everything runs in a network namespace with only loopback (``bwrap --unshare-net``), so
    the test cluster is reachable from nowhere else whatever addresses Ray binds.
    """
    pytest.importorskip("ray")
    if not _unshare_net_works():
        pytest.skip("needs bubblewrap with network namespaces (scripts/install-sandbox.sh)")
    script = Path(__file__).with_name("cluster_recipe.py")
    done = subprocess.run(["bwrap", "--dev-bind", "/", "/", "--unshare-net", "--die-with-parent",
                           sys.executable, str(script)], capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["run_rc"] == 0 and "0 failed" in report["run_out"], report["run_out"]
    # The key exported after `ray start` reached the workers: every request carried it.
    assert report["requests"] >= 12 and report["authorizations_ok"]
    # The relative --out is the driver's directory, not the one `ray start` ran in.
    assert report["cells_under_driver"] == ["runs/recipe/eoh/mapp_pc-paper/seed0",
                                            "runs/recipe/relic/mapp_pc-paper/seed0"]
    assert report["cells_under_head"] == []
    assert report["table_rc"] == 0 and "| relic |" in report["table"] and "| eoh |" in report["table"]
    assert report["usage_rc"] == 0 and "total (2 cells)" in report["usage"]
    # The key is in no file of the run and none of Ray's (logs, session files).
    assert report["secret_in_run_files"] == [] and report["secret_in_ray_files"] == []


def test_credentials_come_from_the_driver_and_a_missing_key_fails_before_any_cell(monkeypatch, tmp_path):
    from relic_experiments.runner import credentials

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    assert credentials(GridSpec(**TINY)) == {}  # offline needs none
    spec = GridSpec(**{**TINY, "llm": "openai:m"})
    with pytest.raises(InvalidConfig, match="OPENAI_API_KEY"):
        run_grid(spec, tmp_path / "g", progress=False)
    assert not (tmp_path / "g").exists()  # refused before anything was written
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    assert credentials(spec) == {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}


def test_a_rerun_replays_recorded_failures_and_retry_failed_asks_them_again(tmp_path, monkeypatch):
    """The documented choice: a failed call is recorded in the grid's cache and replayed on rerun
    (same results, no request); ``retry_failed=True`` asks it again (and may change the results)."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    seen = []

    def flaky(body):  # the second request ever made gets an empty answer (a failed call, not retried)
        seen.append(1)
        return "" if len(seen) == 2 else _program_reply(body)

    def lose_run_dirs(report):
        for r in report.results:
            for f in sorted(r.cell.path(tmp_path / "grid").rglob("*"), reverse=True):
                f.unlink() if f.is_file() else f.rmdir()

    with _fake_server() as server:
        server.responder = flaky
        spec = GridSpec(name="flaky", methods=("eoh",), envs=("mapp_pc",), seeds=(0,), batches=1, proposals=2,
                        llm="openai:fake-model", base_url=server.base_url)
        first = run_grid(spec, tmp_path / "grid", progress=False)
        assert not first.failures
        assert sum(first.results[0].calls.values()) == 6 and len(server.requests) == 6
        lose_run_dirs(first)
        again = run_grid(spec, tmp_path / "grid", progress=False)
        assert len(server.requests) == 6  # replayed: no request, the failure included
        assert again.results[0].per_instance == first.results[0].per_instance
        assert again.results[0].cache_hits == 6
        lose_run_dirs(again)
        retried = run_grid(spec, tmp_path / "grid", progress=False, retry_failed=True)
        assert len(server.requests) == 7  # only the recorded failure was asked again
        assert retried.results[0].cache_hits == 5


def test_shipped_specs_run_by_name_from_any_folder(tmp_path, monkeypatch, capsys):
    """Issue 55: the README's `relic-grid run dcop-offline-small` works outside the repository;
    the old `grids/NAME.toml` spelling finds the shipped file; a missing spec is one line."""
    from relic_experiments.cli import main
    from relic_experiments.spec import shipped_specs, spec_path

    monkeypatch.chdir(tmp_path)  # no grids/ folder here
    assert {"dcop-offline-small", "paper-main"} <= set(shipped_specs())
    assert spec_path("grids/dcop-offline-small.toml") == spec_path("dcop-offline-small")
    assert main(["run", "dcop-offline-small", "--out", "runs/g", "--dry-run"]) == 0
    assert "12 cells" in capsys.readouterr().out
    assert main(["specs"]) == 0
    assert "paper-main" in capsys.readouterr().out
    assert main(["run", "no-such-grid", "--out", "runs/g", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "dcop-offline-small" in err


def test_the_help_names_only_specs_that_exist():
    import re

    from relic_experiments import cli
    from relic_experiments.spec import shipped_specs

    named = set(re.findall(r"relic-grid run (\S+)", cli.__doc__))
    assert named - {"my-grid.toml"} <= set(shipped_specs()), named
