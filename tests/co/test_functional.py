"""The combinatorial benchmarks' functional JAX envs against the numpy PettingZoo env, step by step (float64)."""

from __future__ import annotations

import numpy as np
import pytest

import relic_envs
from relic_envs.core.env import RelicParallelEnv

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from relic_envs.co.jax_eval import evaluate, seed_jax_team  # noqa: E402
from relic_envs.core.functional import assert_parity, make  # noqa: E402

CO = ("hmtsp", "fstsp", "fjagv", "mrcps")


@pytest.mark.parametrize("name", CO)
@pytest.mark.parametrize("invalid_rate", [0.0, 0.3])
def test_every_step_matches_the_numpy_env(name, invalid_rate):
    fenv = make(name)
    instances = relic_envs.splits(name).test["test100"][:2]
    with jax.enable_x64(True):
        for seed, instance in enumerate(instances):
            # Every decision, mask and integer leaf exact; the routing benchmarks' cost tables
            # and objectives are float sums XLA adds in another order than numpy (last bits).
            steps = assert_parity(fenv, instance, np.random.default_rng(seed), invalid_rate=invalid_rate,
                                  float_tol=1e-12, reward_tol=1e-9)
            assert steps > 10


@pytest.mark.parametrize("name", ["hmtsp", "fjagv"])
def test_a_refused_answer_takes_the_wait_choice_and_pays_the_penalty(name):
    fenv = make(name)
    instance = relic_envs.splits(name).test["test100"][0]
    with jax.enable_x64(True):
        params = jax.tree.map(lambda a: a[0], fenv.params([instance]))
        obs, state = fenv.reset(jax.random.key(0), params)
        role = next(r for r in fenv.roles if int(np.asarray(obs[r]["action_mask"])[1:].sum()) > 0)
        n = np.asarray(obs[role]["action_mask"]).size - 1
        bad = {r: jnp.int32(n) for r in fenv.roles}  # one past the identifier space: refused
        _, s_bad, r_bad, _, i_bad = fenv.step(jax.random.key(0), state, bad, params)
    env = RelicParallelEnv(relic_envs.get_benchmark(name), instances=[instance], on_invalid="penalize")
    env.reset(seed=0)
    _, rewards, _, _, infos = env.step({r: n for r in env.agents})
    assert int(i_bad["invalid"]) == 1 and infos[role]["invalid_actions"][0]["role"] == role
    assert float(r_bad) == pytest.approx(rewards[role], rel=1e-9)
    assert infos[role]["repairs"][role] == 0  # a refusal is charged, not counted as a repair
    lo, hi = relic_envs.get_benchmark(name).score_bounds(instance)
    assert float(r_bad) < -(hi - lo)  # the penalty dominates any step's change of the score


@pytest.mark.parametrize("name", ["hmtsp", "mrcps"])
def test_jit_vmap_scan_with_the_seed_twins_matches_the_batch_evaluator(name):
    fenv = make(name)
    instances = relic_envs.splits(name).test["test100"][:3]
    bound = relic_envs.get_benchmark(name).max_steps(instances[0])
    team = seed_jax_team(name)
    with jax.enable_x64(True):
        params = fenv.params(instances)
        keys = jax.random.split(jax.random.key(0), len(instances))
        obs, state = jax.vmap(fenv.reset)(keys, params)

        def body(carry, _):
            obs, state = carry
            actions = {r: jax.vmap(lambda o, r=r: jnp.asarray(team[r](o)).astype(jnp.int32))(obs[r])
                       for r in fenv.roles}
            obs, state, reward, done, info = jax.vmap(fenv.step)(keys, state, actions, params)
            return (obs, state), (reward, done, info["invalid"])

        (_, final), (rewards, dones, refused) = jax.jit(lambda c: jax.lax.scan(body, c, None, length=bound + 1))(
            (obs, state))
    assert bool(dones[-1].all()) and int(refused.sum()) == 0
    np.testing.assert_allclose(np.asarray(rewards).sum(axis=0), np.asarray(final.score), rtol=1e-12)
    np.testing.assert_allclose(-np.asarray(final.score), evaluate(name, team, instances).objectives, rtol=1e-12)
