"""PettingZoo's own conformance kit on every built benchmark, made through its registry."""

from __future__ import annotations

import types
import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import (
    api_test,
    max_cycles_test,
    parallel_api_test,
    parallel_seed_test,
    render_test,
    seed_test,
    state_test,
)

import relic_envs

BUILT = relic_envs.names()
# Every (benchmark, interface) pair: the kit runs on the paper's and the alternative interface.
CASES = [(n, i) for n in BUILT for i in relic_envs.get_benchmark(n).interfaces]

# PettingZoo's kit warns about choices DESIGN.md makes on purpose; any other warning fails.
EXPECTED_WARNINGS = (
    "Observation is not a NumPy array",  # observations are dicts keyed by signature parameters
    "Agents have different observation space sizes",  # roles see different features
    "Observation space for each agent probably should be",  # Dict spaces by design
    "Action space for each agent probably should be",  # MultiDiscrete value vectors (DCOP)
    "The action space is not a Discrete space",  # different action spaces are fine
    "We recommend agents to be named in the format",  # the paper's role names A, B, C
    # MAPP's state holds prizes / request values, which no instance-independent bound caps.
    "Environment's maximum state space value is infinity",
)
# The kit checks that sample actions without the action mask run in "penalize" mode: in
# the default "raise" mode a masked-out MAPP node raises InvalidAction (DCOP samples are
# always valid). The checks that use the mask run in the default mode.
UNMASKED = {"on_invalid": "penalize"}


def _run_checked(check, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check(*args, **kwargs)
    unexpected = [str(w.message) for w in caught if not str(w.message).startswith(EXPECTED_WARNINGS)]
    assert not unexpected, unexpected


@pytest.mark.parametrize("name", BUILT)
def test_registered_in_pettingzoo(name):
    env = pettingzoo.make("parallel", f"relic/{name}-v0")
    assert isinstance(env, pettingzoo.ParallelEnv)
    assert isinstance(pettingzoo.make("aec", f"relic/{name}-v0"), pettingzoo.AECEnv)


@pytest.mark.parametrize(("name", "interface"), CASES)
def test_parallel_api(name, interface):
    _run_checked(parallel_api_test, pettingzoo.make("parallel", f"relic/{name}-v0", interface=interface), num_cycles=60)


@pytest.mark.parametrize(("name", "interface"), CASES)
def test_aec_api(name, interface):
    _run_checked(api_test, pettingzoo.make("aec", f"relic/{name}-v0", interface=interface), num_cycles=60)


@pytest.mark.parametrize(("name", "interface"), CASES)
def test_seed(name, interface):
    _run_checked(seed_test, lambda: pettingzoo.make("aec", f"relic/{name}-v0", interface=interface), num_cycles=20)


@pytest.mark.parametrize(("name", "interface"), CASES)
def test_parallel_seed(name, interface):
    _run_checked(
        parallel_seed_test,
        lambda: pettingzoo.make("parallel", f"relic/{name}-v0", interface=interface, **UNMASKED),
        num_cycles=20,
    )


@pytest.mark.parametrize(("name", "interface"), CASES)
def test_state(name, interface):
    make = lambda api: pettingzoo.make(api, f"relic/{name}-v0", interface=interface, **UNMASKED)  # noqa: E731
    _run_checked(state_test, make("aec"), make("parallel"), num_cycles=12)


@pytest.mark.parametrize(("name", "interface"), CASES)
def test_max_cycles(name, interface):
    """PettingZoo's max_cycles_test, 100 runs. Each run's env is seeded (run k: seed k) so
    a failure replays: in MAPP an unmasked sample is the depot with chance 1/N per step,
    and three agents all going home within 4 steps would end the episode early."""
    for run in range(100):

        def factory(api, max_cycles, run=run):
            env = relic_envs.make(name, api=api, interface=interface, max_cycles=max_cycles, **UNMASKED)
            env.reset(seed=run)  # seeds the instance stream and the action spaces the kit samples from
            return env

        module = types.SimpleNamespace(
            parallel_env=lambda **kw: factory("parallel", **kw), env=lambda **kw: factory("aec", **kw)
        )
        _run_checked(max_cycles_test, module)


def _random_action(space, rng):
    if hasattr(space, "nvec"):  # MultiDiscrete (DCOP value vectors)
        return rng.integers(0, space.nvec)
    return int(space.start + rng.integers(0, space.n))  # Discrete (MAPP node ids), masks ignored on purpose


@pytest.mark.parametrize("on_invalid", ["penalize", "program"])
@pytest.mark.parametrize(("name", "interface"), CASES)
def test_multistep_determinism(name, interface, on_invalid):
    """Two envs, same seed, same sampled actions: identical trajectories for a whole episode.

    (PettingZoo 1.27's parallel_seed_test stops after one step.)
    """
    envs = [relic_envs.make(name, interface=interface, on_invalid=on_invalid) for _ in range(2)]
    traces = []
    for env in envs:
        obs, _ = env.reset(seed=7)
        rng = np.random.default_rng(3)
        trace = [obs]
        while env.agents:
            actions = {a: _random_action(env.action_space(a), rng) for a in env.agents}
            obs, rew, term, trunc, info = env.step(actions)
            trace.append((obs, rew, term, trunc, info))
        traces.append(trace)
    # A MAS rollout is void at its first refused action in "program" mode (B.2).
    voids_at_once = env.benchmark.family == "mas" and on_invalid == "program"
    assert len(traces[0]) == len(traces[1]) > (1 if voids_at_once else 2)
    if env.benchmark.family == "dcop":
        assert len(traces[0]) == 51
    for a, b in zip(*traces):
        assert _equal(a, b)


def _equal(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return all(_equal(x, y) for x, y in zip(a, b))
    return bool(np.array_equal(a, b))


@pytest.mark.parametrize(("name", "interface"), CASES)
def test_episode_return_equals_final_score(name, interface):
    """Shared reward = per-step change of score, so the return is the final score."""
    s = relic_envs.splits(name)
    env = relic_envs.make(name, interface=interface, instances=s.test[list(s.test)[0]][:1])
    obs, _ = env.reset()
    rng = np.random.default_rng(0)
    total = 0.0
    while env.agents:
        # DCOP: keep values; MAPP: a random feasible node (the mask's 1s), so episodes are non-trivial.
        actions = {
            a: obs[a]["cur"] if "cur" in obs[a]
            else env.action_space(a).start + int(rng.choice(np.flatnonzero(obs[a]["action_mask"])))
            for a in env.agents
        }
        obs, rew, term, trunc, info = env.step(actions)
        total += rew["A"]
        assert rew["A"] == rew["B"] == rew["C"]
    assert total == pytest.approx(info["A"]["score"])
    assert info["A"]["score"] == pytest.approx(env.benchmark.score(info["A"]["objective"]))


@pytest.mark.parametrize(("name", "interface"), CASES)
def test_observations_fit_spaces_and_signatures(name, interface):
    env = relic_envs.make(name, interface=interface)
    obs, _ = env.reset(seed=0)
    signatures = env.benchmark.signatures(interface)
    for agent in env.agents:
        space = env.observation_space(agent)
        assert space.contains(obs[agent]), agent
        assert set(space.spaces) - {"action_mask"} == set(signatures[agent].param_names)
        assert ("action_mask" in space.spaces) == (env.benchmark.family != "dcop")


def test_max_cycles_truncates():
    env = relic_envs.make("dgc", max_cycles=3)
    obs, _ = env.reset(seed=0)
    for _ in range(3):
        obs, rew, term, trunc, info = env.step({a: obs[a]["cur"] for a in env.agents})
    assert all(trunc.values()) and not any(term.values())
    assert env.agents == []


@pytest.mark.parametrize(("name", "interface"), CASES)
def test_render(name, interface):
    """PettingZoo's render_test: "rgb_array" gives (H, W, 3) uint8 frames, "human" returns None
    (a matplotlib window; with the Agg backend it draws off-screen)."""
    pytest.importorskip("matplotlib")
    _run_checked(render_test, lambda render_mode: relic_envs.make(name, api="aec", interface=interface, render_mode=render_mode))
