"""The classical dispatch rules of baselines.mas: valid, non-delay, defined where they apply."""

from __future__ import annotations

import numpy as np
import pytest

import relic_envs
from baselines.mas.rules import ATC_K_GRID, ATC_K_TUNED, RULES, rule_policy, rule_team
from relic_envs.core.rollout import rollout


@pytest.mark.parametrize(("name", "rule"), [(n, r) for r, t in RULES.items() for n in t])
def test_rules_play_valid_non_delay_episodes(name, rule):
    inst = relic_envs.splits(name).test["test50"][0]
    (res,) = rollout(name, rule_team(name, rule), [inst])
    assert res.valid
    ep = relic_envs.get_benchmark(name).new_episode(inst)
    policy = rule_policy(name, rule)
    obs = ep.observe("A")
    if obs["action_mask"][1:].any():  # never idles with work in its pool
        assert policy(obs) >= 0 and obs["action_mask"][policy(obs) + 1]


def test_wspt_picks_the_largest_ratio_and_atc_defaults_to_it_when_all_are_late():
    obs = {"t_now": np.array(10.0), "my_busy_until": np.array(10.0), "p_mine": np.array(0.0),
           "job_pool": {"mask": np.array([1, 1, 0], np.int8), "value": np.array([[2.0, 1, 1], [1.0, 1, 1], [0.1, 1, 9]])},
           "action_mask": np.array([1, 1, 1, 0], np.int8)}
    assert rule_policy("mas_jd", "wspt")(obs) == 1  # 1/1 > 1/2; job 2 is not in the pool
    assert rule_policy("mas_jd", "atc")(obs) == 1  # no slack left: ATC = w/p
    assert rule_policy("mas_jd", "fifo")(obs) == 0


def test_unknown_rule_lists_the_allowed_ones():
    with pytest.raises(ValueError, match=r"allowed: \['edd', 'edd\+skip', 'fifo', 'fifo\+skip', 'value_density', 'value_density\+skip'\]"):
        rule_policy("mas_st", "wspt")


def test_skip_rules_pass_over_hopeless_tasks_and_idle_when_none_is_left():
    # task_pool rows (c_j, p_j, v_j, d_j); own skill 1 in category 0, so p_eff = p_j
    obs = {"t_now": np.array(10.0), "my_skills": np.array([1.0, 1.0, 1.0]),
           "task_pool": {"mask": np.array([1, 1], np.int8), "value": np.array([[0, 5.0, 9, 12], [0, 1.0, 1, 20]])},
           "action_mask": np.array([1, 1, 1], np.int8)}
    assert rule_policy("mas_st", "edd")(obs) == 0  # earliest deadline, although 10 + 5 > 12
    assert rule_policy("mas_st", "edd+skip")(obs) == 1  # task 0 can no longer make its deadline
    obs["task_pool"]["value"][1, 3] = 10.5
    assert rule_policy("mas_st", "value_density+skip")(obs) == -1


def test_minimum_slack_and_tuned_atc():
    obs = {"t_now": np.array(0.0), "job_pool": {"mask": np.array([1, 1], np.int8),
           "value": np.array([[1.0, 10, 1], [8.0, 12, 1]])}, "action_mask": np.array([1, 1, 1], np.int8)}
    assert rule_policy("mas_jd", "edd")(obs) == 0
    assert rule_policy("mas_jd", "mslack")(obs) == 1  # slack 4 < 9
    assert ATC_K_TUNED in ATC_K_GRID
