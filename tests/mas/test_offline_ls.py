"""The MAS-JD offline list-schedule local search (issue 38, item 2): its decoder is the
list scheduling whose orders contain an optimum, its schedules replay exactly through the
episode, and the shipped cache replays to its objectives, at or below the issue's figures."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import relic_envs
from baselines.mas import offline_ls
from baselines.mas.cpsat import jd_lower_bound, replay
from tests.mas.test_cpsat import _crowded_jd, _list_brute_force_jd, brute_force, tiny


def _data(inst):
    return tuple(np.asarray(a, dtype=np.float64).tolist() for a in (inst.release, inst.proc, inst.due, inst.weight))


@pytest.mark.parametrize("seed", [0, 1])
def test_decoder_orders_reach_the_brute_force_optimum(seed):
    inst = tiny("mas_jd", seed)
    data = _data(inst)
    best = min(offline_ls._cost(data, list(o)) for o in itertools.permutations(range(inst.n_jobs)))
    assert best == pytest.approx(brute_force("mas_jd", inst), abs=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_search_replays_exactly_and_is_bracketed(seed):
    inst = _crowded_jd(seed)
    ep, start = offline_ls.search(inst, moves=300, seed=seed)
    assert not ep.unfinished().any()
    opt = _list_brute_force_jd(inst)
    assert jd_lower_bound(inst) - 1e-9 <= opt - 1e-9 <= ep.objective() <= start + 1e-9
    data = _data(inst)
    order = [int(j) for j in np.lexsort((np.arange(inst.n_jobs), ep.start[:, 0]))]
    cost, seqs = offline_ls.decode(*data, order)
    assert replay("mas_jd", inst, seqs).objective() == pytest.approx(cost, abs=1e-9)


def test_cache_replays_and_meets_the_issue_figures():
    loaded = offline_ls.load_cache()
    assert loaded is not None, "missing cache: python -m baselines.mas.offline_ls --write"
    results, meta = loaded
    assert meta["method"] == "offline list-schedule local search" and meta["moves"] > 0
    for regime, instances in relic_envs.splits("mas_jd").test.items():
        res = results[regime]
        assert res["objective"].shape == (20,)
        for i, inst in enumerate(instances):
            machine, start = res["machine"][i][:, 0], res["start"][i][:, 0]
            seqs = [sorted(np.flatnonzero(machine == k).tolist(), key=lambda j: (start[j], j)) for k in range(3)]
            assert replay("mas_jd", inst, seqs).objective() == pytest.approx(res["objective"][i], abs=1e-9)
            assert res["objective"][i] <= res["start_objective"][i] + 1e-9
    # issue 38: an offline list-schedule local search reached 215.81 / 731.76
    assert results["test50"]["objective"].mean() <= 215.81
    assert results["test80"]["objective"].mean() <= 731.76
