"""The DCOPs' functional JAX envs against the numpy PettingZoo env, step by step (exact, float64)."""

from __future__ import annotations

import numpy as np
import pytest

import relic_envs

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from relic_envs.core.functional import assert_parity, make  # noqa: E402
from relic_envs.errors import InvalidReturn  # noqa: E402

DCOPS = ("dgc", "dimes", "sensor_dcsp", "shds")


@pytest.mark.parametrize("name", DCOPS)
@pytest.mark.parametrize("invalid_rate", [0.0, 0.2])
def test_every_step_matches_the_numpy_env(name, invalid_rate):
    fenv = make(name)
    instance = relic_envs.splits(name).test_instances()[1]
    with jax.enable_x64(True):
        # DGC's costs are integer weights: everything is exact. The other costs are float sums
        # that XLA adds in another order than numpy: landscapes and rewards agree to the last
        # bits (the assignments, every integer leaf, exactly).
        tol = 0.0 if name == "dgc" else 1e-9
        steps = assert_parity(fenv, instance, np.random.default_rng(7), invalid_rate=invalid_rate, float_tol=tol)
    assert steps == 50


def test_a_refused_action_holds_and_pays_the_penalty_once():
    fenv = make("dgc")
    instance = relic_envs.splits("dgc").test_instances()[0]
    with jax.enable_x64(True):
        params = jax.tree.map(lambda a: a[0], fenv.params([instance]))
        obs, state = fenv.reset(jax.random.key(0), params)
        actions = {r: obs[r]["cur"] for r in fenv.roles}  # everyone holds: nothing changes
        bad = dict(actions, B=actions["B"].at[0].set(99))  # out of the domain: B holds, and pays
        _, s_ok, r_ok, _, i_ok = fenv.step(jax.random.key(0), state, actions, params)
        _, s_bad, r_bad, _, i_bad = fenv.step(jax.random.key(0), state, bad, params)
    assert int(i_ok["invalid"]) == 0 and int(i_bad["invalid"]) == 1
    np.testing.assert_array_equal(s_ok.sweep.x, s_bad.sweep.x)
    assert float(r_ok - r_bad) == float(params["penalty"])  # worst_cost + 1


def test_a_wrong_shape_is_a_trace_time_error():
    fenv = make("dgc")
    instance = relic_envs.splits("dgc").test_instances()[0]
    params = jax.tree.map(lambda a: a[0], fenv.params([instance]))
    obs, state = fenv.reset(jax.random.key(0), params)
    actions = {r: obs[r]["cur"] for r in fenv.roles}
    with pytest.raises(InvalidReturn, match="shape"):
        fenv.step(jax.random.key(0), state, dict(actions, A=actions["A"][:-1]), params)


def test_vmap_over_instances_equals_one_by_one_and_done_is_absorbing():
    fenv = make("sensor_dcsp")
    instances = relic_envs.splits("sensor_dcsp").test_instances()[:3]
    with jax.enable_x64(True):
        params = fenv.params(instances)
        keys = jax.random.split(jax.random.key(0), len(instances))
        obs, state = jax.vmap(fenv.reset)(keys, params)

        def greedy(o):  # each variable to its least local cost (a deterministic policy)
            return jnp.argmin(o["delta"], axis=-1).astype(jnp.int32)

        def body(carry, _):
            obs, state = carry
            obs, state, reward, done, info = jax.vmap(fenv.step)(keys, state, {r: greedy(obs[r]) for r in fenv.roles},
                                                                 params)
            return (obs, state), (reward, done)

        (_, final), (rewards, dones) = jax.jit(lambda c: jax.lax.scan(body, c, None, length=55))((obs, state))
        assert bool(dones[49:].all()) and not bool(dones[:49].any())
        assert float(jnp.abs(rewards[50:]).max()) == 0.0  # after done: identity, reward 0
        for k, instance in enumerate(instances):
            one = jax.tree.map(lambda a, k=k: a[k], params)
            o, s = fenv.reset(keys[k], one)
            total = 0.0
            for _ in range(50):
                o, s, r, d, _ = fenv.step(keys[k], s, {ro: greedy(o[ro]) for ro in fenv.roles}, one)
                total += float(r)
            np.testing.assert_array_equal(s.sweep.x, final.sweep.x[k])
            assert total == pytest.approx(float(rewards[:, k].sum()), abs=1e-9)
            # The return is the final score, minus the objective the numpy simulator computes.
            cost = relic_envs.get_benchmark("sensor_dcsp").problem.cost(instance, np.asarray(s.sweep.x))
            assert float(s.score) == pytest.approx(-cost, rel=1e-12)  # float sums: to the last bits


def test_make_names_the_families_and_rejects_unknown_names():
    with pytest.raises(relic_envs.errors.InvalidConfig, match="unknown benchmark"):
        make("tsp")


def test_every_benchmark_has_a_functional_env():
    assert {make(name).name for name in relic_envs.names()} == set(relic_envs.names())
