"""The FJAGV and MRCPS JAX evaluators agree with the numpy reference: schedules, objectives,
steps and repair counts (seed team, and a policy that answers invalid ids)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import relic_envs
from relic_envs.seeds import seed_team

jax = pytest.importorskip("jax")

from relic_envs.co.fjagv import generator as fjagv_gen  # noqa: E402
from relic_envs.co.fjagv import jax_eval as fjagv_jax  # noqa: E402
from relic_envs.co.mrcps import generator as mrcps_gen  # noqa: E402
from relic_envs.co.mrcps import jax_eval as mrcps_jax  # noqa: E402
from relic_envs.core.benchmark import ROLES  # noqa: E402

MODULES = {"fjagv": fjagv_jax, "mrcps": mrcps_jax}
SCHEDULE = {"fjagv": ("machine", "delivered", "start", "finish", "agv_of"), "mrcps": ("worker", "start", "finish", "span")}
GENERATORS = {"fjagv": fjagv_gen, "mrcps": mrcps_gen}
SMALL = {"fjagv": fjagv_gen.FJAGVRegime(6), "mrcps": mrcps_gen.MRCPSRegime(12)}
PER_SIZE = 2  # canonical test instances per size


@functools.cache
def seed_evaluator(name):
    """One compiled evaluator per benchmark, reused across tests (jit caches per batch shape)."""
    return MODULES[name].evaluator(MODULES[name].seed_policies())


def generated(name, regime, count, seed):
    rng = np.random.default_rng(seed)
    return [GENERATORS[name].generate(regime, rng) for _ in range(count)]


def play_numpy(name, team, instance):
    """The numpy episode driven as ``relic_envs.rollout`` drives it; returns the finished episode."""
    bench = relic_envs.get_benchmark(name)
    episode = bench.new_episode(instance)
    while not episode.done:
        episode.step({r: team[r](episode.observe(r)) for r in bench.roles})
    return episode


def assert_same(name, team, instances, out):
    reference = relic_envs.rollout(name, team, instances)
    assert all(r.valid for r in reference)
    np.testing.assert_allclose(out.objective, [r.objective for r in reference], rtol=1e-12)
    np.testing.assert_array_equal(out.steps, [r.steps for r in reference])
    np.testing.assert_array_equal(out.repairs, [[r.info["repairs"][k] for k in ROLES] for r in reference])
    for i, instance in enumerate(instances):
        state = play_numpy(name, team, instance).state
        for key in SCHEDULE[name]:
            np.testing.assert_array_equal(out.schedule[key][i], getattr(state, key), err_msg=f"{name} {i}: {key}")


@pytest.mark.parametrize("name", sorted(MODULES))
def test_seed_team_matches_numpy_on_test100(name):
    # Canonical instances and freshly generated ones of the same size share one compile.
    instances = list(relic_envs.splits(name).test["test100"][:PER_SIZE])
    instances += generated(name, GENERATORS[name].REGIMES["test100"], 1, seed=7)
    out = seed_evaluator(name)(MODULES[name].stack(instances))
    assert_same(name, seed_team(name), instances, out)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MODULES))
def test_seed_team_matches_numpy_on_test200(name):
    instances = relic_envs.splits(name).test["test200"][:PER_SIZE]
    assert_same(name, seed_team(name), instances, seed_evaluator(name)(MODULES[name].stack(instances)))


# -- a policy that answers invalid ids: repaired to the same fallback, counted alike -----
def _scramble(mask):
    """An id in ``-1..n+1`` from the candidate mask: valid, infeasible, ``-1`` (skip) or out of range."""
    return (mask * np.arange(mask.size)).sum() % (mask.size + 3) - 1


def _scramble_jax(obs):
    mask = obs["action_mask"][1:].astype(jax.numpy.int32)
    return (mask * jax.numpy.arange(mask.size)).sum() % (mask.size + 3) - 1


@pytest.mark.parametrize("name", sorted(MODULES))
def test_invalid_ids_are_repaired_like_numpy(name):
    instances = generated(name, SMALL[name], 3, seed=11)
    run = MODULES[name].evaluator({r: _scramble_jax for r in ROLES})
    out = run(MODULES[name].stack(instances))
    team = {r: (lambda obs: int(_scramble(np.asarray(obs["action_mask"])[1:].astype(np.int64)))) for r in ROLES}
    assert_same(name, team, instances, out)
    assert (out.repairs.sum(axis=0) > 0).all(), "every role must have been repaired at least once"
    assert (out.repairs.sum(axis=1) < out.steps).all(), "and some answers must have been valid"


# -- the batched loop (FJAGV) against the per-instance loop, bit for bit ----------------
@pytest.mark.parametrize("bound", [7, None])
@pytest.mark.parametrize("team", ["seeds", "scramble"])
def test_batched_loop_equals_per_instance_loop(team, bound):
    """``rollout_batch`` (one loop over the batch in free order, repairs behind a batch-level cond, no
    freeze) against ``vmap(rollout_one)``: equal objectives, counts and schedules, also
    where the decision bound stops constructions early (finished and stopped instances
    must both idle). Instances of one size finish at different decisions."""
    from relic_envs.co import _jax_decisions as jd

    policies = fjagv_jax.seed_policies() if team == "seeds" else {r: _scramble_jax for r in ROLES}
    problem = fjagv_jax.PROBLEM
    data = fjagv_jax.stack(generated("fjagv", SMALL["fjagv"], 4, seed=5)).data
    with jax.enable_x64(True):
        cap = bound or problem.max_decisions(jd._first(data))
        batched = jax.jit(lambda d: jd.rollout_batch(problem, policies, d, cap))(data)
        alone = jax.jit(jax.vmap(lambda d: jd.rollout_one(problem, policies, d, cap)))(data)
    steps = np.asarray(alone.steps)
    assert len(set(steps.tolist())) > 1 or bound, "the instances should finish at different decisions"
    for got, want in zip(jax.tree.leaves(batched), jax.tree.leaves(alone)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
