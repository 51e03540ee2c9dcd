"""The command line, run as a user would."""

from __future__ import annotations

import subprocess
import sys

from relic_envs.cli import main
from relic_envs.seeds import seed_path


def test_list_shows_all_fourteen(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert out.count("built") == 14 and out.count("planned") == 0


def test_eval_seed_files_and_builtin_team(capsys):
    files = ",".join(str(seed_path("dgc", r)) for r in "ABC")
    assert main(["eval", "--env", "dgc", "--team", files, "--team", "seeds", "--split", "train1", "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # The same programs given as files and as the built-in seed team give the same figure.
    assert lines[1].split()[1:] == lines[2].split()[1:]
    assert "±" in lines[1]


def test_bad_team_is_a_clear_error(capsys):
    assert main(["eval", "--env", "dgc", "--team", "nonsense", "--quiet"]) == 2
    assert "comma-separated" in capsys.readouterr().err


def test_cli_case_study_team(capsys):
    assert main(["eval", "--env", "dgc", "--team", "case-study", "--split", "train1", "--quiet"]) == 0
    assert "case-study" in capsys.readouterr().out
    assert main(["eval", "--env", "mapp_pc", "--team", "case-study", "--quiet"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before any header is printed
    assert "no case-study programs for 'mapp_pc' (paper interface)" in captured.err and "dgc, fstsp, mapp_ar, mas_fs, mrcps" in captured.err


def test_module_entry_point_runs():
    out = subprocess.run([sys.executable, "-m", "relic_envs", "list"], capture_output=True, text=True, check=True)
    assert "relic/dgc-v0" in out.stdout
