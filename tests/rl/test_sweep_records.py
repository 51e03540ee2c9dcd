"""The committed CPU sweep (docs/images/rl/sweep-cpu): its records replay, and docs/rl.md prints its table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("jax")
pytest.importorskip("optax")

from baselines.rl import sweep as sw  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SWEEP = ROOT / "docs" / "images" / "rl" / "sweep-cpu"
needs_sweep = pytest.mark.skipif(not (SWEEP / "sweep.json").exists(), reason="needs the repository's sweep records")


@needs_sweep
def test_docs_print_the_committed_sweeps_table():
    """Every row of `python -m baselines.rl table docs/images/rl/sweep-cpu` stands in docs/rl.md as printed."""
    rows = [line for line in sw.format_table(SWEEP).splitlines() if line.startswith("| ") and "(m" in line]
    assert rows, "the committed sweep has no finished run"
    doc = (ROOT / "docs" / "rl.md").read_text()
    missing = [line for line in rows if line not in doc]
    assert not missing, f"docs/rl.md lacks {len(missing)} of the sweep's rows, e.g. {missing[0]}"


@pytest.mark.slow  # plays one JAX checkpoint on its benchmark's test instances
@needs_sweep
def test_a_committed_run_scores_what_its_record_says():
    """The first finished run's checkpoint, evaluated again, gives the test figures its test.json holds."""
    from baselines.rl.policy import evaluate_checkpoint

    record_path = sorted(SWEEP.glob("*/test.json"))[0]
    recorded = json.loads(record_path.read_text())["test"]
    again = evaluate_checkpoint(record_path.parent)
    assert set(again) == set(recorded)
    for split, figures in recorded.items():
        assert again[split]["objective"] == pytest.approx(figures["objective"], rel=1e-9), split
