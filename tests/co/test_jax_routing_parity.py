"""The HMTSP and FSTSP JAX evaluators agree with the numpy reference: objectives, routes
and sorties, decision counts, and repair counts per role for answers that need repair."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import relic_envs
from relic_envs.seeds import seed_team

jax = pytest.importorskip("jax")

from relic_envs.co import jax_eval  # noqa: E402
from relic_envs.co._jax_decisions import jnp  # noqa: E402
from relic_envs.co.fstsp import jax_eval as fstsp_jax  # noqa: E402
from relic_envs.co.fstsp.generator import FSTSPRegime  # noqa: E402
from relic_envs.co.hmtsp import jax_eval as hmtsp_jax  # noqa: E402
from relic_envs.co.hmtsp.generator import HMTSPRegime  # noqa: E402

ROUTING = ["hmtsp", "fstsp"]
SMALL_N, SMALL_BATCH = 6, 8  # one compiled shape (batch, customers) for every small (hypothesis) batch


# -- a team whose answers often need repair, the same in numpy and JAX ---------------------
def chaos_id(mask, salt, xp):
    """A deterministic answer from the candidate mask: a skip at some candidate counts (all
    HMTSP vehicles alike, so assignments get forced), sometimes the first candidate,
    otherwise an id in ``-2..n`` (out of range, a skip, an infeasible or a feasible id)."""
    n = mask.shape[0]
    m = (mask > 0).astype(xp.int32)
    s = (m * xp.arange(n, dtype=xp.int32)).sum() + salt
    c = m.sum()
    wild = (3 * s + 5 * c) % (n + 3) - 2
    return xp.where(c % 4 == 2, -1, xp.where((s + c) % 3 == 0, xp.argmax(m), wild))


def chaos_team(xp):
    def policy(salt):
        def answer(obs):
            j = chaos_id(obs["candidate_ids"], salt, xp)
            return int(j) if xp is np else j.astype(jnp.int32)

        return answer

    return {"A": policy(1), "B": policy(7), "C": policy(4)}  # salts chosen so every role needs repairs


@functools.cache
def compiled(name, team):
    """One compiled evaluator per benchmark and team, reused across tests (jit caches per shape)."""
    policies = jax_eval.seed_jax_team(name) if team == "seed" else chaos_team(jnp)
    return jax_eval.evaluator(name, policies)


def play_numpy(name, team, instance):
    bench = relic_envs.get_benchmark(name)
    episode = bench.new_episode(instance)
    while not episode.done:
        episode.step({r: team[r](episode.observe(r)) for r in bench.roles})
    return episode


def assert_same(name, team, instances, out):
    reference = relic_envs.rollout(name, team, instances)
    np.testing.assert_allclose(out.objective, [r.objective for r in reference], rtol=1e-12, atol=0)
    np.testing.assert_array_equal(out.steps, [r.steps for r in reference])
    np.testing.assert_array_equal(out.repairs, [[r.info["repairs"][k] for k in "ABC"] for r in reference])
    for i, instance in enumerate(instances):
        state = play_numpy(name, team, instance).state
        if name == "hmtsp":
            assert hmtsp_jax.routes(out.solution["vehicle"][i], out.solution["position"][i]) == state.routes
            assert out.solution["forced"][i] == state.forced
        else:
            assert fstsp_jax.epochs(out.solution, i) == state.epochs
            np.testing.assert_array_equal(out.solution["served_by"][i], state.served_by)
            np.testing.assert_array_equal(out.solution["served_at"][i], state.served_at)


@pytest.mark.parametrize("name", ROUTING)
def test_seed_team_matches_numpy_on_test100(name):
    instances = relic_envs.splits(name).test["test100"][:3]
    out = compiled(name, "seed")(jax_eval.stack(name, instances))
    assert (out.steps >= 100).all() and not out.repairs.any()  # the seeds answer validly
    assert_same(name, seed_team(name), instances, out)


@pytest.mark.slow
@pytest.mark.parametrize("name", ROUTING)
def test_seed_team_matches_numpy_on_test200(name):
    instances = relic_envs.splits(name).test["test200"][:2]
    out = compiled(name, "seed")(jax_eval.stack(name, instances))
    assert_same(name, seed_team(name), instances, out)


def small_instance(name, seed, lattice):
    """A generator instance with ``SMALL_N`` customers; ``lattice`` snaps every node to a 3x3
    lattice so costs tie exactly (tie-breaking must agree) and nodes coincide."""
    rng = np.random.default_rng(seed)
    bench = relic_envs.get_benchmark(name)
    regime = HMTSPRegime(SMALL_N) if name == "hmtsp" else FSTSPRegime(SMALL_N)
    inst = bench.problem.generate(regime, rng)
    if not lattice:
        return inst
    snap = rng.integers(0, 3, (SMALL_N + 3, 2)) / 2.0
    if name == "hmtsp":
        return dataclasses.replace(inst, customers=snap[:SMALL_N], depots=snap[SMALL_N:])
    return dataclasses.replace(inst, customers=snap[:SMALL_N], depot=snap[SMALL_N])


@pytest.mark.parametrize("name", ROUTING)
def test_repairs_fallbacks_and_skips_match_numpy(name):
    instances = [small_instance(name, seed, lattice=seed % 2 == 1) for seed in range(SMALL_BATCH)]
    out = compiled(name, "chaos")(jax_eval.stack(name, instances))
    assert (out.repairs.sum(axis=0) > 0).all() and out.repairs.sum() > 10  # every role needs repairs, often
    counter = "forced" if name == "hmtsp" else "sorties"
    assert out.solution[counter].sum() > 0  # forced assignments (HMTSP), sorties (FSTSP) happen
    assert_same(name, chaos_team(np), instances, out)


SMALL = dict(name=st.sampled_from(ROUTING), seed=st.integers(0, 2**31 - 1), lattice=st.booleans())


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**SMALL, team=st.just("chaos"))  # the compiled shape of the test above: no compile of its own
def test_small_instances_with_repairs_match_numpy(name, seed, lattice, team):
    check_small(name, seed, lattice, team)


@pytest.mark.slow
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**SMALL, team=st.just("seed"))  # two more compiles (the seeds at SMALL_N)
def test_small_instances_with_seeds_match_numpy(name, seed, lattice, team):
    check_small(name, seed, lattice, team)


def check_small(name, seed, lattice, team):
    instances = [small_instance(name, seed + i, lattice) for i in range(SMALL_BATCH)]
    out = compiled(name, team)(jax_eval.stack(name, instances))
    assert_same(name, seed_team(name) if team == "seed" else chaos_team(np), instances, out)


def test_dispatcher_names_what_is_missing(monkeypatch):
    with pytest.raises(NotImplementedError, match="mapp_pc"):
        jax_eval.module("mapp_pc")
    monkeypatch.setitem(jax_eval._MODULES, "later", "relic_envs.co.later.jax_eval")
    with pytest.raises(NotImplementedError, match="relic_envs.co.later.jax_eval"):
        jax_eval.stack("later", [])
    assert set(jax_eval.seed_jax_team("fstsp")) == {"A", "B", "C"}


# -- the batched loop against the per-instance loop, bit for bit ------------------------
@pytest.mark.parametrize("bound", [5, None])
@pytest.mark.parametrize("team", ["seed", "chaos"])
@pytest.mark.parametrize("name", ROUTING)
def test_batched_loop_equals_per_instance_loop(name, team, bound):
    """``_jax_decisions.rollout_batch`` (one loop over the batch in rounds, repairs behind
    a batch-level cond) against ``vmap(rollout_one)``: equal objectives, counts and
    solutions, also where the decision bound stops constructions early (FSTSP's instances
    also finish at different decisions)."""
    from relic_envs.co import _jax_decisions as jd

    policies = jax_eval.seed_jax_team(name) if team == "seed" else chaos_team(jnp)
    problem = (hmtsp_jax if name == "hmtsp" else fstsp_jax).PROBLEM
    data = jax_eval.stack(name, [small_instance(name, seed, lattice=seed % 2 == 1) for seed in range(SMALL_BATCH)]).data
    with jax.enable_x64(True):
        cap = bound or problem.max_decisions(jd._first(data))
        batched = jax.jit(lambda d: jd.rollout_batch(problem, policies, d, cap))(data)
        alone = jax.jit(jax.vmap(lambda d: jd.rollout_one(problem, policies, d, cap)))(data)
    if name == "fstsp" and not bound:  # HMTSP takes the same number of decisions on every instance of a size
        assert len(set(np.asarray(alone.steps).tolist())) > 1, "the instances should finish at different decisions"
    for got, want in zip(jax.tree.leaves(batched), jax.tree.leaves(alone)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
