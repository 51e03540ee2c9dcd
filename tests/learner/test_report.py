"""``relic show``'s report and the curve against the seeds, checked against the run's own state."""

from __future__ import annotations

import json
import re

import pytest

import relic_envs
from relic_envs.seeds import seed_source
from relic_learner.batches import mixed_batch
from relic_learner.cli import main
from relic_learner.evaluate import TeamEvaluator
from relic_learner.report import lineage
from relic_learner.runlog import RunDir


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "run"
    assert main(["learn", "--env", "mapp_pc", "--batches", "2", "--proposals", "4", "--workers", "1",
                 "--out", str(out), "--quiet"]) == 0
    return out


def test_the_curve_holds_the_seed_team_on_the_same_instances(run):
    curve = json.loads((run / "curve.json").read_text())
    assert [p["b"] for p in curve] == [1, 2]
    assert curve[0]["seeds"] == curve[0]["start"]  # batch 1 starts from the seed team
    config = json.loads((run / "config.json").read_text())
    seeds = {r: seed_source("mapp_pc", r) for r in "ABC"}
    batch = mixed_batch(relic_envs.splits("mapp_pc").train, 2, config["seed"], horizon=config["replay"],
                        per_batch=config["replay_per_batch"])
    with TeamEvaluator("mapp_pc", workers=1) as evaluator:
        assert evaluator.evaluate(seeds, batch).mean_score == pytest.approx(curve[1]["seeds"], rel=1e-12)


def test_show_prints_each_roles_lineage_as_the_trees_hold_it(run, capsys):
    assert main(["show", str(run)]) == 0
    out = capsys.readouterr().out
    state = RunDir(run).load_checkpoint()
    total = 0.0
    for role, node_id in state.incumbent.items():
        path = lineage(state.trees[role], node_id)
        line = next(x for x in out.splitlines() if x.startswith(f"  {role}: "))
        if len(path) == 1:
            assert "the seed program" in line
            continue
        assert line.startswith(f"  {role}: node {node_id}, depth {len(path) - 1}: seed -> ")
        assert line.count(" -> ") == len(path) - 1
        total += sum(n.gain for n in path[1:])
    if total:
        assert re.search(r"gains came from \(sum [+-]", out)
    assert "learning curve" in out and "end - seeds" in out
    assert "objective higher is better" in out  # MAPP-PC maximises collected prize
