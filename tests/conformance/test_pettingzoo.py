"""PettingZoo's own conformance kit on every built benchmark, made as a user makes it:
through PettingZoo's registry with no keyword (``interface="alt"`` is the only one, where
that interface exists), both APIs, each check with the kit's own default arguments.

The kit samples actions without the action mask (``parallel_seed_test``, ``state_test``,
``max_cycles_test``): the default ``on_invalid="penalize"`` refuses such an action,
charges the penalty and reports it in ``infos``, never raises (docs/env.md).
"""

from __future__ import annotations

import importlib
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
IDS = [f"{n}-{i}" for n, i in CASES]

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


def _make(api, name, interface, **kwargs):
    """The env from PettingZoo's registry, with no keyword but the interface ("paper" needs none)."""
    if interface != "paper":
        kwargs["interface"] = interface
    return pettingzoo.make(api, f"relic/{name}-v0", **kwargs)


def _run_checked(check, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check(*args, **kwargs)
    unexpected = [str(w.message) for w in caught if not str(w.message).startswith(EXPECTED_WARNINGS)]
    assert not unexpected, unexpected


def test_the_kit_covers_every_benchmark_and_interface():
    assert len(BUILT) == 14 and len(CASES) == 20  # 14 paper interfaces + 6 alternative (MAPP, MAS)


@pytest.mark.parametrize("name", BUILT)
def test_registered_in_pettingzoo(name):
    env = pettingzoo.make("parallel", f"relic/{name}-v0")
    assert isinstance(env, pettingzoo.ParallelEnv)
    assert isinstance(pettingzoo.make("aec", f"relic/{name}-v0"), pettingzoo.AECEnv)
    assert env.on_invalid == "penalize"  # the default: refuse, penalise, report in infos


@pytest.mark.parametrize(("name", "interface"), CASES, ids=IDS)
def test_parallel_api(name, interface):
    _run_checked(parallel_api_test, _make("parallel", name, interface))


@pytest.mark.parametrize(("name", "interface"), CASES, ids=IDS)
def test_aec_api(name, interface):
    _run_checked(api_test, _make("aec", name, interface))


@pytest.mark.parametrize(("name", "interface"), CASES, ids=IDS)
def test_seed(name, interface):
    _run_checked(seed_test, lambda: _make("aec", name, interface))


@pytest.mark.parametrize(("name", "interface"), CASES, ids=IDS)
def test_parallel_seed(name, interface):
    _run_checked(parallel_seed_test, lambda: _make("parallel", name, interface))


@pytest.mark.parametrize(("name", "interface"), CASES, ids=IDS)
def test_state(name, interface):
    """state_test(aec_env, parallel_env): the AEC episode samples unmasked actions."""
    _run_checked(state_test, _make("aec", name, interface), _make("parallel", name, interface))


MAX_CYCLES_RUNS = 20


@pytest.mark.parametrize(("name", "interface"), CASES, ids=IDS)
def test_max_cycles(name, interface):
    """PettingZoo's max_cycles_test on the benchmark's own ``envs`` module (the
    ``parallel_env``/``env`` the registry calls), both APIs, unmasked samples.

    Each run's env is seeded (run k: seed k, which also seeds the action spaces the kit
    samples from) so a failure replays: the kit assumes an episode outlives 4 steps, and
    a MAPP episode ends sooner when all three agents sample the depot (a legal move)
    within 3 steps, about once in 2e4 unseeded episodes.
    """
    module = importlib.import_module(relic_envs.spec(name).entry_point.split(":")[0])
    extra = {} if interface == "paper" else {"interface": interface}
    for run in range(MAX_CYCLES_RUNS):

        def seeded(make, max_cycles, run=run):
            env = make(max_cycles=max_cycles, **extra)
            env.reset(seed=run)
            return env

        kit_module = types.SimpleNamespace(
            parallel_env=lambda max_cycles, run=run: seeded(module.parallel_env, max_cycles, run),
            env=lambda max_cycles, run=run: seeded(module.env, max_cycles, run),
        )
        _run_checked(max_cycles_test, kit_module)


@pytest.mark.parametrize(("name", "interface"), CASES, ids=IDS)
def test_render(name, interface):
    """PettingZoo's render_test (an AEC check): "rgb_array" gives (H, W, 3) uint8 frames,
    "human" returns None (a matplotlib window; with the Agg backend it draws off-screen);
    and the parallel env renders the same frame."""
    pytest.importorskip("matplotlib")
    _run_checked(render_test, lambda render_mode: _make("aec", name, interface, render_mode=render_mode))
    aec, par = (_make(api, name, interface, render_mode="rgb_array") for api in ("aec", "parallel"))
    aec.reset(seed=3)
    par.reset(seed=3)
    frame = par.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    assert np.array_equal(frame, aec.render())


def _random_action(space, rng):
    if hasattr(space, "nvec"):  # MultiDiscrete (DCOP value vectors)
        return rng.integers(0, space.nvec)
    return int(space.start + rng.integers(0, space.n))  # Discrete (MAPP node ids), masks ignored on purpose


@pytest.mark.parametrize("on_invalid", [None, "program"], ids=["default", "program"])
@pytest.mark.parametrize(("name", "interface"), CASES, ids=IDS)
def test_multistep_determinism(name, interface, on_invalid):
    """Two envs, same seed, same sampled actions (mask ignored): identical trajectories
    for a whole episode, in the default mode and in "program" mode.

    (PettingZoo 1.27's parallel_seed_test stops after one step.)
    """
    mode = {} if on_invalid is None else {"on_invalid": on_invalid}
    envs = [_make("parallel", name, interface, **mode) for _ in range(2)]
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


@pytest.mark.parametrize(("name", "interface"), CASES, ids=IDS)
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


@pytest.mark.parametrize(("name", "interface"), CASES, ids=IDS)
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
