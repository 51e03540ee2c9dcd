"""``relic learn --method NAME``: comparators found through entry points, and their runs in ``relic eval``/``show``."""

from __future__ import annotations

from relic_learner.cli import main, methods


def test_every_comparator_is_registered_as_a_method():
    assert set(methods()) == {"eoh", "reevo", "mcts_ahd", "hifo", "motif"}


def test_learn_resume_eval_and_show_a_comparator_run(tmp_path, capsys):
    out = str(tmp_path / "run")
    args = ["learn", "--env", "mapp_pc", "--method", "reevo", "--batches", "1", "--proposals", "2", "--out", out,
            "--quiet", "--workers", "1"]
    assert main(args) == 0
    assert "LLM calls" in capsys.readouterr().out
    assert main(args) == 2  # the directory holds a run: one-line error, nothing lost
    assert "already holds a run" in capsys.readouterr().err
    assert main(["learn", "--out", out, "--resume", "--quiet"]) == 0  # a finished run resumes to the same end
    assert main(["eval", out, "--workers", "1"]) == 0
    text = capsys.readouterr().out
    assert "reevo run on mapp_pc" in text and "higher is better" in text and "not a language model" in text
    assert main(["show", out]) == 0
    assert "| init |" in capsys.readouterr().out
    assert main(["learn", "--env", "dgc", "--method", "nope", "--out", str(tmp_path / "x")]) == 2
    assert main(["learn", "--env", "dgc", "--method", "eoh", "--ablation", "no_lift", "--out",
                 str(tmp_path / "y")]) == 2
