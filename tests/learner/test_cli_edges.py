"""``relic`` at its edges (issue 55): a bad start never costs a finished run, every user
error is one line with exit 2, and a run whose LLM calls all failed does not pass for one
that worked."""

from __future__ import annotations

from pathlib import Path

import pytest

from relic_learner.cli import main

TINY = ["--batches", "1", "--proposals", "1", "--workers", "1", "--quiet"]


def _contents(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "done"
    assert main(["learn", "--env", "mapp_ar", "--out", str(out), *TINY]) == 0
    return out


@pytest.mark.parametrize("bad", [
    ["--llm", "gpt-4o"],  # no provider prefix
    ["--llm", "openai:some-model"],  # no key (OPENAI_API_KEY unset below)
    ["--method", "eoh", "--proposals", "0"],
    ["--temperature", "-1"],
    ["--method", "eoh", "--llm", "openai:some-model"],
])
def test_a_bad_start_with_overwrite_keeps_the_finished_run(finished, bad, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    before = _contents(finished)
    code = main(["learn", "--env", "mapp_ar", "--out", str(finished), "--overwrite", *TINY, *bad])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and err.startswith("relic learn: error:"), err
    assert _contents(finished) == before
    assert not list(finished.parent.glob("done.replaced-*"))


def test_a_start_that_fails_in_its_first_step_restores_the_old_run(finished, monkeypatch):
    from relic_learner.relic import Relic

    before = _contents(finished)

    def broken(self):
        raise RuntimeError("the machine misbehaves")

    monkeypatch.setattr(Relic, "_start_batch", broken)
    with pytest.raises(RuntimeError, match="misbehaves"):
        main(["learn", "--env", "mapp_ar", "--out", str(finished), "--overwrite", *TINY])
    assert _contents(finished) == before
    assert not list(finished.parent.glob("done.replaced-*"))


def test_a_failed_start_in_a_new_folder_leaves_no_folder(tmp_path, capsys):
    out = tmp_path / "new"
    assert main(["learn", "--env", "mapp_ar", "--out", str(out), *TINY, "--llm", "gpt-4o"]) == 2
    assert "did you mean 'openai:gpt-4o'" in capsys.readouterr().err
    assert not out.exists()
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert main(["learn", "--env", "mapp_ar", "--out", str(out), *TINY, "--method", "eoh", "--proposals", "0"]) == 2
    assert _contents(out) == {"notes.txt": b"mine"}  # what was there before stays, nothing is added


def test_the_missing_key_message_names_what_a_command_line_user_can_do(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["learn", "--env", "dgc", "--llm", "openai:m", "--out", str(tmp_path / "r"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "OPENAI_API_KEY" in err and "api_key" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_overwrite_replaces_the_run_once_the_new_one_started(finished, tmp_path):
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(finished, out)
    (out / "marker").write_text("old run")
    assert main(["learn", "--env", "mapp_ar", "--out", str(out), "--overwrite", "--seed", "3", *TINY]) == 0
    assert not (out / "marker").exists() and (out / "team" / "A.py").exists()
    assert not list(tmp_path.glob("copy.replaced-*"))


def test_unknown_splits_are_an_error_naming_the_valid_ones(finished, capsys):
    assert main(["eval", str(finished), "--split", "bogus", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == "relic eval: error: unknown --split 'bogus' for mapp_ar: use test or test50 or test80\n"


def test_a_dcop_run_refuses_a_size_it_does_not_have(tmp_path, capsys):
    import json

    out = tmp_path / "dcop"
    (out / "team").mkdir(parents=True)
    (out / "config.json").write_text(json.dumps({"env": "dgc", "interface": "paper", "llm": "offline"}))
    assert main(["eval", str(out), "--split", "test50", "--quiet"]) == 2
    assert capsys.readouterr().err == "relic eval: error: unknown --split 'test50' for dgc: use test\n"


def test_a_benchmark_in_the_papers_spelling_gets_a_did_you_mean(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["learn", "--env", "DGC", "--out", str(tmp_path / "x")])
    assert exit_.value.code == 2
    assert "Did you mean 'dgc'?" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["learn", "--env", "MAPP-PC", "--out", str(tmp_path / "x")])
    assert "Did you mean 'mapp_pc'?" in capsys.readouterr().err


def test_quiet_prints_no_offline_banner(finished, tmp_path, capsys):
    assert main(["learn", "--env", "mapp_ar", "--out", str(tmp_path / "q"), *TINY]) == 0
    captured = capsys.readouterr()
    assert "no language model is called" not in captured.err
    assert captured.out.startswith("training: final mixed-batch score")


def test_a_run_whose_every_llm_call_failed_exits_non_zero_and_says_so(openai_server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    for _ in range(40):
        openai_server.status(401)  # not retried: each call fails at once
    out = tmp_path / "failed"
    code = main(["learn", "--env", "mapp_ar", "--llm", "openai:m", "--base-url", openai_server.base_url,
                 "--out", str(out), *TINY])
    err = capsys.readouterr().err
    assert code == 1
    assert "every one of the" in err and "LLM calls failed" in err and "auth" in err


def test_llm_call_lines_say_how_many_failed_in_words():
    from relic_learner.report import llm_call_lines

    ledger = {"calls": {"proposal": 9, "auxiliary": 3}, "failed_calls": {"proposal": 7, "auxiliary": 0},
              "failures": {"timeout": 7}}
    lines, every = llm_call_lines(ledger)
    assert not every
    assert lines[0] == "LLM calls: 12 (9 proposal, 3 auxiliary); 5 answered, 7 failed (7 timeout)"
    assert lines[1].startswith("most LLM calls failed (7 of 12)")
    assert llm_call_lines({"calls": {"proposal": 2}, "failed_calls": {"proposal": 0}})[0] == \
        ["LLM calls: 2 (2 proposal); 2 answered, 0 failed"]
