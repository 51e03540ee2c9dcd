"""Generators follow Appendix B.1; seeds run on both interfaces; the DS stream replays."""

from __future__ import annotations

import numpy as np
import pytest

import relic_envs
from relic_envs.core.program import check_source
from relic_envs.mapp._geometry import distances
from relic_envs.mapp.ds.generator import stream
from relic_envs.seeds import seed_source, seed_team

NAMES = ["mapp_pc", "mapp_ar", "mapp_ds"]


@pytest.mark.parametrize("name", NAMES)
def test_sizes_depot_and_budget(name):
    s = relic_envs.splits(name)
    assert all(i.n_nodes == 40 for batch in s.train for i in batch)
    assert {k: {i.n_nodes for i in v} for k, v in s.test.items()} == {"test50": {50}, "test80": {80}}
    for inst in [s.train[0][0], s.test["test80"][0]]:
        assert tuple(inst.coords[0]) == (0.5, 0.5) and inst.coords.min() >= 0 and inst.coords.max() <= 1
        d0 = distances(inst.coords)[0, 1:].mean()
        m = inst.n_nodes - 1
        k = m / (3 * 2.5) if name == "mapp_ar" else m / 3
        assert inst.budget == pytest.approx(1.2 * (2 * d0 + k * 0.5 / np.sqrt(m)))


def test_pc_prizes_unit_mean():
    for inst in relic_envs.splits("mapp_pc").test["test50"]:
        assert inst.prizes[0] == 0 and inst.prizes[1:].mean() == pytest.approx(1.0) and inst.prizes[1:].min() > 0


def test_regime_schedules():
    ar, ds = relic_envs.splits("mapp_ar"), relic_envs.splits("mapp_ds")
    assert [b[0].sigma for b in ar.train] == [0.08, 0.12, 0.10, 0.15, 0.09]
    assert {i.sigma for v in ar.test.values() for i in v} == {0.11}
    assert [b[0].mean_rate for b in ds.train] == [0.08, 0.12, 0.10, 0.15, 0.09]
    assert {i.mean_rate for v in ds.test.values() for i in v} == {0.11}
    for inst in ds.train[3]:
        lam, mu = inst.rates[1:], inst.value_rates[1:]
        assert np.allclose(mu, np.clip(1.5 - 0.5 * lam / 0.15, 0.5, 3.0))


def test_ds_stream_replays_and_has_the_stated_shape():
    inst = relic_envs.splits("mapp_ds").test["test50"][0]
    a, b = stream(inst), stream(inst)
    assert np.array_equal(a.fire, b.fire) and np.array_equal(a.value, b.value) and np.array_equal(a.expiry, b.expiry)
    assert a.fire.shape == (51, 50) and not a.fire[:, 0].any()
    ttl = a.expiry - np.arange(51)[:, None]
    assert ttl.min() >= 3 and ttl.max() <= 10
    assert np.all(a.value[a.fire] > 0) and np.all(a.value[~a.fire] == 0)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("interface", ["paper", "alt"])
def test_seeds_pass_the_program_checks(name, interface):
    """Exact signatures and no forbidden constructs; the AR paper seeds are human
    heuristics, not the paper's case-study programs (those are in relic_envs.case_studies)."""
    for role, sig in relic_envs.get_benchmark(name).signatures(interface).items():
        source = seed_source(name, role, interface)
        check_source(source, sig)
        assert "lst:case" not in source


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("interface", ["paper", "alt"])
def test_seed_team_collects_something_and_beats_going_home(name, interface):
    inst = relic_envs.splits(name).test["test50"][:3]
    results = relic_envs.rollout(name, seed_team(name, interface), inst, interface=interface)
    assert all(r.valid and r.objective > 0 for r in results)


def test_cli_reports_each_test_size(capsys):
    from relic_envs.cli import main

    assert main(["eval", "--env", "mapp_ar", "--split", "test50", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "mapp_ar (test50 split)" in out and "±" in out
    assert main(["eval", "--env", "mapp_pc", "--split", "test99", "--quiet"]) == 2
    assert "test50" in capsys.readouterr().err
