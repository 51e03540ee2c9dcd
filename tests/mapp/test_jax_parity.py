"""The routing JAX evaluators agree with the numpy reference: observations, routes, objectives."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import relic_envs
from relic_envs.errors import InvalidConfig, InvalidReturn
from relic_envs.seeds import seed_team

jax = pytest.importorskip("jax")

from relic_envs.mapp import _jax_routing as jr  # noqa: E402
from relic_envs.mapp import jax_eval  # noqa: E402
from relic_envs.mapp.ar.generator import ARRegime  # noqa: E402
from relic_envs.mapp.ar.generator import generate as generate_ar  # noqa: E402
from relic_envs.mapp.ds.generator import DSRegime  # noqa: E402
from relic_envs.mapp.ds.generator import generate as generate_ds  # noqa: E402
from relic_envs.mapp.jax_seeds import seed_jax_team  # noqa: E402
from relic_envs.mapp.pc.generator import PCRegime  # noqa: E402
from relic_envs.mapp.pc.generator import generate as generate_pc  # noqa: E402

MAPPS = ["mapp_pc", "mapp_ar", "mapp_ds"]
PER_SIZE = 3  # canonical test instances per size: enough to cover many decisions, one compile per size


@functools.cache
def seed_evaluator(name):
    """One compiled evaluator per benchmark, reused across tests (jit caches per batch shape)."""
    return jax_eval.evaluator(name, seed_jax_team(name))


def play_numpy(name, team, instance):
    """The numpy episode driven as ``relic_envs.rollout`` drives it; returns the finished episode."""
    bench = relic_envs.get_benchmark(name)
    episode = bench.new_episode(instance)
    while not episode.done:
        episode.step({r: team[r](episode.observe(r)) for r in bench.roles})
    return episode


def assert_same_outcome(name, team, instances, out):
    reference = relic_envs.rollout(name, team, instances)
    assert all(r.valid for r in reference)
    np.testing.assert_allclose(out.objective, [r.objective for r in reference], rtol=1e-6, atol=1e-12)
    np.testing.assert_array_equal(out.steps, [r.steps for r in reference])
    for i, instance in enumerate(instances):
        episode = play_numpy(name, team, instance)
        assert jr.routes(out.moves[i]) == episode.routes, f"{name} instance {i}: routes differ"
        np.testing.assert_allclose(out.budget[i], episode.budget, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", MAPPS)
@pytest.mark.parametrize("size", ["test50", "test80"])
def test_seed_team_routes_and_objectives_match_numpy_on_test_split(name, size):
    instances = relic_envs.splits(name).test[size][:PER_SIZE]
    out = seed_evaluator(name)(jax_eval.stack(name, instances))
    assert (out.objective > 0).all()
    assert_same_outcome(name, seed_team(name), instances, out)


@pytest.mark.parametrize("name", ["mapp_pc", "mapp_ds"])
def test_a_batch_that_shrinks_as_episodes_end_matches_numpy(name):
    # 128 instances: the evaluator quarters the batch twice (128 -> 32 -> 8) as episodes
    # end (shrink_stages), so instances are gathered into smaller batches and scattered
    # back; each must still get exactly its own episode.
    assert jax_eval.problem(name).shrink_stages >= 2
    splits = relic_envs.splits(name)
    rng = np.random.default_rng(7)
    bench = relic_envs.get_benchmark(name)
    instances = list(splits.test["test50"]) + [bench.generate("test50", rng) for _ in range(128)]
    instances = instances[:128]
    out = seed_evaluator(name)(jax_eval.stack(name, instances))
    assert len(set(out.steps.tolist())) > 3  # the lengths differ, so the stages matter
    assert_same_outcome(name, seed_team(name), instances, out)


def small_instance(name, seed, n, budget_scale, lattice):
    """A generator instance at size ``n``; ``lattice`` snaps customers to a 5x5 lattice so
    distances tie exactly (tie-breaking must agree) and nodes can coincide."""
    rng = np.random.default_rng(seed)
    if name == "mapp_pc":
        inst = generate_pc(PCRegime(n), rng)
    elif name == "mapp_ar":
        inst = generate_ar(ARRegime(n, float(rng.uniform(0.05, 0.3))), rng)
    else:
        inst = generate_ds(DSRegime(n, float(rng.uniform(0.1, 0.6))), rng)
    coords = inst.coords.copy()
    if lattice:
        coords[1:] = rng.integers(0, 5, (n - 1, 2)) / 4.0
    return dataclasses.replace(inst, coords=coords, budget=inst.budget * budget_scale)


SMALL_NS = (6, 11)  # few distinct shapes: each (benchmark, N) compiles once


@settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(MAPPS), st.integers(0, 2**32 - 1), st.sampled_from(SMALL_NS),
    st.floats(0.2, 3.0), st.booleans(),
)
def test_seed_team_parity_on_generated_small_instances(name, seed, n, budget_scale, lattice):
    instances = [small_instance(name, seed + i, n, budget_scale, lattice) for i in range(2)]
    out = seed_evaluator(name)(jax_eval.stack(name, instances))
    assert_same_outcome(name, seed_team(name), instances, out)


# -- observations ---------------------------------------------------------------------
def jstate(name, episode, data):
    """The JAX state of a numpy episode (``data``: the instance's stacked arrays)."""
    jnp = jax.numpy
    dyn = episode.dyn
    if name == "mapp_pc":
        jdyn = {"remaining": dyn["remaining"], "reached": dyn["reached"]}
    elif name == "mapp_ar":
        jdyn = {"u": dyn["u"], "scanned": dyn["scanned"]}
    else:
        # the JAX side ranks each node's requests by value: served in that order
        ranked = np.take_along_axis(np.asarray(dyn["served"]), np.asarray(data["epoch"]), axis=0)
        closes = np.where(ranked, -1, np.asarray(data["closes"])).astype(np.asarray(data["closes"]).dtype)
        jdyn = {"closes": closes, "gained": dyn["gained"][0]}
    return jr.JState(jnp.asarray(episode.pos, jnp.int32), jnp.asarray(episode.budget), jnp.asarray(episode.home),
                     jnp.asarray(episode.visited), jnp.int32(episode.t), {k: jnp.asarray(v) for k, v in jdyn.items()})


def flat(obs, prefix=""):
    out = {}
    for key, value in obs.items():
        if isinstance(value, dict):
            out.update(flat(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = np.asarray(value)
    return out


@pytest.mark.parametrize("name", MAPPS)
@pytest.mark.parametrize("interface", ["paper", "alt"])
def test_every_observation_matches_the_env(name, interface):
    """Every key of every role's observation, over a whole seed-team episode, equals the env's
    (the seed team plays the paper interface; both interfaces are observed at each state)."""
    bench = relic_envs.get_benchmark(name)
    problem = jax_eval.problem(name)
    instance = relic_envs.splits(name).test["test50"][5]
    data = jax_eval.stack(name, [instance]).data
    episode = bench.new_episode(instance)
    shown = bench.new_episode(instance, interface)
    team = seed_team(name)
    with jax.enable_x64(True):
        data = {k: jax.numpy.asarray(v[0]) for k, v in data.items()}
        observe = jax.jit(functools.partial(jr.observe, problem), static_argnums=(2, 3))
        while not episode.done:
            state = jstate(name, episode, data)
            for role in bench.roles:
                ours, ref = flat(observe(data, state, role, interface)), flat(observed(shown, episode, role))
                assert set(ours) == set(ref)
                for key in ref:
                    np.testing.assert_array_equal(ours[key].astype(float), ref[key].astype(float),
                                                  err_msg=f"{name} t={episode.t} role {role} {key}")
            episode.step({r: team[r](episode.observe(r)) for r in bench.roles})
        assert episode.t > 3  # the comparison covered several epochs, not just the start


def observed(shown, episode, role):
    """``role``'s observation in ``shown``'s interface at ``episode``'s state (same instance)."""
    for key, value in vars(episode).items():
        if key not in ("interface", "_obs"):  # _obs caches the episode's own interface's observations
            setattr(shown, key, value)
    shown._obs = {}
    return shown.observe(role)


# -- the depot fallback -------------------------------------------------------------------
def bad_team(n, xp):
    """Deliberately bad answers, one formula for numpy and JAX: out-of-range ids (-1, N, N + 1),
    the depot, the current node, revisits and unaffordable nodes."""

    def role(k):
        def policy(obs):
            cur = obs["my_state"]["current"] if "my_state" in obs else obs["current"]
            budget = obs["budget_left"] if "budget_left" in obs else obs["remaining_budget"]
            j = (cur * (5 + 2 * k) + 3 * k + 2) % (n + 3) - 1
            row = obs["dist_row"] if "dist_row" in obs else (obs["graph"] if "graph" in obs else obs)["dist_mat"][cur]
            far = xp.argmax(row)
            return xp.where(budget < 0.6, far, j).astype(xp.int64)  # late in a route: the farthest node

        return policy

    return {r: role(k) for k, r in enumerate("ABC")}


@pytest.mark.parametrize("name", MAPPS)
def test_bad_answers_fall_back_to_the_depot_as_in_numpy(name):
    n = 14
    instances = [small_instance(name, s, n, 1.5, False) for s in range(6)]
    out = jax_eval.evaluator(name, bad_team(n, jax.numpy))(jax_eval.stack(name, instances))
    numpy_team = bad_team(n, np)
    assert_same_outcome(name, numpy_team, instances, out)
    reasons = {reason for inst in instances for _, _, reason in play_numpy(name, numpy_team, inst).fallbacks}
    assert {"range", "budget"} <= reasons  # the formula exercises the guard, not only clean moves


def test_non_integer_or_non_scalar_answers_are_rejected_at_trace_time():
    instances = relic_envs.splits("mapp_pc").test["test50"][:1]
    team = seed_jax_team("mapp_pc")
    with pytest.raises(InvalidReturn, match="dtype"):
        jax_eval.evaluate("mapp_pc", {**team, "B": lambda obs: obs["budget_left"]}, instances)
    with pytest.raises(InvalidReturn, match="shape"):
        jax_eval.evaluate("mapp_pc", {**team, "C": lambda obs: obs["action_mask"].astype(int)}, instances)


def test_bad_batches_and_interfaces_are_named():
    pc = relic_envs.splits("mapp_pc").test
    with pytest.raises(InvalidConfig, match="one size"):
        jax_eval.stack("mapp_pc", [pc["test50"][0], pc["test80"][0]])
    with pytest.raises(InvalidConfig, match="at least one"):
        jax_eval.stack("mapp_pc", [])
    with pytest.raises(NotImplementedError, match="'nope' interface"):
        jax_eval.evaluator("mapp_pc", seed_jax_team("mapp_pc"), interface="nope")
    with pytest.raises(InvalidConfig, match="missing"):
        jax_eval.evaluator("mapp_pc", {"A": seed_jax_team("mapp_pc")["A"]})
    with pytest.raises(NotImplementedError, match="available"):
        seed_jax_team("dgc")


def test_compiles_once_per_batch_shape():
    run = seed_evaluator("mapp_pc")
    batch = jax_eval.stack("mapp_pc", relic_envs.splits("mapp_pc").test["test50"][:PER_SIZE])
    run(batch)
    compiled = run.jitted._cache_size()
    run(batch)
    assert compiled >= 1 and run.jitted._cache_size() == compiled


def test_ds_batches_keep_every_request_and_drop_unused_ranks():
    from relic_envs.mapp.ds.generator import stream

    instances = relic_envs.splits("mapp_ds").test["test50"][:8]
    data = jax_eval.stack("mapp_ds", instances).data
    streams = [stream(inst) for inst in instances]
    most = max(int(s.fire.sum(axis=0).max()) for s in streams)  # the most requests one node receives
    assert data["fire"].shape == (8, most, 50) and most < 51
    for i, s in enumerate(streams):
        assert int(data["fire"][i].sum()) == int(s.fire.sum())
        # each node's requests ranked by value (highest first), with their epochs and expiries
        for node in range(50):
            fired = data["fire"][i][:, node]
            rows = data["epoch"][i][fired, node]
            np.testing.assert_array_equal(data["value"][i][fired, node], s.value[rows, node])
            np.testing.assert_array_equal(data["expiry"][i][fired, node], s.expiry[rows, node])
            assert (np.diff(data["value"][i][fired, node]) <= 0).all()


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.integers(1, 6), st.sampled_from([0.0, 0.5, 1.0]))
def test_best_request_rank_is_the_first_active_one(seed, rows, cols, density):
    from relic_envs.core.jax_select import first_true

    mask = np.random.default_rng(seed).random((rows, cols)) < density  # density 0.0: columns with none
    want = np.where(mask.any(axis=0), mask.argmax(axis=0), rows)
    np.testing.assert_array_equal(np.asarray(first_true(jr.jnp.asarray(mask), axis=0)), want)


def alt_team(n, xp):
    """One formula for numpy and JAX on the alt interface's array observations (A's sparse
    dict is decoded differently by the two, so A reads only its scalars)."""

    def a(obs):
        return ((obs["current"] * 7 + 3) % (n + 2) - 1) * (obs["budget_left"] > 0.5)

    def b(obs):
        near = xp.where(xp.isfinite(obs["teammate_dist"]), obs["teammate_dist"], 0.0)
        return xp.argmax(obs["values"] - 0.01 * obs["dist_row"] + 0.001 * near)

    def c(obs):
        table = obs["node_table"]
        return xp.argmax(table[:, 2] * table[:, -1] - 0.001 * obs["team_state"]["coverage"])

    return {"A": a, "B": b, "C": c}


@pytest.mark.parametrize("name", MAPPS)
def test_alt_interface_routes_match_numpy(name):
    n = 14
    instances = [small_instance(name, s, n, 1.5, False) for s in range(4)]
    out = jax_eval.evaluate(name, alt_team(n, jax.numpy), instances, interface="alt")
    reference = relic_envs.rollout(name, alt_team(n, np), instances, interface="alt")
    np.testing.assert_allclose(out.objectives, [r.objective for r in reference], rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(out.steps, [r.steps for r in reference])
    assert (out.objectives > 0).any()  # the team moved, not only fell back home


@pytest.mark.parametrize("n", [1, 7, 8, 9, 51, 101, 127, 128, 129, 200, 301, 400])
def test_numpy_sum_has_numpy_bits(n):
    from relic_envs.core.jax_numpy_order import numpy_sum

    rng = np.random.default_rng(n)
    for scale in (1e-3, 1.0, 1e4):
        a = rng.random(n) * scale
        with jax.enable_x64(True):
            ours = float(jax.jit(numpy_sum)(jax.numpy.asarray(a)))
        assert ours == float(np.sum(a)), (n, scale)
