"""The scheduling JAX evaluators agree with the numpy reference: observations, schedules, objectives, voids."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import relic_envs
from relic_envs.core.benchmark import WAIT
from relic_envs.errors import InvalidConfig, InvalidReturn
from relic_envs.seeds import seed_team

jax = pytest.importorskip("jax")

from relic_envs.mas import _jax_dispatch as jd  # noqa: E402
from relic_envs.mas import jax_eval  # noqa: E402
from relic_envs.mas.jax_seeds import seed_jax_team  # noqa: E402

MASES = ["mas_jd", "mas_st", "mas_fs"]
PER_BATCH = 3  # instances per batch: every test batch has this shape, so each benchmark compiles once per N


@functools.cache
def seed_evaluator(name):
    """One compiled evaluator per benchmark, reused across tests (jit caches per batch shape)."""
    return jax_eval.evaluator(name, seed_jax_team(name))


def play_numpy(name, team, instance):
    """The numpy episode driven as ``relic_envs.rollout`` drives it (busy roles are not called)."""
    bench = relic_envs.get_benchmark(name)
    episode = bench.new_episode(instance)
    while not episode.done:
        episode.step({r: team[r](episode.observe(r)) if episode.acting(r) else WAIT for r in bench.roles})
    return episode


def assert_same_outcome(name, team, instances, out):
    """Validity, void reason and role, steps, objectives and every operation's resource, start and end."""
    reference = relic_envs.rollout(name, team, instances)
    np.testing.assert_array_equal(out.valid, [r.valid for r in reference])
    np.testing.assert_array_equal(out.steps, [r.steps for r in reference])
    reasons = [jd.REASONS[c] or None for c in out.reason]
    assert reasons == [r.invalid.reason if r.invalid else None for r in reference]
    roles = ["ABC"[c] if c >= 0 else None for c in out.void_role]
    assert roles == [r.invalid.role if r.invalid else None for r in reference]
    for i, (instance, ref) in enumerate(zip(instances, reference, strict=True)):
        if not ref.valid:
            assert np.isnan(out.objective[i])
            continue
        np.testing.assert_allclose(out.objective[i], ref.objective, rtol=1e-9, atol=1e-9)
        episode = play_numpy(name, team, instance)
        np.testing.assert_array_equal(out.machine[i], episode.machine, err_msg=f"{name} instance {i}: resources")
        np.testing.assert_array_equal(out.start[i], episode.start, err_msg=f"{name} instance {i}: start times")
        np.testing.assert_array_equal(out.end[i], episode.end, err_msg=f"{name} instance {i}: completion times")
        assert out.collisions[i] == len(episode.collisions)


@pytest.mark.parametrize("name", MASES)
def test_seed_team_schedules_match_numpy_on_test50(name):
    instances = relic_envs.splits(name).test["test50"][:PER_BATCH]
    out = seed_evaluator(name)(jax_eval.stack(name, instances))
    assert out.valid.all() and (out.objective > 0).all()
    assert_same_outcome(name, seed_team(name), instances, out)


def test_a_batch_that_shrinks_as_episodes_end_matches_numpy():
    # MAS-ST quarters its batch as episodes end (shrink_stages): 128 -> 32 -> 8, so
    # instances are gathered into smaller batches and scattered back.
    name = "mas_st"
    assert jax_eval.problem(name).shrink_stages >= 2
    bench, rng = relic_envs.get_benchmark(name), np.random.default_rng(11)
    instances = list(relic_envs.splits(name).test["test50"])[:128]
    instances += [bench.generate("test50", rng) for _ in range(128 - len(instances))]
    out = seed_evaluator(name)(jax_eval.stack(name, instances))
    assert len(set(out.steps.tolist())) > 3  # the lengths differ, so the stages matter
    assert_same_outcome(name, seed_team(name), instances, out)


@pytest.mark.slow
@pytest.mark.parametrize("name", MASES)
def test_seed_team_schedules_match_numpy_on_test80(name):
    instances = relic_envs.splits(name).test["test80"][:PER_BATCH]
    assert_same_outcome(name, seed_team(name), instances, seed_evaluator(name)(jax_eval.stack(name, instances)))


# -- generated instances with exact ties ----------------------------------------------------
def tied_instance(name, seed, grid, spread, zero_skill):
    """A test50-size instance whose times sit on a ``grid`` (releases, completions and epochs tie
    exactly, so pools and tie-breaking must agree) with releases scaled by ``spread`` (crowded or
    sparse); in MAS-ST one worker may lack the skill (``< eps``) for one category (qualification)."""
    bench = relic_envs.get_benchmark(name)
    inst = bench.generate("test50", np.random.default_rng(seed))

    def snap(x, floor=0.0):
        return np.maximum(np.round(np.asarray(x) / grid) * grid, floor)

    release = snap(inst.release * spread)
    if name == "mas_jd":
        return dataclasses.replace(inst, release=release, proc=snap(inst.proc, grid), due=snap(inst.due * spread))
    if name == "mas_fs":
        return dataclasses.replace(inst, release=release, proc=snap(inst.proc, grid))
    skills = inst.skills.copy()
    if zero_skill:
        skills[seed % 3, (seed // 3) % 3] = 0.0
    return dataclasses.replace(inst, release=release, duration=snap(inst.duration, grid),
                               deadline=snap(inst.deadline * spread), skills=skills)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(MASES), st.integers(0, 2**32 - 1), st.sampled_from([0.25, 0.5, 1.0]),
       st.sampled_from([0.0, 0.3, 1.0, 3.0]), st.booleans())
def test_seed_team_parity_on_generated_tied_instances(name, seed, grid, spread, zero_skill):
    instances = [tied_instance(name, seed + i, grid, spread, zero_skill) for i in range(PER_BATCH)]
    assert_same_outcome(name, seed_team(name), instances, seed_evaluator(name)(jax_eval.stack(name, instances)))


# -- voids -------------------------------------------------------------------------------
BAD = {"mas_jd": (6, 7, 5), "mas_st": (1, 2, 4), "mas_fs": (6, 1, 5)}  # (m_A, m_B, mod): some void, some not


def bad_team(name, xp):
    """Deliberately bad answers, one formula for numpy and JAX, keyed on the pool size ``m``
    and its highest job ``last`` (from the action mask), tuned per benchmark (``BAD``) so
    that some instances void and some do not: A answers a job outside its pool when
    ``m == m_A`` and ``last % mod == 0``, B an out-of-range id (N) when ``m == m_B`` and
    ``last % mod == 1``; everyone idles when the pool is one odd job; otherwise the last
    job of the pool (collisions in a shared pool)."""
    m_a, m_b, mod = BAD[name]

    def role(k):
        def policy(obs):
            mask = xp.asarray(obs["action_mask"])[1:] > 0
            n = mask.shape[0]
            m = mask.sum()
            last = xp.max(xp.where(mask, xp.arange(n), -1))
            outside = xp.argmin(mask)  # the first job not in the pool
            out = xp.where((m == 1) & (last % 2 == 1), -1, last)
            a_bad, b_bad = (k == 0) & (m == m_a) & (last % mod == 0), (k == 1) & (m == m_b) & (last % mod == 1)
            out = xp.where(a_bad, outside, xp.where(b_bad, n, out))
            return out.astype(xp.int32) if xp is not np else int(out)

        return policy

    return {r: role(k) for k, r in enumerate("ABC")}


def _fs_fast(names):
    """MAS-FS in the default run, the others ``slow`` (each costs a compile)."""
    return [n if n == "mas_fs" else pytest.param(n, marks=pytest.mark.slow) for n in names]


@pytest.mark.parametrize("name", _fs_fast(MASES))
def test_invalid_answers_void_exactly_where_numpy_voids(name):
    instances = [tied_instance(name, s, 0.5, (0.3, 1.0, 3.0)[s % 3], False) for s in range(PER_BATCH * 3)]
    out = jax_eval.evaluator(name, bad_team(name, jax.numpy))(jax_eval.stack(name, instances))
    assert_same_outcome(name, bad_team(name, np), instances, out)
    reasons = {jd.REASONS[c] for c in out.reason}
    assert {"pool", "range"} <= reasons and out.valid.any()  # the formula exercises the guards, not only voids


@pytest.mark.parametrize("name", _fs_fast(MASES))
def test_an_idle_team_stalls_where_jobs_must_finish(name):
    """Idling forever: MAS-JD/FS void with a stall at the first last-chance epoch; MAS-ST ends with nothing served."""
    instances = [tied_instance(name, s, 0.5, 1.0, False) for s in range(PER_BATCH)]
    idle = {r: (lambda obs: jax.numpy.int32(-1)) for r in "ABC"}
    out = jax_eval.evaluator(name, idle)(jax_eval.stack(name, instances))
    assert_same_outcome(name, {r: (lambda obs: -1) for r in "ABC"}, instances, out)
    assert out.valid.all() if name == "mas_st" else {jd.REASONS[c] for c in out.reason} == {"stall"}


# -- observations ----------------------------------------------------------------------
def jstate(episode):
    """The JAX state of a numpy episode at its current epoch."""
    jnp = jax.numpy
    return jd.DState(
        t=jnp.asarray(episode.t), busy=jnp.asarray(episode.busy), machine=jnp.asarray(episode.machine, jnp.int32),
        start=jnp.asarray(episode.start), end=jnp.asarray(episode.end), load=jnp.asarray(episode.load),
        pools=jnp.asarray(episode._pools), free=jnp.asarray(episode._free), last_chance=jnp.asarray(episode._last_chance),
        designated=jnp.int32(-1 if episode._designated is None else episode._designated), ended=jnp.bool_(False),
        reason=jnp.int32(0), void_role=jnp.int32(-1), steps=jnp.int32(episode.steps), collisions=jnp.int32(0),
    )


def flat(obs, prefix=""):
    out = {}
    for key, value in obs.items():
        if isinstance(value, dict):
            out.update(flat(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = np.asarray(value)
    return out


@pytest.mark.parametrize("interface", ["paper", "alt"])
@pytest.mark.parametrize("name", _fs_fast(MASES))
def test_every_observation_matches_the_env(name, interface):
    """Every key of every role's observation (either interface), over a whole seed-team
    episode, equals the env's; so do the pools, free resources, last-chance flag and
    designated role that ``enter`` derives."""
    bench = relic_envs.get_benchmark(name)
    problem = jax_eval.problem(name)
    instance = tied_instance(name, 7, 0.5, 0.3, True)  # crowded: busy roles, stalls forbidden by the mask
    episode = bench.new_episode(instance, interface)
    paper = bench.new_episode(instance)  # the seed team reads the paper interface: same state, same moves
    team = seed_team(name)
    with jax.enable_x64(True):
        data = {k: jax.numpy.asarray(v[0]) for k, v in jax_eval.stack(name, [instance]).data.items()}
        observe = jax.jit(functools.partial(jd.observe, problem, interface=interface), static_argnums=(2,))
        enter = jax.jit(functools.partial(jd.enter, problem))
        while not episode.done:
            state = jstate(episode)
            blank = state._replace(pools=state.pools & False, free=state.free & False, designated=jax.numpy.int32(-1))
            entered = enter(data, blank)
            for field in ("t", "pools", "free", "last_chance", "designated", "ended"):
                np.testing.assert_array_equal(getattr(entered, field), getattr(state, field), err_msg=field)
            for role in bench.roles:
                ours, ref = flat(observe(data, state, role)), flat(episode.observe(role))
                assert set(ours) == set(ref)
                for key in ref:
                    np.testing.assert_array_equal(ours[key].astype(float), ref[key].astype(float),
                                                  err_msg=f"{name} t={episode.t} role {role} {key}")
            actions = {r: team[r](paper.observe(r)) if paper.acting(r) else WAIT for r in bench.roles}
            episode.step(actions)
            paper.step(actions)
        assert episode.steps > 3


# -- the alternative interface -------------------------------------------------------------
def alt_team(xp):
    """One formula for numpy and JAX on the alt interface's encoded observations."""

    def a(obs):  # the lowest slack (urgency) first
        cand = obs["candidates"]
        col = xp.where(cand["mask"] > 0, cand["value"][:, 0], xp.inf)
        return xp.where((cand["mask"] > 0).any(), xp.argmin(col), -1)

    def b(obs):  # value per finish time, nudged by the contention vector
        mine = obs["my_finish"]
        other = obs["rival_finish"] if "rival_finish" in obs else obs["downstream_wait"]
        nudge = xp.where(xp.isfinite(other), other, 0.0)
        score = xp.where(xp.isfinite(mine), obs["values"] - 0.01 * mine + 0.001 * nudge, -xp.inf)
        return xp.where(xp.isfinite(mine).any(), xp.argmax(score), -1)

    def c(obs):  # the available job with the largest first column, nudged by the team state
        state, table = obs["team_state"], obs["job_table"]
        tilt = 0.001 * (state["backlog"][2] + state["utilisation"][0] + state["coverage"])
        avail = (table["mask"] > 0) & (table["value"][:, -1] > 0)
        return xp.where(avail.any(), xp.argmax(xp.where(avail, table["value"][:, 0] * (1 + tilt), -xp.inf)), -1)

    return {"A": a, "B": b, "C": c}


@pytest.mark.parametrize("name", MASES)
def test_alt_interface_schedules_match_numpy(name):
    instances = relic_envs.splits(name).test["test50"][:PER_BATCH]
    out = jax_eval.evaluate(name, alt_team(jax.numpy), instances, interface="alt")
    reference = relic_envs.rollout(name, alt_team(np), instances, interface="alt")
    np.testing.assert_array_equal(out.valid, [r.valid for r in reference])
    assert out.valid.all()
    np.testing.assert_array_equal(out.steps, [r.steps for r in reference])
    np.testing.assert_allclose(out.objectives, [r.objective for r in reference], rtol=1e-9, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 128), seed=st.integers(0, 2**16), density=st.floats(0.0, 1.0))
def test_masked_numpy_sum_has_numpy_bits(n, seed, density):
    from relic_envs.core.jax_numpy_order import masked_numpy_sum

    rng = np.random.default_rng(seed)
    x = rng.exponential(size=n) * 10.0 ** rng.uniform(-3, 3, n)
    mask = rng.random(n) < density
    with jax.enable_x64(True):
        ours = float(jax.jit(masked_numpy_sum)(jax.numpy.asarray(x), jax.numpy.asarray(mask)))
    assert ours == float(np.sum(x[mask]))


def test_masked_numpy_sum_refuses_what_it_cannot_order():
    from relic_envs.core.jax_numpy_order import masked_numpy_sum

    with pytest.raises(NotImplementedError, match="128"):
        masked_numpy_sum(jax.numpy.zeros(129), jax.numpy.ones(129, bool))


# -- contracts ---------------------------------------------------------------------------
def test_non_integer_or_non_scalar_answers_are_rejected_at_trace_time():
    instances = relic_envs.splits("mas_jd").test["test50"][:1]
    team = seed_jax_team("mas_jd")
    with pytest.raises(InvalidReturn, match="integer"):
        jax_eval.evaluate("mas_jd", {**team, "B": lambda obs: obs["t_now"]}, instances)
    with pytest.raises(InvalidReturn, match="shape"):
        jax_eval.evaluate("mas_jd", {**team, "C": lambda obs: obs["action_mask"].astype(int)}, instances)


def test_bad_batches_interfaces_and_loops_are_named():
    jd_test = relic_envs.splits("mas_jd").test
    with pytest.raises(InvalidConfig, match="one size"):
        jax_eval.stack("mas_jd", [jd_test["test50"][0], jd_test["test80"][0]])
    with pytest.raises(InvalidConfig, match="at least one"):
        jax_eval.stack("mas_jd", [])
    with pytest.raises(NotImplementedError, match="'nope' interface"):
        jax_eval.evaluator("mas_jd", seed_jax_team("mas_jd"), interface="nope")
    with pytest.raises(InvalidConfig, match="missing"):
        jax_eval.evaluator("mas_jd", {"A": seed_jax_team("mas_jd")["A"]})
    with pytest.raises(InvalidConfig, match="loop"):
        jax_eval.evaluator("mas_jd", seed_jax_team("mas_jd"), loop="for")
    with pytest.raises(NotImplementedError, match="available"):
        seed_jax_team("mapp_pc")


def test_compiles_once_per_batch_shape():
    run = seed_evaluator("mas_fs")
    batch = jax_eval.stack("mas_fs", relic_envs.splits("mas_fs").test["test50"][:PER_BATCH])
    run(batch)
    compiled = run.jitted._cache_size()
    run(batch)
    assert compiled >= 1 and run.jitted._cache_size() == compiled
