"""Reflect's situations: instance features per benchmark and the threshold rule that separates the classes."""

from __future__ import annotations

import numpy as np
import pytest

import relic_envs
from relic_envs.seeds import seed_source
from relic_learner import situations
from relic_learner.batches import Batch
from relic_learner.evaluate import TeamEvaluator
from relic_learner.reference import credit


@pytest.mark.parametrize("name", relic_envs.names())
def test_every_benchmark_names_finite_features_that_vary_over_its_training_stream(name):
    rows = [situations.features(name, inst) for batch in relic_envs.splits(name).train for inst in batch]
    assert rows and all(np.isfinite(list(r.values())).all() for r in rows)
    assert any(len({r[f] for r in rows}) > 1 for f in rows[0]), "no feature varies: nothing could ever separate"


def test_the_rule_names_the_feature_that_separates_the_classes():
    instances = relic_envs.splits("mapp_pc").train[0][:8]
    budgets = np.array([inst.budget for inst in instances])
    classes = ["dominant" if b > np.median(budgets) else "redundant" for b in budgets]
    (line,) = situations.describe("mapp_pc", instances, classes)
    assert "dominant cases concentrate where travel budget > " in line
    assert f"{sum(c == 'dominant' for c in classes)} of {sum(c == 'dominant' for c in classes)} such" in line


def test_no_rule_is_invented_for_classes_that_no_feature_explains():
    rows = [{"a": float(k)} for k in range(8)]
    assert situations.best_split(rows, [True, False] * 4) is None  # alternating: no threshold beats chance by enough
    instances = relic_envs.splits("dgc").train[0][:4]
    (line,) = situations.describe("dgc", instances, ["redundant"] * 4)
    assert "every instance is redundant" in line


def test_the_credit_summary_carries_the_situations_and_no_code():
    bench = relic_envs.get_benchmark("mas_jd")
    team = {r: seed_source("mas_jd", r) for r in bench.roles}
    batch = Batch(tuple(relic_envs.splits("mas_jd").train[0][:6]))
    with TeamEvaluator(bench, sandbox=False, workers=1) as evaluator:
        result = credit(evaluator, team, "A", batch)
    assert "- situations:" in result.summary
    assert "def " not in result.summary and "return" not in result.summary
