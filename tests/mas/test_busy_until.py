"""``my_busy_until`` is as documented: ``max(busy_until, t_now)``, so ``== t_now`` whenever
the role is asked to choose (B.2's MAS-FS listing: "my_busy_until: equals t_now when
called"), and the true busy-until time while the role is busy (issue 38, item 3)."""

from __future__ import annotations

import numpy as np
import pytest

import relic_envs
from relic_envs.core.benchmark import WAIT
from relic_envs.seeds import seed_team

# (benchmark, role, where the role's own busy-until is) for every paper role that has one
OWN = [
    ("mas_jd", "A", ("my_busy_until",)), ("mas_jd", "B", ("my_busy_until",)),
    ("mas_st", "A", ("my_busy_until",)), ("mas_st", "B", ("my_state", "busy_until")),
    ("mas_fs", "A", ("my_busy_until",)), ("mas_fs", "B", ("my_busy_until",)),
]


def _own(obs, path):
    value = obs
    for key in path:
        value = value[key]
    return float(np.asarray(value))


def _t_now(episode) -> float:
    return float(episode.t)


@pytest.mark.parametrize(("name", "role", "path"), OWN)
def test_own_busy_until_is_t_now_when_asked_on_test50(name, role, path):
    """Seed team on the first 5 test50 instances: every call of an acting role sees its own
    busy-until equal to ``t_now``; a busy role sees its true busy-until (> ``t_now``).
    The old getter (the raw ``busy`` entry) showed a stale past completion time in
    20/365 (JD), 55/175 (ST), 194/1174 (FS) role-A calls of test50."""
    bench = relic_envs.get_benchmark(name)
    team = seed_team(name)
    k = bench.roles.index(role)
    asked = 0
    for instance in relic_envs.splits(name).test["test50"][:5]:
        episode = bench.new_episode(instance)
        while not episode.done:
            obs = episode.observe(role)
            if episode.acting(role):
                assert _own(obs, path) == _t_now(episode), (name, role, episode.t)
                asked += 1
            else:
                assert _own(obs, path) == float(episode.busy[k]) > _t_now(episode)
            episode.step({r: team[r](episode.observe(r)) if episode.acting(r) else WAIT for r in bench.roles})
    assert asked > 20


def test_rules_read_t_now_from_mas_fs_role_b():
    """``baselines.mas.rules._t`` reads MAS-FS role B's clock from ``my_busy_until``."""
    from baselines.mas.rules import _t

    bench = relic_envs.get_benchmark("mas_fs")
    team = seed_team("mas_fs")
    for instance in relic_envs.splits("mas_fs").test["test50"][:2]:
        episode = bench.new_episode(instance)
        while not episode.done:
            if episode.acting("B"):
                assert _t(episode.observe("B")) == episode.t
            episode.step({r: team[r](episode.observe(r)) if episode.acting(r) else WAIT for r in bench.roles})
