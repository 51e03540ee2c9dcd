"""``relic-grid table --learned DIR``: trained IPPO/MAPPO teams as rows beside a grid's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("jax")

CHECKPOINTS = Path(__file__).resolve().parents[2] / "docs" / "images" / "rl" / "checkpoints"


@pytest.mark.slow  # plays a JAX policy on 40 test instances (~1 min on 2 cores)
@pytest.mark.skipif(not (CHECKPOINTS / "mapp_pc_ippo" / "config.json").exists(), reason="needs the repository's checkpoints")
def test_learned_rows_replay_the_checkpoint_on_the_test_instances_and_are_cached(tmp_path):
    from relic_experiments import references

    rows = references.learned([("mapp_pc", "paper"), ("mapp_pc", "alt")], tmp_path, CHECKPOINTS)
    by_label = {r.label: r for r in rows}
    assert "learned: IPPO" in by_label
    for interface, folder in (("paper", "mapp_pc_ippo"), ("alt", "mapp_pc_alt_ippo")):
        recorded = json.loads((CHECKPOINTS / folder / "test_eval.json").read_text())
        for size in ("test50", "test80"):  # the same figure as `python -m baselines.rl eval`, played through the episode
            mean, _, runs = by_label["learned: IPPO"].values[("mapp_pc", size, interface)]
            assert runs == 1 and mean == pytest.approx(recorded[size]["objective"], rel=1e-9)
    (tmp_path / "none").mkdir()
    assert not any(r.values for r in references.learned([("mapp_pc", "alt")], tmp_path / "elsewhere", tmp_path / "none"))
    cached = tmp_path / "references" / "mapp_pc-paper" / "ippo.json"
    assert cached.exists()
    again = references.learned([("mapp_pc", "paper")], tmp_path, CHECKPOINTS)  # from the cache
    paper = {r.label: {k: v for k, v in r.values.items() if k[2] == "paper"} for r in rows}
    assert {r.label: r.values for r in again} == paper
