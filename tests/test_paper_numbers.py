"""The paper's figures live in one module, extracted from the LaTeX, and every table reads them there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import relic_envs
from relic_envs.paper_numbers import DISPLAY, PAPER, PAPER_TABLE2

ROOT = Path(relic_envs.__file__).parent.parent
TEX = ROOT.parent / "shared" / "paper" / "relic.tex"


@pytest.mark.skipif(not TEX.exists(), reason="needs the paper's LaTeX (../shared/paper/relic.tex)")
def test_the_module_is_what_the_extractor_makes_of_the_paper():
    made = subprocess.run([sys.executable, str(ROOT / "scripts" / "extract_paper_numbers.py"), str(TEX)],
                          capture_output=True, text=True, check=True).stdout
    assert made == (ROOT / "relic_envs" / "paper_numbers.py").read_text()


def test_every_table_reads_the_one_module():
    from baselines.co._rows import PAPER_GENERALIZATION, paper_rows
    from baselines.dcop import table as dcop_table
    from relic_experiments import references

    assert dcop_table.PAPER_TABLE2 is PAPER_TABLE2
    assert references.PAPER is PAPER
    # The CO tables' generalization rows are PAPER's, renamed as the paper prints them.
    assert PAPER_GENERALIZATION["fjagv"]["test200"]["RELIC"] == PAPER["paper"]["fjagv/test200"]["relic"] == (78110.0, 767.0)
    assert [r.name for r in paper_rows("hmtsp", "test100")] == [f"paper: {DISPLAY[m]}" for m in PAPER["paper"]["hmtsp/test100"]]


def test_hand_checked_figures():
    # Read off relic.tex by eye: Table 2's DSA-B on DGC, the main table's RELIC on MAPP-PC (N=50).
    assert PAPER_TABLE2["dgc"]["DSA-B"] == (3336.46, 150.65)
    assert PAPER_TABLE2["sensor_dcsp"]["RELIC (Qwen-3.6-Flash)"] == (39.63, 10.13)
    assert PAPER["paper"]["mapp_pc/test50"]["relic"] == (38.98, 0.74)
    assert PAPER["alt"]["mas_fs/test80"]["relic"] == (6342.1, 65.4)
