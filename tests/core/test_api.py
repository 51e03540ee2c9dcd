"""The core API: registry, make, splits, instance files, errors."""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np
import pettingzoo
import pytest

import relic_envs
from relic_envs.core.instance import load_instances, save_instances
from relic_envs.core.splits import DATA_DIR, generate_split, read_manifest, split_plan
from relic_envs.errors import InvalidConfig, InvalidInstance, UnknownBenchmark

DCOPS = ["dgc", "dimes", "sensor_dcsp", "shds"]
MAPPS = ["mapp_pc", "mapp_ar", "mapp_ds"]
MAS = ["mas_jd", "mas_st", "mas_fs"]
CO = ["hmtsp", "fstsp", "fjagv", "mrcps"]


def test_names_and_catalog():
    assert relic_envs.names() == MAPPS + MAS + CO + DCOPS
    everything = relic_envs.names(include_planned=True)
    assert len(everything) == 14 and set(DCOPS + MAPPS + MAS + CO) <= set(everything)


def test_unknown_name_suggests_closest():
    with pytest.raises(UnknownBenchmark, match="Did you mean 'dgc'"):
        relic_envs.make("dgcc")
    with pytest.raises(ValueError):  # still a ValueError for callers that know no better
        relic_envs.spec("nope")


def test_every_catalogued_benchmark_is_built():
    assert relic_envs.names(include_planned=True) == relic_envs.names()


def test_make_parallel_and_aec():
    assert isinstance(relic_envs.make("dgc"), pettingzoo.ParallelEnv)
    assert isinstance(relic_envs.make("dgc", api="aec"), pettingzoo.AECEnv)
    with pytest.raises(InvalidConfig, match="api"):
        relic_envs.make("dgc", api="both")
    with pytest.raises(InvalidConfig, match="interface"):
        relic_envs.make("dgc", interface="alt")
    with pytest.raises(InvalidConfig, match="regime"):
        relic_envs.make("dgc", regime="train9")


def test_env_plays_given_instances_in_order():
    inst = relic_envs.splits("dimes").test_instances()[:2]
    env = relic_envs.make("dimes", instances=inst)
    env.reset()
    assert env.instance is inst[0]
    env.reset()
    assert env.instance is inst[1]
    env.reset(seed=4)
    assert env.instance is inst[0]


@pytest.mark.parametrize("name", DCOPS + MAPPS + MAS + CO)
def test_splits_match_manifest_and_regenerate_bit_for_bit(name, tmp_path):
    s = relic_envs.splits(name)
    assert [len(b) for b in s.train] == [10] * 5
    if name in DCOPS:
        assert len(s.test_instances()) == 50
    else:  # 20 per test size (Table app-data-summary): 50 and 80, 100 and 200 customers for routing CO
        sizes = ("test100", "test200") if name in CO else ("test50", "test80")
        assert {k: len(v) for k, v in s.test.items()} == dict.fromkeys(sizes, 20)
    files = read_manifest()["files"]
    for regime, count in split_plan(name):
        path = tmp_path / f"{regime}.npz"
        save_instances(generate_split(name, regime, count), path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert digest == files[f"{name}/{regime}.npz"]["sha256"]
        assert digest == hashlib.sha256((DATA_DIR / name / f"{regime}.npz").read_bytes()).hexdigest()


def test_train_regimes_follow_the_paper():
    s = relic_envs.splits("dgc")
    # Mean degrees 3, 5, 7, 9, 12: real (non-loop) edge counts 180, 300, 420, 540, 720, padded to 720.
    for batch, degree in zip(s.train, (3, 5, 7, 9, 12)):
        for inst in batch:
            assert inst.edges.shape == (720, 2)
            assert int(np.sum(inst.edges[:, 0] != inst.edges[:, 1])) == 120 * degree // 2
    assert all(i.edges.shape == (360, 2) for i in s.test_instances())
    dimes = relic_envs.splits("dimes")
    for batch, meetings in zip(dimes.train, (16, 14, 12, 10, 8)):
        for inst in batch:
            sizes = np.bincount(inst.meeting)
            assert sizes.size == meetings and sizes.max() - sizes.min() <= 1
            assert np.all(inst.meeting[0::2] != inst.meeting[1::2])  # no one attends a meeting twice
    shds = relic_envs.splits("shds")
    for batch, tight in zip(shds.train, (1.1, 1.25, 1.4, 1.6, 1.8)):
        for inst in batch:
            assert inst.capacity == pytest.approx(np.full(24, tight * inst.power @ inst.duration / 24))


@pytest.mark.parametrize("name", DCOPS)
def test_ownership_is_balanced_thirds(name):
    for inst in relic_envs.splits(name).test_instances()[:5]:
        assert np.bincount(inst.owner, minlength=3).tolist() == [40, 40, 40]


def test_instance_roundtrip_and_read_only(tmp_path):
    inst = relic_envs.splits("sensor_dcsp").test_instances()[3]
    inst.save(tmp_path / "one.npz")
    back = type(inst).load(tmp_path / "one.npz")
    for f in dataclasses.fields(inst):
        assert np.array_equal(getattr(inst, f.name), getattr(back, f.name))
    with pytest.raises(ValueError):
        back.x0[0] = 1  # instances are read-only


def test_bad_instance_names_the_field():
    inst = relic_envs.splits("dgc").test_instances()[0]
    with pytest.raises(InvalidInstance, match="'x0'"):
        dataclasses.replace(inst, x0=inst.x0 + 5)
    with pytest.raises(InvalidInstance, match="'weights'"):
        dataclasses.replace(inst, weights=inst.weights[:-1])


def test_saving_mixed_kinds_is_refused(tmp_path):
    a = relic_envs.splits("dgc").test_instances()[0]
    b = relic_envs.splits("shds").test_instances()[0]
    with pytest.raises(InvalidInstance, match="one kind"):
        save_instances([a, b], tmp_path / "x.npz")
    assert load_instances  # imported API stays public


def test_tampered_split_file_is_refused(tmp_path, monkeypatch):
    from relic_envs.core import splits as splits_module

    fake = tmp_path / "data"
    (fake / "dgc").mkdir(parents=True)
    for regime, _count in split_plan("dgc"):
        (fake / "dgc" / f"{regime}.npz").write_bytes((DATA_DIR / "dgc" / f"{regime}.npz").read_bytes())
    (fake / "dgc" / "test.npz").write_bytes(b"not an npz")
    monkeypatch.setattr(splits_module, "DATA_DIR", fake)
    with pytest.raises(InvalidInstance, match="sha256"):
        relic_envs.splits("dgc")


def test_rollout_needs_every_role():
    with pytest.raises(InvalidConfig, match="missing"):
        relic_envs.rollout("dgc", {"A": lambda o: o["cur"]}, relic_envs.splits("dgc").test_instances()[:1])


def test_a_problem_takes_its_name_and_generator_from_its_instance_class():
    from relic_envs.core.registry import get_benchmark

    for name in relic_envs.names():
        problem = get_benchmark(name).problem
        assert problem.name == name == problem.instance_type.kind
        assert problem.generator.__name__ == problem.instance_type.__module__
        assert problem.generator.__name__.endswith(".generator") and problem.simulator.__name__.endswith(".simulator")


def test_a_problem_needs_an_instance_class_with_a_kind_tag():
    from relic_envs.core.benchmark import GeneratedProblem
    from relic_envs.core.instance import Instance

    class Untagged(Instance):
        def validate(self) -> None:
            pass

    with pytest.raises(TypeError, match="Untagged has no 'kind' tag"):
        class Problem(GeneratedProblem, instance=Untagged):
            pass
