"""The env contract a MARL user relies on: invalid actions never pay, seeding, bad input."""

from __future__ import annotations

import numpy as np
import pettingzoo
import pytest

import relic_envs
from relic_envs.errors import InvalidAction, InvalidConfig
from relic_envs.seeds import SEEDS

BUILT = relic_envs.names()


def _instance(name):
    s = relic_envs.splits(name)
    return s.test[list(s.test)[0]][0]


def _bad_action(env, obs, role):
    """A malformed action: a value outside the domain (DCOP) or a node id past N (MAPP)."""
    if env.benchmark.family == "dcop":
        return np.full_like(obs[role]["cur"], env.benchmark.problem.domain)
    return int(env.action_space(role).n)


def _play(env, choose, bad_at=None):
    """Return of one episode; ``choose(obs, role)`` picks each action; at step ``bad_at``
    the first acting role plays a malformed action instead."""
    obs, _ = env.reset(seed=0)
    total, step = 0.0, 0
    while env.agents:
        actions = {r: choose(obs, r) for r in env.agents}
        if step == bad_at:  # the first role whose action counts (a busy MAS machine's does not)
            role = next(r for r in env.agents if env.episode.acting(r))
            actions[role] = _bad_action(env, obs, role)
        obs, rewards, _, _, infos = env.step(actions)
        total += rewards["A"]
        step += 1
    return total, infos["A"]


def _valid_choosers(env, rng):
    seeds = SEEDS.team(env.benchmark.name, "paper")
    reference = {r: env.benchmark.reference_policy(r) for r in env.possible_agents}
    if env.benchmark.family == "dcop":
        d = env.benchmark.problem.domain
        rand = lambda obs, r: rng.integers(0, d, size=obs[r]["cur"].shape)  # noqa: E731
    else:
        # Mask index i is action start + i (MAS: index 0 is the idle sentinel -1).
        rand = lambda obs, r: env.action_space(r).start + int(rng.choice(np.flatnonzero(obs[r]["action_mask"])))  # noqa: E731
    return {
        "seeds": lambda obs, r: seeds[r](obs[r]),
        "reference": lambda obs, r: reference[r](obs[r]),
        "random-1": rand,
        "random-2": rand,
    }


@pytest.mark.parametrize("on_invalid", ["penalize", "program"])
@pytest.mark.parametrize("name", BUILT)
def test_an_invalid_action_returns_less_than_every_valid_episode(name, on_invalid):
    env = relic_envs.make(name, instances=[_instance(name)], on_invalid=on_invalid)
    rng = np.random.default_rng(0)
    valid = {}
    for label, choose in _valid_choosers(env, rng).items():
        ret, info = _play(env, choose)
        assert "invalid_actions" not in info, label
        assert ret == pytest.approx(info["score"]), label
        valid[label] = ret
    seeds = _valid_choosers(env, rng)["seeds"]
    for bad_at in (0, 3):
        ret, info = _play(env, seeds, bad_at=bad_at)
        assert ret < min(valid.values()), (bad_at, ret, valid)
    # The refusal is reported in that step's infos, with the penalty charged.
    obs, _ = env.reset(seed=0)
    actions = {r: seeds(obs, r) for r in env.agents}
    actions["A"] = _bad_action(env, obs, "A")
    _, rewards, terms, _, infos = env.step(actions)
    (entry,) = infos["B"]["invalid_actions"]
    assert entry["role"] == "A" and entry["reason"] in ("domain", "range")
    assert infos["B"]["penalty"] > 0 and rewards["C"] <= -infos["B"]["penalty"] + abs(valid["seeds"])
    voided = env.benchmark.family in ("dcop", "mas") and on_invalid == "program"
    assert all(terms.values()) == voided


def _bad_step(env, obs):
    """The seed team's actions with one acting role's replaced by a malformed one: B's, or
    the deciding role's where one role decides per step (CO)."""
    seeds = SEEDS.team(env.benchmark.name, "paper")
    actions = {r: seeds[r](obs[r]) for r in env.agents}
    role = "B" if env.episode.acting("B") else next(r for r in env.agents if env.episode.acting(r))
    return actions, role, dict(actions, **{role: _bad_action(env, obs, role)})


@pytest.mark.parametrize("name", BUILT)
def test_default_refuses_penalises_and_reports(name):
    """With no keyword an invalid action is refused, never raised: the team pays the
    penalty, the refusal is listed in every agent's infos, and the step is the
    explicit "penalize" mode's exactly (PettingZoo's classic-env convention)."""
    env = relic_envs.make(name, instances=[_instance(name)])
    assert env.on_invalid == "penalize"
    obs, _ = env.reset(seed=0)
    actions, role, bad = _bad_step(env, obs)
    _, rewards, _, _, infos = env.step(bad)  # no exception
    lo, hi = env.benchmark.score_bounds(env.instance)
    for agent in env.possible_agents:
        (entry,) = infos[agent]["invalid_actions"]
        assert entry["role"] == role and entry["reason"] in ("domain", "range") and entry["detail"]
        assert infos[agent]["penalty"] == hi - lo + 1
    score = env.benchmark.score(env.episode.objective())  # the paper's objective, without the penalty
    assert rewards == {a: pytest.approx(score - (hi - lo + 1)) for a in env.possible_agents}
    explicit = relic_envs.make(name, instances=[_instance(name)], on_invalid="penalize")
    explicit.reset(seed=0)
    again = explicit.step(bad)
    assert again[1] == rewards and again[4] == infos and np.array_equal(explicit.state(), env.state())
    # A valid step reports nothing.
    env.reset(seed=0)
    _, _, _, _, infos = env.step(actions)
    assert not any("invalid_actions" in i or "penalty" in i for i in infos.values())
    # The PettingZoo registry's constructors have the same default.
    assert pettingzoo.make("parallel", f"relic/{name}-v0").on_invalid == "penalize"
    assert pettingzoo.make("aec", f"relic/{name}-v0").unwrapped.on_invalid == "penalize"


@pytest.mark.parametrize("name", BUILT)
def test_raise_mode_names_the_agent_and_loses_nothing(name):
    """on_invalid="raise" is the opt-in for debugging: the same action raises, naming the agent."""
    env = relic_envs.make(name, instances=[_instance(name)], on_invalid="raise")
    seeds = SEEDS.team(name, "paper")
    obs, _ = env.reset(seed=0)
    state = env.state()
    actions = {r: seeds[r](obs[r]) for r in env.agents}
    # Break B's action, or the deciding role's where one role decides per step (CO).
    role = "B" if env.episode.acting("B") else next(r for r in env.agents if env.episode.acting(r))
    bad = dict(actions, **{role: _bad_action(env, obs, role)})
    with pytest.raises(InvalidAction, match=f"agent '{role}'") as caught:
        env.step(bad)
    assert caught.value.agent == role and caught.value.reason in ("domain", "range")
    assert np.array_equal(env.state(), state)
    after = env.step(actions)
    fresh = relic_envs.make(name, instances=[_instance(name)], on_invalid="raise")
    fresh.reset(seed=0)
    expected = fresh.step(actions)
    assert after[1] == expected[1] and np.array_equal(env.state(), fresh.state())


def test_mapp_fallback_is_reported_in_program_mode():
    env = relic_envs.make("mapp_pc", instances=[_instance("mapp_pc")], on_invalid="program")
    obs, _ = env.reset(seed=0)
    first = int(np.flatnonzero(obs["A"]["action_mask"])[1])  # a feasible customer
    obs, _, _, _, infos = env.step({"A": first, "B": 0, "C": 0})
    assert "invalid_actions" not in infos["A"] and obs["A"]["action_mask"][first] == 0
    _, _, _, _, infos = env.step({"A": first, "B": 0, "C": 0})  # standing still is masked out
    (entry,) = infos["A"]["invalid_actions"]
    assert entry["role"] == "A" and entry["reason"] in ("stay", "budget", "revisit")
    assert env.unwrapped.episode.home[0]  # the paper's depot fallback was applied


@pytest.mark.parametrize("name", BUILT)
def test_sampled_actions_differ_between_agents(name):
    env = relic_envs.make(name)
    env.reset(seed=5)
    draws = {a: [np.asarray(env.action_space(a).sample()).tolist() for _ in range(10)] for a in env.agents}
    assert draws["A"] != draws["B"] != draws["C"] != draws["A"]
    again = relic_envs.make(name)
    again.reset(seed=5)
    assert draws == {a: [np.asarray(again.action_space(a).sample()).tolist() for _ in range(10)] for a in again.agents}


def test_bad_step_inputs_raise_one_clear_line():
    # A malformed step() argument is a caller bug, not an action: it raises in every mode.
    for on_invalid in ("penalize", "program", "raise"):
        env = relic_envs.make("dgc", on_invalid=on_invalid)
        obs, _ = env.reset(seed=0)
        hold = {a: obs[a]["cur"] for a in env.agents}
        with pytest.raises(InvalidAction, match=r"takes a dict \{agent: action\}"):
            env.step([hold["A"], hold["B"], hold["C"]])
        with pytest.raises(InvalidAction, match="not live.*'D'"):
            env.step({**hold, "D": hold["A"]})
        with pytest.raises(InvalidAction, match="missing \\['C'\\]"):
            env.step({"A": hold["A"], "B": hold["B"]})
    # A malformed action raises in the opt-in "raise" mode (the default refuses it).
    assert env.on_invalid == "raise"
    with pytest.raises(InvalidAction, match="agent 'A'.*integer array"):
        env.step({**hold, "A": hold["A"].astype(float)})
    with pytest.raises(InvalidAction, match="agent 'A'.*shape"):
        env.step({**hold, "A": hold["A"][:-1]})
    env.step({**hold, "A": hold["A"].tolist()})  # a list is a fine MultiDiscrete action, as in Gymnasium


def test_bad_env_inputs_raise_one_clear_line():
    mapp = relic_envs.splits("mapp_pc").train[0][:2]
    with pytest.raises(InvalidConfig, match=r"instances\[0\]: dgc needs a DGCInstance, got PCInstance"):
        relic_envs.make("dgc", instances=mapp)
    with pytest.raises(InvalidConfig, match="instances must be a non-empty sequence"):
        relic_envs.make("dgc", instances=relic_envs.splits("dgc").train[0][0])  # one instance, not a list
    with pytest.raises(InvalidConfig, match="on_invalid must be one of"):
        relic_envs.make("dgc", on_invalid="ignore")
    with pytest.raises(InvalidConfig, match="render_mode must be None or one of"):
        relic_envs.make("dgc", render_mode="ansi")
    env = relic_envs.make("dgc")
    with pytest.raises(InvalidConfig, match=r"options\['instance'\]: dgc needs a DGCInstance, got str"):
        env.reset(options={"instance": "junk"})
    with pytest.raises(InvalidConfig, match="options must be a dict"):
        env.reset(options=[("instance", 1)])
    with pytest.raises(InvalidConfig, match="seed must be a non-negative int"):
        env.reset(seed="7")
    with pytest.raises(InvalidConfig, match="unknown agent 'D'"):
        env.action_space("D")
    with pytest.raises(RuntimeError, match="before reset"):
        relic_envs.make("dgc").step({})


@pytest.mark.parametrize("name", BUILT)
def test_score_bounds_hold_for_random_valid_play(name):
    """The penalty rests on the score bounds: random valid episodes stay inside them."""
    env = relic_envs.make(name)
    rng = np.random.default_rng(1)
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        lo, hi = env.benchmark.score_bounds(env.instance)
        choose = _valid_choosers(env, rng)["random-1"]
        while env.agents:
            obs, _, _, _, infos = env.step({r: choose(obs, r) for r in env.agents})
        assert lo <= infos["A"]["score"] <= hi
