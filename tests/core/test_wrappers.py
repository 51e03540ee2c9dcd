"""The flat, single-agent and vectorised views (relic_envs.wrappers), on every built env.

SuperSuit is a dev dependency; without it the SuperSuit tests skip and the rest runs.
"""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, parallel_api_test

import relic_envs
from relic_envs.errors import InvalidConfig
from relic_envs.seeds import seed_team
from relic_envs.wrappers import (
    FlatObservations,
    Flattener,
    flat_layout,
    flatten_observations,
    single_agent_env,
    vector_env,
)

CASES = [(n, i) for n in relic_envs.names() for i in relic_envs.get_benchmark(n).interfaces]
IDS = [f"{n}-{i}" for n, i in CASES]
# PettingZoo's and Gymnasium's kits sample actions without the mask; the env's default
# (on_invalid="penalize") refuses such an action, charges the penalty and reports it in
# infos, so the kits run on the defaults.
BOUND = 1e5  # above every finite value the built benchmarks produce (SHDS delta reaches ~2.2e4)


def _leaves(obs, prefix=""):
    if isinstance(obs, dict):
        out = {}
        for k, v in obs.items():
            out.update(_leaves(v, f"{prefix}.{k}" if prefix else k))
        return out
    return {prefix: obs}


def _assert_same_observation(a, b):
    la, lb = _leaves(a), _leaves(b)
    assert la.keys() == lb.keys()
    for key in la:
        x, y = np.asarray(la[key]), np.asarray(lb[key])
        assert x.shape == y.shape and x.dtype.kind == y.dtype.kind, key
        assert np.array_equal(x, y), key


def _masked_actions(env, infos, rng):
    """A random legal action per live agent: the mask from infos where there is one."""
    actions = {}
    for agent in env.agents:
        space, mask = env.action_space(agent), infos.get(agent, {}).get("action_mask")
        if mask is not None:  # index k of the mask is action k + start (start = -1: "idle" in MAS and CO)
            actions[agent] = int(rng.choice(np.flatnonzero(mask))) + int(space.start)
        else:
            actions[agent] = rng.integers(0, space.nvec)  # DCOP: every value of the domain is legal
    return actions


def _episode_observations(name, interface, steps=4):
    """Dict observations of the first steps of an episode played with random legal actions."""
    env = relic_envs.make(name, interface=interface)
    obs, _ = env.reset(seed=1)
    seen = [obs]
    rng = np.random.default_rng(0)
    for _ in range(steps):
        infos = {a: {"action_mask": obs[a]["action_mask"]} if "action_mask" in obs[a] else {} for a in env.agents}
        obs, *_ = env.step(_masked_actions(env, infos, rng))
        seen.append(obs)
        if not env.agents:
            break
    return env, seen


# -- layout and round trip -------------------------------------------------------------
@pytest.mark.parametrize(("name", "interface"), CASES, ids=IDS)
def test_round_trip_on_episode_observations(name, interface):
    env, seen = _episode_observations(name, interface)
    flat = FlatObservations(env)
    for obs in seen:
        for agent in env.possible_agents:
            vector = flat.flatten(agent, obs[agent])
            assert flat.observation_space(agent).contains(vector)
            _assert_same_observation(flat.unflatten(agent, vector), obs[agent])


@pytest.mark.parametrize(("name", "interface"), CASES, ids=IDS)
def test_layout_names_every_parameter_and_its_slice(name, interface):
    env = relic_envs.make(name, interface=interface)
    obs, _ = env.reset(seed=0)
    flat = FlatObservations(env)
    for agent in env.possible_agents:
        layout, vector = flat.layout(agent), flat.flatten(agent, obs[agent])
        leaves = _leaves(obs[agent])
        assert set(layout) == set(leaves)  # every leaf once (in the space's key order, not the dict's)
        assert [f.start for f in layout.values()] == [0] + [f.stop for f in list(layout.values())[:-1]]
        assert list(layout.values())[-1].stop == vector.size
        top = {name.split(".")[0] for name in layout}
        signature = env.benchmark.signatures(interface)[agent]
        assert top - {"action_mask"} == set(signature.param_names)
        for field in layout.values():
            leaf_space = env.observation_space(agent)
            for part in field.name.split("."):
                leaf_space = leaf_space[part]
            expected = spaces.flatten(leaf_space, leaves[field.name])
            assert np.array_equal(vector[field.slice], expected), field.name
            if field.encoding == "one-hot":
                assert vector[field.slice].sum() == 1 and np.argmax(vector[field.slice]) == leaves[field.name] - leaf_space.start
            else:
                assert field.shape == np.shape(leaves[field.name])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), role=st.sampled_from("ABC"), seed=st.integers(0, 2**32 - 1))
def test_round_trip_on_sampled_observations(case, role, seed):
    space = relic_envs.make(case[0], interface=case[1]).observation_space(role)
    space.seed(seed)
    obs = space.sample()
    f = Flattener(space)
    _assert_same_observation(f.unflatten(f.flatten(obs)), obs)


def test_layout_of_a_small_space_by_hand():
    space = spaces.Dict({
        "z": spaces.Discrete(3, start=-1),
        "a": spaces.Dict({"m": spaces.Box(0, 1, (2,), np.int8), "v": spaces.Box(-np.inf, np.inf, (2, 2))}),
    })
    layout = flat_layout(space)
    assert [(f.name, f.start, f.stop, f.shape, f.encoding) for f in layout.values()] == [
        ("a.m", 0, 2, (2,), "values"), ("a.v", 2, 6, (2, 2), "values"), ("z", 6, 9, (), "one-hot"),
    ]
    obs = {"z": np.int64(1), "a": {"m": np.array([1, 0], np.int8), "v": np.array([[1.5, -2.0], [np.inf, 0.25]])}}
    f = Flattener(space)
    # layout: [m0 m1 | v00 v01 v10 v11 | one-hot of z - start = 2]
    assert f.flatten(obs).tolist() == [1, 0, 1.5, -2.0, np.inf, 0.25, 0, 0, 1]
    _assert_same_observation(f.unflatten(f.flatten(obs)), obs)
    assert f.field(f.flatten(obs), "a.v").tolist() == [1.5, -2.0, np.inf, 0.25]


def test_bound_makes_the_view_finite_and_clips_only_beyond_it():
    space = spaces.Dict({"d": spaces.Box(0.0, np.inf, (3,)), "u": spaces.Box(0.0, 1.0, (1,))})
    f = Flattener(space, bound=10.0)
    assert np.isfinite(f.space.low).all() and np.isfinite(f.space.high).all()
    assert f.space.high.tolist() == [10.0, 10.0, 10.0, 1.0]  # infinite bounds replaced, finite ones kept
    vector = f.flatten({"d": np.array([np.inf, 3.0, 12.0]), "u": np.array([0.5])})
    assert vector.tolist() == [10.0, 3.0, 10.0, 0.5]
    assert f.unflatten(vector)["d"].tolist() == [10.0, 3.0, 10.0]


def test_float32_view_keeps_integer_fields_exact():
    env, seen = _episode_observations("mapp_pc", "paper")
    f = Flattener(env.observation_space("B"), dtype=np.float32)
    back = f.unflatten(f.flatten(seen[-1]["B"]))
    assert f.space.dtype == np.float32
    for key in ("action_mask", "my_state.current", "my_state.visited", "teammate_positions"):
        assert np.array_equal(_leaves(back)[key], _leaves(seen[-1]["B"])[key]), key
    assert np.allclose(back["graph"]["dist_mat"], seen[-1]["B"]["graph"]["dist_mat"], rtol=1e-6)


def test_action_mask_is_in_infos_and_in_its_slice():
    env = flatten_observations(relic_envs.make("mapp_ar", regime="test50"))
    obs, infos = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(3):
        for agent in env.agents:
            mask = infos[agent]["action_mask"]
            assert mask.dtype == np.int8 and mask.shape == (50,)
            assert np.array_equal(obs[agent][env.layout(agent)["action_mask"].slice], mask)
        obs, rewards, terms, truncs, infos = env.step(_masked_actions(env, infos, rng))


def test_bad_arguments_are_refused():
    space = relic_envs.make("dgc").observation_space("A")
    with pytest.raises(InvalidConfig, match="dtype"):
        Flattener(space, dtype=np.int64)
    with pytest.raises(InvalidConfig, match="bound"):
        Flattener(space, bound=-1.0)
    with pytest.raises(ValueError, match="shape"):
        Flattener(space).unflatten(np.zeros(3))
    with pytest.raises(TypeError, match="cannot flatten"):
        flat_layout(spaces.Dict({"g": spaces.Graph(spaces.Box(0, 1, (2,)), None)}))
    with pytest.raises(TypeError, match="ParallelEnv"):
        flatten_observations("dgc")
    with pytest.raises(InvalidConfig, match="role"):
        single_agent_env("dgc", "D")
    with pytest.raises(InvalidConfig, match="missing"):
        single_agent_env("dgc", "A", teammates={"B": lambda obs: obs["cur"]})
    with pytest.raises(TypeError):
        single_agent_env("dgc", "A", interfacee="paper")  # make() rejects unknown keywords


# -- PettingZoo's kit and SuperSuit on the flat view -------------------------------------
# The kit's advice that the flat view keeps on purpose; any other warning fails (the Dict
# view's "Observation is not a NumPy array" and "... probably should be" for spaces must be gone).
FLAT_EXPECTED_WARNINGS = (
    "Agent's maximum observation space value is infinity",  # costs, prizes, distances have no bound
    "Agent's minimum observation space value is -infinity",
    "Agents have different observation space sizes",  # roles see different features
    "Observations are different shapes",
    "Observation contains infinity",  # alt B's teammate_dist when both teammates are home
    "Agent's maximum and minimum observation space values are equal",  # MAS-FS A's constant `dummy`
    "Action space for each agent probably should be",  # MultiDiscrete value vectors (DCOP)
    "We recommend agents to be named in the format",  # the paper's role names A, B, C
)


@pytest.mark.parametrize(("name", "interface"), CASES, ids=IDS)
def test_pettingzoo_kit_on_flat_view(name, interface):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parallel_api_test(flatten_observations(relic_envs.make(name, interface=interface)), num_cycles=30)
        api_test(flatten_observations(relic_envs.make(name, api="aec", interface=interface)), num_cycles=30)
    unexpected = {str(w.message) for w in caught if not str(w.message).startswith(FLAT_EXPECTED_WARNINGS)}
    assert not unexpected, unexpected


def _padded_size(env):
    return max(env.observation_space(a).shape[0] for a in env.possible_agents)


def _supersuit_wrappers():
    ss = pytest.importorskip("supersuit")
    return {
        # (wrapper applied to the flat view, bound the flat view needs)
        "dtype_v0": (lambda e: ss.dtype_v0(e, np.float32), None),
        "flatten_v0": (ss.flatten_v0, None),
        "reshape_v0": (lambda e: ss.reshape_v0(ss.pad_observations_v0(e), (1, _padded_size(ss.pad_observations_v0(e)))), None),
        "normalize_obs_v0": (ss.normalize_obs_v0, BOUND),  # needs finite bounds
        "frame_stack_v1": (lambda e: ss.frame_stack_v1(e, 3), None),
        "frame_stack_v2": (lambda e: ss.frame_stack_v2(e, 3), None),
        "delay_observations_v0": (lambda e: ss.delay_observations_v0(e, 2), None),
        "max_observation_v0": (lambda e: ss.max_observation_v0(e, 2), None),
        "observation_lambda_v0": (lambda e: ss.observation_lambda_v0(e, lambda obs, space: np.tanh(obs)), None),
        "pad_observations_v0": (ss.pad_observations_v0, None),
        "agent_indicator_v0": (lambda e: ss.agent_indicator_v0(ss.pad_observations_v0(e)), None),
        # agent_indicator on finite bounds writes max(high) but declares min(high): normalise to [0, 1] first
        "agent_indicator_v0+normalize": (
            lambda e: ss.agent_indicator_v0(ss.normalize_obs_v0(ss.pad_observations_v0(e))), BOUND),
        "black_death_v3": (ss.black_death_v3, None),
        "clip_reward_v0": (ss.clip_reward_v0, None),
    }


WRAPPERS = [
    "dtype_v0", "flatten_v0", "reshape_v0", "normalize_obs_v0", "frame_stack_v1", "frame_stack_v2",
    "delay_observations_v0", "max_observation_v0", "observation_lambda_v0", "pad_observations_v0",
    "agent_indicator_v0", "agent_indicator_v0+normalize", "black_death_v3", "clip_reward_v0",
]


ZERO_FILLED = {"frame_stack_v1", "delay_observations_v0"}


@pytest.mark.parametrize("wrapper", WRAPPERS)
@pytest.mark.parametrize(("name", "interface"), CASES, ids=IDS)
def test_supersuit_wrapper_runs_on_flat_view(name, interface, wrapper):
    wrap, bound = _supersuit_wrappers()[wrapper]
    env = wrap(flatten_observations(relic_envs.make(name, interface=interface), bound=bound))
    obs, infos = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for step in range(4):
        for agent in env.agents:
            space = env.observation_space(agent)
            assert isinstance(space, spaces.Box) and obs[agent].shape == space.shape and obs[agent].dtype == space.dtype
            # frame_stack_v1 and delay_observations_v0 fill their first frames with zeros, which lie
            # below fields whose lower bound is above 0 (SHDS duration >= 1); later frames are real.
            if step >= 2 or wrapper not in ZERO_FILLED:
                assert space.contains(obs[agent]), agent
            if wrapper != "observation_lambda_v0":
                assert np.isfinite(obs[agent]).all() or interface == "alt"  # alt B's teammate_dist is inf when both are home
        obs, rewards, terms, truncs, infos = env.step(_masked_actions(env, infos, rng))
    assert set(obs) == set(env.possible_agents)


@pytest.mark.parametrize("name", ["mapp_pc", "mapp_ds"])
def test_supersuit_pad_action_space_on_routing(name):
    ss = pytest.importorskip("supersuit")
    env = ss.pad_action_space_v0(flatten_observations(relic_envs.make(name)))
    obs, infos = env.reset(seed=0)
    env.step(_masked_actions(env, infos, np.random.default_rng(0)))
    assert all(env.action_space(a) == spaces.Discrete(80) for a in env.possible_agents)


# -- the single-agent view -----------------------------------------------------------------
@pytest.mark.parametrize(("name", "interface"), CASES, ids=IDS)
def test_single_agent_view_passes_gymnasium_check_env(name, interface):
    for role in "ABC":
        env = single_agent_env(name, role, interface=interface)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # infinite Box bounds are reported as advice
            check_env(env, skip_render_check=True)
        assert isinstance(env, gymnasium.Env)


SEATS = [("mapp_pc", "C"), ("mapp_ds", "A"), ("dgc", "B"), ("mas_jd", "B"), ("hmtsp", "A")]


@pytest.mark.parametrize(("name", "role"), [s for s in SEATS if s[0] in relic_envs.names()])
def test_single_agent_return_equals_the_seed_team_rollout(name, role):
    """The learner's seat played by its own seed program, through the flat vector and back,
    returns exactly the seed team's score: teammates, forced steps, shifted actions and rewards add up."""
    instance = relic_envs.splits(name).test[list(relic_envs.splits(name).test)[0]][0]
    expected = relic_envs.rollout(name, seed_team(name), [instance])[0].score
    asked = {}
    for skip in (True, False):
        env = single_agent_env(name, role, instances=[instance], skip_forced=skip)
        program = seed_team(name)[role]
        space = env.env.action_space(role)
        offset = int(space.start) if isinstance(space, spaces.Discrete) else 0  # the view's actions start at 0
        if offset:
            assert env.action_space == spaces.Discrete(space.n)
        obs, info = env.reset(seed=0)
        total, steps, forced, done = 0.0, 0, 0, False
        while not done:
            forced += int(env.action_masks().sum() == 1)
            obs, reward, terminated, truncated, info = env.step(program(env.flattener.unflatten(obs)) - offset)
            total, steps, done = total + reward, steps + 1, terminated or truncated
        assert total == pytest.approx(expected, rel=1e-12, abs=1e-9)
        assert info["score"] == pytest.approx(expected)
        asked[skip] = (steps, forced)
    # skip_forced asks the learner only where it has a choice (the first step is always asked)
    assert asked[True][0] == asked[False][0] - asked[False][1] + asked[True][1] and asked[True][1] <= 1
    if name in ("mapp_ds", "mas_jd"):
        assert asked[False][1] > 0  # some steps were forced (A home before the end; B busy)


def test_action_masks_follow_the_learner():
    env = single_agent_env("mapp_pc", "C", regime="test50")
    obs, info = env.reset(seed=2)
    mask = env.action_masks()
    assert mask.dtype == bool and np.array_equal(mask, info["action_mask"].astype(bool))
    assert np.array_equal(mask, env.flattener.field(obs, "action_mask").astype(bool))
    dcop = single_agent_env("shds", "A")
    dcop.reset(seed=0)
    assert dcop.action_masks().shape == (int(dcop.action_space.nvec.sum()),) and dcop.action_masks().all()


def test_dict_view_for_hand_written_policies():
    env = single_agent_env("dgc", "A", flat=False)
    obs, _ = env.reset(seed=0)
    assert isinstance(env.observation_space, spaces.Dict) and env.observation_space.contains(obs)
    obs, reward, *_ = env.step(obs["cur"])
    assert isinstance(reward, float)


# -- vector pipelines ---------------------------------------------------------------------
@pytest.mark.parametrize("asynchronous", [False, True])
def test_gymnasium_vector_env_with_masks(asynchronous):
    vec = vector_env("mapp_pc", "C", 2, asynchronous=asynchronous, regime="test50", dtype=np.float32)
    try:
        obs, infos = vec.reset(seed=0)
        assert obs.shape == (2, vec.single_observation_space.shape[0]) and obs.dtype == np.float32
        rng = np.random.default_rng(0)
        finished = 0
        for _ in range(40):  # long enough to finish an episode and autoreset
            masks = vec.call("action_masks")
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            obs, rewards, terms, truncs, infos = vec.step(actions)
            finished += int(terms.sum())
        assert finished >= 1
    finally:
        vec.close()


@pytest.mark.parametrize("name", ["mapp_pc", "dgc"])
def test_supersuit_markov_vector_pipeline(name):
    """pad_observations_v0 (+ pad_action_space_v0 where actions are Discrete) ->
    pettingzoo_env_to_vec_env_v1 -> concat_vec_envs_v1: one vector slot per agent."""
    ss = pytest.importorskip("supersuit")
    env = ss.pad_observations_v0(flatten_observations(relic_envs.make(name), dtype=np.float32))
    if name.startswith("mapp"):
        env = ss.pad_action_space_v0(env)
    vec = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(env), 2, num_cpus=0, base_class="gymnasium")
    obs, infos = vec.reset(seed=0)
    assert vec.num_envs == 6 and obs.shape == (6, _padded_size(env))
    rng = np.random.default_rng(0)
    for _ in range(5):
        if name.startswith("mapp"):  # SuperSuit's vector action_space is one agent's space; masks come in infos
            actions = np.array([rng.choice(np.flatnonzero(info["action_mask"])) for info in infos])
        else:
            actions = np.stack([vec.action_space.sample() for _ in range(vec.num_envs)])
        obs, rewards, terms, truncs, infos = vec.step(actions)
        assert obs.shape == (6, _padded_size(env)) and rewards.shape == (6,)
        assert (rewards[:3] == rewards[0]).all()  # one team reward for the three agents of a copy
    vec.close()
