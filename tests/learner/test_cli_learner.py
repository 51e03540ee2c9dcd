"""The ``relic`` command: learn, show and eval on a tiny offline run; clear errors."""

from __future__ import annotations

import pytest

from relic_learner.cli import main


def test_learn_show_eval_offline(tmp_path, capsys):
    out = str(tmp_path / "run")
    assert main(["learn", "--env", "mapp_ar", "--batches", "1", "--proposals", "1", "--workers", "1", "--out", out, "--quiet"]) == 0
    assert "final mixed-batch score" in capsys.readouterr().out
    assert main(["learn", "--env", "mapp_ar", "--out", out, "--quiet"]) == 2  # refuses to overwrite silently
    assert "--overwrite" in capsys.readouterr().err
    assert main(["learn", "--out", out, "--resume", "--quiet"]) == 0  # a finished run resumes to its end
    assert main(["show", out]) == 0
    assert "| reflect |" in capsys.readouterr().out
    assert main(["eval", out, "--split", "test50", "--workers", "1"]) == 0
    printed = capsys.readouterr().out
    assert "mapp_ar test50: learned" in printed and "seeds" in printed


def test_errors_are_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["learn", "--env", "dgc", "--llm", "openai:some-model", "--out", str(tmp_path / "r")]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err
    assert main(["show", str(tmp_path / "missing")]) == 2
    assert main(["eval", str(tmp_path / "missing")]) == 2
    with pytest.raises(SystemExit):
        main(["learn", "--env", "nope", "--out", str(tmp_path / "x")])
