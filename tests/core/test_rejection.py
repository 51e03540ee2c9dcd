"""Strict rejection: a bad role program voids its rollout with the reason named, and
nothing crashes; the next instance is still played."""

from __future__ import annotations

import numpy as np
import pytest

import relic_envs
from relic_envs import ProgramPolicy
from relic_envs.errors import ProgramError
from relic_envs.seeds import seed_team

HEADER = "import numpy as np\n\ndef select_values_B(cur, delta, u, t, opportunity_gain, flexibility):\n"

BAD_BODIES = {
    "exception": "    raise RuntimeError('boom')\n",
    "shape": "    return cur[:-1]\n",
    "domain": "    return cur + 3\n",
    "dtype": "    return cur.astype(float)\n",
    "non-finite": "    return np.full(cur.shape, np.nan)\n",
    "type": "    return list(cur)\n",
}


@pytest.fixture(scope="module")
def instances():
    return relic_envs.splits("dgc").test_instances()[:2]


@pytest.mark.parametrize("reason", sorted(BAD_BODIES))
def test_bad_return_voids_rollout_with_reason(reason, instances):
    sig = relic_envs.get_benchmark("dgc").signatures()["B"]
    team = seed_team("dgc")
    team["B"] = ProgramPolicy(HEADER + BAD_BODIES[reason], sig)
    results = relic_envs.rollout("dgc", team, instances)
    assert len(results) == 2
    for r in results:
        assert not r.valid
        assert r.invalid.role == "B"
        assert r.invalid.reason == reason
        assert r.objective is None and r.score is None


def test_late_failure_is_caught_at_its_sweep(instances):
    sig = relic_envs.get_benchmark("dgc").signatures()["A"]
    src = (
        "def select_values_A(cur, delta, u, t, violation_now, repair_gain):\n"
        "    if t == 17:\n        return cur[:3]\n    return cur\n"
    )
    team = {**seed_team("dgc"), "A": ProgramPolicy(src, sig)}
    (result,) = relic_envs.rollout("dgc", team, instances[:1])
    assert result.invalid.role == "A" and result.invalid.reason == "shape" and result.steps == 17


@pytest.mark.parametrize(
    "source,reason",
    [
        ("def select_values_C(cur, delta, u, t, peer_value_hist, peer_churn_rate, local_trend):\n"
         "    return np.random.randint(0, 3, cur.shape)\n", "forbidden"),
        ("import numpy as np\nfrom numpy import random\n"
         "def select_values_C(cur, delta, u, t, peer_value_hist, peer_churn_rate, local_trend):\n    return cur\n", "forbidden"),
        ("import random\ndef select_values_C(cur, delta, u, t, peer_value_hist, peer_churn_rate, local_trend):\n"
         "    return cur\n", "forbidden"),
        ("import os\ndef select_values_C(cur, delta, u, t, peer_value_hist, peer_churn_rate, local_trend):\n"
         "    return cur\n", "forbidden"),
        ("def select_values_C(cur, delta, u, t, peer_value_hist, local_trend, peer_churn_rate):\n    return cur\n", "signature"),
        ("def select_values_X(cur, delta, u, t, peer_value_hist, peer_churn_rate, local_trend):\n    return cur\n", "signature"),
        ("def select_values_C(cur, delta, u, t, peer_value_hist, peer_churn_rate, local_trend, **kw):\n    return cur\n", "signature"),
        ("def select_values_C(cur, delta:\n", "syntax"),
    ],
)
def test_program_rejected_before_running(source, reason):
    sig = relic_envs.get_benchmark("dgc").signatures()["C"]
    with pytest.raises(ProgramError) as info:
        ProgramPolicy(source, sig)
    assert info.value.reason == reason


def test_plain_callable_that_raises_is_contained(instances):
    def broken(obs):
        raise KeyError("oops")

    team = {**seed_team("dgc"), "C": broken}
    results = relic_envs.rollout("dgc", team, instances)
    assert [r.invalid.reason for r in results] == ["exception", "exception"]


def test_env_step_with_invalid_action_voids_the_episode_in_program_mode():
    env = relic_envs.make("dgc", on_invalid="program")
    obs, _ = env.reset(seed=0)
    actions = {a: obs[a]["cur"] for a in env.agents}
    actions["A"] = np.full_like(actions["A"], 5)
    obs, rew, term, trunc, info = env.step(actions)
    assert all(term.values()) and env.agents == []
    assert info["A"]["void"] == {"role": "A", "reason": "domain"}
    assert info["A"]["invalid_actions"][0]["reason"] == "domain"
    lo, hi = env.benchmark.score_bounds(env.instance)
    initial = env.benchmark.score(env.unwrapped.episode.objective())  # the void step changes nothing
    assert rew["A"] == rew["B"] == rew["C"] == pytest.approx(initial - (hi - lo + 1))
    assert rew["A"] < lo  # the one-step return is below every valid episode's return


def test_program_mutating_its_inputs_cannot_corrupt_the_simulator(instances):
    sig = relic_envs.get_benchmark("dgc").signatures()["A"]
    src = (
        "def select_values_A(cur, delta, u, t, violation_now, repair_gain):\n"
        "    out = cur.copy()\n    cur[:] = 0\n    delta[:] = -1e9\n    u[:] = 0\n    return out\n"
    )
    vandal = {**seed_team("dgc"), "A": ProgramPolicy(src, sig)}
    honest_src = "def select_values_A(cur, delta, u, t, violation_now, repair_gain):\n    return cur.copy()\n"
    honest = {**seed_team("dgc"), "A": ProgramPolicy(honest_src, sig)}
    a = relic_envs.rollout("dgc", vandal, instances)
    b = relic_envs.rollout("dgc", honest, instances)
    assert [r.objective for r in a] == [r.objective for r in b]
