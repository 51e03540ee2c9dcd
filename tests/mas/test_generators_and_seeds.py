"""MAS generators follow B.2, the canonical splits regenerate bit for bit, seeds are valid."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import relic_envs
from relic_envs.core.instance import save_instances
from relic_envs.core.rollout import rollout
from relic_envs.core.splits import DATA_DIR, generate_split, read_manifest, split_plan
from relic_envs.seeds import seed_team

MAS = ["mas_jd", "mas_st", "mas_fs"]


@pytest.mark.parametrize("name", MAS)
def test_splits_match_manifest_and_regenerate_bit_for_bit(name, tmp_path):
    s = relic_envs.splits(name)
    assert [len(b) for b in s.train] == [10] * 5 and {k: len(v) for k, v in s.test.items()} == {"test50": 20, "test80": 20}
    files = read_manifest()["files"]
    for regime, count in split_plan(name):
        path = tmp_path / f"{regime}.npz"
        save_instances(generate_split(name, regime, count), path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert digest == files[f"{name}/{regime}.npz"]["sha256"]
        assert digest == hashlib.sha256((DATA_DIR / name / f"{regime}.npz").read_bytes()).hexdigest()


def test_jd_regimes():
    s = relic_envs.splits("mas_jd")
    for batch in s.train:
        for inst in batch:
            assert inst.n_jobs == 30 and np.all(np.diff(inst.release) >= 0)
            assert inst.proc.min() >= 0.2 and inst.proc.max() <= 5.0
            eta = (inst.due - inst.release) / inst.proc
            assert eta.min() >= 1.5 and eta.max() <= 4.0
            assert set(inst.weight.tolist()) <= {1.0, 2.0, 3.0, 5.0}
    # the congestion knob: mean release grows with the scale (1.0, 0.6, 1.2, 0.8, 1.5)
    means = [np.mean([i.release.mean() for i in b]) for b in s.train]
    assert np.argsort(means).tolist() == [1, 3, 0, 2, 4]
    assert [i.n_jobs for i in s.test["test80"]] == [80] * 20


def test_st_regimes():
    for inst in relic_envs.splits("mas_st").train[0]:
        assert inst.n_jobs == 30 and set(inst.category.tolist()) <= {0, 1, 2}
        assert inst.duration.min() >= 0.3 and inst.duration.max() <= 4.0
        assert set(inst.value.tolist()) <= {1.0, 2.0, 3.0, 5.0}
        assert inst.skills.min() >= 0.1 and inst.skills.max() <= 1.0
        assert np.diag(inst.skills).mean() > inst.skills[~np.eye(3, dtype=bool)].mean()  # specialists
    skills = [i.skills.tolist() for i in relic_envs.splits("mas_st").test["test50"]]
    assert len({str(x) for x in skills}) == 20  # independently sampled per instance


def test_fs_regimes():
    s = relic_envs.splits("mas_fs")
    profiles = [(0.3, 1.2, 0.8), (0.3, 0.6, 1.5), (0.5, 1.5, 0.3), (1.0, 0.3, 1.2), (0.4, 0.4, 0.4)]
    for batch, profile in zip(s.train, profiles):
        proc = np.concatenate([i.proc for i in batch])
        for stage, mean in enumerate(profile):
            if mean < 0.5:  # tight uniform +-20%
                assert proc[:, stage].min() >= 0.8 * mean and proc[:, stage].max() <= 1.2 * mean
            assert abs(proc[:, stage].mean() - mean) < 0.25 * mean
    for inst in s.train[0]:
        assert inst.n_jobs == 25 and np.sum(inst.release <= 0.5) >= 12  # the burst: N // 2 jobs in [0, 0.5]
        assert inst.release[12:].min() > 0.5 or np.sum(inst.release > 0.5) == 13


@pytest.mark.parametrize("name", MAS)
def test_seed_team_is_valid_on_the_test_splits(name):
    s = relic_envs.splits(name)
    for regime in ("test50", "test80"):
        results = rollout(name, seed_team(name), s.test[regime][:5])
        assert all(r.valid for r in results), [r.invalid for r in results if not r.valid]
        reference = rollout(name, {r: relic_envs.get_benchmark(name).reference_policy(r) for r in "ABC"}, s.test[regime][:5])
        seeds = np.mean([r.score for r in results])
        assert seeds > np.mean([r.score for r in reference])  # the seeds beat first come, first served
