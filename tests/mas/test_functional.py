"""The scheduling benchmarks' functional JAX envs against the numpy PettingZoo env, step by step (float64)."""

from __future__ import annotations

import numpy as np
import pytest

import relic_envs
from relic_envs.core.env import RelicParallelEnv
from relic_envs.errors import InvalidConfig

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from relic_envs.core.functional import assert_parity, make  # noqa: E402

MASES = ("mas_jd", "mas_st", "mas_fs")


@pytest.mark.parametrize("interface", ["paper", "alt"])
@pytest.mark.parametrize("name", MASES)
@pytest.mark.parametrize("invalid_rate", [0.0, 0.3])
def test_every_step_matches_the_numpy_env(name, invalid_rate, interface):
    fenv = make(name, interface)
    instances = relic_envs.splits(name).test["test50"][:2]
    with jax.enable_x64(True):
        for seed, instance in enumerate(instances):
            # Observations exact; objectives are float sums that XLA adds in another order
            # than numpy, so rewards agree to the last bits.
            steps = assert_parity(fenv, instance, np.random.default_rng(seed), invalid_rate=invalid_rate,
                                  reward_tol=1e-9)
            assert steps > 10


@pytest.mark.parametrize("name", ["mas_jd", "mas_fs"])
def test_an_idle_team_is_refused_at_the_stall_and_ends_charged_at_the_horizon(name):
    """Everyone answers -1 always: the numpy env refuses each idler at the last-chance epoch, one by one."""
    instance = relic_envs.splits(name).test["test50"][0]
    env = RelicParallelEnv(relic_envs.get_benchmark(name), instances=[instance], on_invalid="penalize")
    fenv = make(name)
    with jax.enable_x64(True):
        params = jax.tree.map(lambda a: a[0], fenv.params([instance]))
        _, state = fenv.reset(jax.random.key(0), params)
        env.reset(seed=0)
        idle = {r: jnp.int32(-1) for r in fenv.roles}
        step = jax.jit(fenv.step)
        refusals = 0
        while env.agents:
            _, rewards, terms, _, infos = env.step({r: -1 for r in env.agents})
            _, state, reward, done, info = step(jax.random.key(0), state, idle, params)
            assert float(reward) == pytest.approx(rewards["A"], rel=1e-12)
            assert int(info["invalid"]) == len(infos["A"].get("invalid_actions", ()))
            assert bool(done) == terms["A"]
            refusals += int(info["invalid"])
    assert refusals >= 1  # the stall was refused, not silently played
    assert float(state.score) == pytest.approx(-infos["A"]["objective"], rel=1e-12)  # unfinished jobs at the horizon


def test_jit_vmap_scan_over_instances_ends_every_episode():
    fenv = make("mas_fs")
    instances = relic_envs.splits("mas_fs").test["test50"][:3]
    bound = relic_envs.get_benchmark("mas_fs").max_steps(instances[0])
    with jax.enable_x64(True):
        params = fenv.params(instances)
        keys = jax.random.split(jax.random.key(0), len(instances))
        obs, state = jax.vmap(fenv.reset)(keys, params)

        def first_come(o):  # the lowest job id of the pool, else idle
            jobs = o["action_mask"][1:] > 0
            return jnp.where(jobs.any(), jnp.argmax(jobs), -1).astype(jnp.int32)

        def body(carry, _):
            obs, state = carry
            actions = {r: jax.vmap(first_come)(obs[r]) for r in fenv.roles}
            obs, state, reward, done, info = jax.vmap(fenv.step)(keys, state, actions, params)
            return (obs, state), (reward, done, info["invalid"])

        (_, final), (rewards, dones, refused) = jax.jit(lambda c: jax.lax.scan(body, c, None, length=bound + 1))(
            (obs, state))
    assert bool(dones[-1].all()) and int(refused.sum()) == 0
    np.testing.assert_allclose(np.asarray(rewards).sum(axis=0), np.asarray(final.score), rtol=1e-12)
    bench = relic_envs.get_benchmark("mas_fs")
    reference = relic_envs.rollout(bench, {r: bench.reference_policy(r) for r in fenv.roles}, instances)
    np.testing.assert_allclose(np.asarray(final.score), [r.score for r in reference], rtol=1e-9)


def test_an_unknown_interface_is_named():
    with pytest.raises(InvalidConfig, match="nope"):
        make("mas_jd", "nope")
