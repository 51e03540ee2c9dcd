"""The JAX evaluators agree with the numpy reference: observations, decisions, costs."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import relic_envs

jax = pytest.importorskip("jax")

from baselines.dcop import dsa_team, solve_dsa  # noqa: E402
from baselines.dcop.dsa_jax import dsa_jax_team  # noqa: E402
from relic_envs.dcop import _jax_sweep as js  # noqa: E402
from relic_envs.dcop import jax_eval  # noqa: E402

DCOPS = ["dgc", "dimes", "sensor_dcsp", "shds"]


@pytest.mark.parametrize("name", DCOPS)
def test_dsa_final_assignments_and_costs_match_on_test_split(name):
    instances = relic_envs.splits(name).test_instances()
    result = jax_eval.evaluate(name, dsa_jax_team(), instances)
    reference = solve_dsa(name, instances)
    np.testing.assert_allclose(result.costs, [r.objective for r in reference], rtol=1e-6)
    assert result.valid.all()
    # Identical final assignments: replay the numpy team and compare x.
    bench = relic_envs.get_benchmark(name)
    team = dsa_team()
    for k in (0, 17, 49):
        episode = bench.new_episode(instances[k])
        while not episode.done:
            episode.step({r: team[r](episode.observe(r)) for r in bench.roles})
        np.testing.assert_array_equal(result.x[k], episode.x)


def _jstate(episode):
    ctx = episode.ctx
    local_prev = ctx.prev.local_cost if ctx.prev is not None else np.zeros(ctx.x.size)
    jnp = jax.numpy
    return js.JState(jnp.asarray(ctx.x), jnp.asarray(ctx.x_prev), jnp.asarray(local_prev), jnp.int32(ctx.t), jnp.bool_(True))


@pytest.mark.parametrize("name", DCOPS)
def test_every_observation_matches_the_env(name):
    """All role features, at t = 0 and after a few sweeps, equal the numpy env's."""
    bench = relic_envs.get_benchmark(name)
    module = jax_eval.problem_module(name)
    instance = relic_envs.splits(name).test_instances()[3]
    batch = jax_eval.stack(name, [instance])
    episode = bench.new_episode(instance)
    team = dsa_team(p=0.5)
    with jax.enable_x64(True):
        data = {k: jax.numpy.asarray(v[0]) for k, v in batch.data.items()}
        for t in range(4):
            for role in bench.roles:
                ours = js.observe(module.PROBLEM, data, _jstate(episode), role)
                ref = episode.observe(role)
                assert set(ours) == set(ref)
                for key in ref:
                    np.testing.assert_allclose(np.asarray(ours[key], float), np.asarray(ref[key], float),
                                               rtol=1e-9, atol=1e-9, err_msg=f"{name} t={t} role {role} {key}")
            episode.step({r: team[r](episode.observe(r)) for r in bench.roles})


@settings(max_examples=6, deadline=None)
@given(st.sampled_from(DCOPS), st.integers(0, 2**32 - 1), st.sampled_from([0.3, 0.7, 1.0]))
def test_dsa_parity_on_generated_instances(name, seed, p):
    bench = relic_envs.get_benchmark(name)
    rng = np.random.default_rng(seed)
    regime = bench.regimes()[int(rng.integers(len(bench.regimes())))]
    instances = [bench.generate(regime, rng) for _ in range(2)]
    result = jax_eval.evaluate(name, dsa_jax_team(p), instances)
    reference = solve_dsa(name, instances, p=p)
    np.testing.assert_allclose(result.costs, [r.objective for r in reference], rtol=1e-6)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 21), st.sampled_from([0.0, 0.3, 1.0]))
def test_first_argmin_is_argmin_with_ties_and_infinities(seed, width, blocked):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 4, size=(5, width)).astype(float)  # few levels: many ties
    values[rng.random(values.shape) < blocked] = np.inf  # blocked = 1.0: rows of inf only
    np.testing.assert_array_equal(np.asarray(js.first_argmin(js.jnp.asarray(values))), values.argmin(axis=1))


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 49), st.integers(1, 40), st.integers(2, 21))
def test_exploration_by_rows_is_the_full_table_at_those_rows(seed, t, n, width):
    rows = np.random.default_rng(seed).permutation(n)[: max(1, n // 3)].astype(np.int32)
    with js.jax.enable_x64(True):
        full = np.asarray(js.exploration(np.uint32(seed), t, n, width))
        by_rows = np.asarray(js.exploration(np.uint32(seed), t, n, width, rows=js.jnp.asarray(rows)))
        by_columns = np.asarray(js.exploration(np.uint32(seed), t, n, width, rows=js.jnp.asarray(rows), columns=True))
    np.testing.assert_array_equal(by_rows, full[rows])
    np.testing.assert_array_equal(by_columns, full[rows])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 7), st.integers(1, 21), st.sampled_from(["A", "B", "C"]),
       st.sampled_from([0.0, 0.5, 1.0]), st.booleans())
def test_dsa_jax_rule_is_the_numpy_rule(seed, m, d, variant, p, grid):
    """``dsa_decide_jax`` (column by column) decides as ``dsa_decide``: ties, plateaus,
    zero-cost rows, values within the tie tolerance, exploration numbers on the 2**-24
    grid or not."""
    from baselines.dcop.dsa import dsa_decide
    from baselines.dcop.dsa_jax import dsa_decide_jax

    rng = np.random.default_rng(seed)
    delta = rng.integers(0, 3, size=(m, d)).astype(float)  # few levels: many ties
    delta[rng.random((m, d)) < 0.2] += 1e-10  # within the tie tolerance
    cur = rng.integers(0, d, size=m)
    u = rng.random((m, d + 1))
    u = np.floor(u * 2**24) / 2**24 if grid else u
    u[:, :d][rng.random((m, d)) < 0.3] = u[0, 0]  # equal exploration numbers
    expected = dsa_decide(cur, delta, u, p=p, variant=variant)
    with js.jax.enable_x64(True):
        got = dsa_decide_jax(js.jnp.asarray(cur), js.jnp.asarray(delta), js.jnp.asarray(u), p=p, variant=variant)
    np.testing.assert_array_equal(np.asarray(got), expected)


def _same_either_way(name, switch, policies, batch):
    """Run the benchmark's evaluator with the layout flag ``switch`` of its ``JaxProblem``
    on and off; assert the same assignments, validity and costs; return the validity."""
    runs = []
    for on in (True, False):
        problem = type(jax_eval.problem_module(name).PROBLEM)()
        setattr(problem, switch, on)
        runs.append(js.make_evaluator(problem, policies)(batch))
    (costs, valid, x), (costs_off, valid_off, x_off) = runs
    np.testing.assert_array_equal(x, x_off)
    np.testing.assert_array_equal(valid, valid_off)
    np.testing.assert_array_equal(costs, costs_off)
    return valid


@pytest.mark.parametrize("name", [n for n in DCOPS if jax_eval.problem_module(n).PROBLEM.columns])
def test_column_layout_decides_as_the_row_layout(name):
    """``JaxProblem.columns`` changes how XLA lays the work out, not the decisions: the same
    assignments, validity and costs with it off, also for a role whose answers leave the
    domain (the tagged write of ``_write_tagged``)."""
    batch = jax_eval.stack(name, relic_envs.splits(name).test_instances()[:4])
    team = dsa_jax_team()
    broken = dict(team, B=lambda obs: js.jnp.where(obs["cur"] % 2 == 0, obs["cur"] + 50, -1 - obs["cur"]))
    for policies in (team, broken):
        valid = _same_either_way(name, "columns", policies, batch)
        assert valid.all() == (policies is team)


@pytest.mark.parametrize("name", [n for n in DCOPS if jax_eval.problem_module(n).PROBLEM.contiguous])
def test_contiguous_roles_decide_as_the_owned_indices(name):
    """``JaxProblem.contiguous`` renumbers the variables inside the evaluator, not the
    decisions: the same final assignments (in the original numbering), validity and
    costs as with the roles' index arrays, for DSA, the seed team (whose features read
    the renumbered peer lists) and a role whose answers leave the domain."""
    from relic_envs.dcop.jax_seeds import seed_jax_team

    instances = relic_envs.splits(name).test_instances()[:4]
    batch = jax_eval.stack(name, instances)
    team = dsa_jax_team()
    broken = dict(team, A=lambda obs: js.jnp.where(obs["cur"] == 1, obs["cur"] + 50, obs["cur"]))
    for policies in (team, seed_jax_team(name), broken):
        valid = _same_either_way(name, "contiguous", policies, batch)
        assert valid.all() == (policies is not broken)
    assert not np.array_equal(batch.data["owned_A"][0], np.arange(batch.data["owned_A"].shape[1]))  # a real renumbering


def test_contiguous_roles_need_the_problem_to_relabel_its_arrays():
    class Unrelabelled(type(jax_eval.problem_module("dimes").PROBLEM)):
        contiguous = True

    batch = jax_eval.stack("dimes", relic_envs.splits("dimes").test_instances()[:2])
    with pytest.raises(NotImplementedError, match="relabel"):
        js.make_evaluator(Unrelabelled(), dsa_jax_team())(batch)


@pytest.mark.parametrize("seed", range(3))
def test_contiguous_roles_put_each_role_in_its_own_rows(seed):
    """``contiguous_roles``: row i is variable order[i]; A's rows come first, then B's, then
    C's, each in the original order; the edges and peers name the same variables."""
    instance = relic_envs.splits("dgc").test_instances()[seed]
    problem = jax_eval.problem_module("dgc").PROBLEM
    data = {k: v[0] for k, v in jax_eval.stack("dgc", [instance]).data.items()}
    with js.jax.enable_x64(True):
        new = {k: np.asarray(v) for k, v in js.contiguous_roles(problem, data).items()}
    order = new["order"]
    np.testing.assert_array_equal(order, np.concatenate([np.flatnonzero(instance.owner == r) for r in range(3)]))
    np.testing.assert_array_equal(new["x0"], np.asarray(instance.x0)[order])
    np.testing.assert_array_equal(order[new["src"]], instance.edges[:, 0])
    np.testing.assert_array_equal(order[new["dst"]], instance.edges[:, 1])
    np.testing.assert_array_equal(order[new["peer_src"]], data["peer_src"])
    start = 0
    for r, role in enumerate("ABC"):
        rows = js.role_rows(new, role)
        np.testing.assert_array_equal(order[rows], np.flatnonzero(instance.owner == r))
        start += len(order[rows])
    assert start == order.size


@pytest.mark.parametrize("n", [1, 31, 32, 33, 70])
def test_sensor_incompatibility_bit_rows_hold_the_matrix(n):
    from relic_envs.dcop.sensor_dcsp.jax_eval import bit_rows

    matrix = np.random.default_rng(n).random((n, n)) < 0.3
    words = bit_rows(matrix)
    assert words.shape == (n, -(-n // 32)) and words.dtype == np.uint32
    bits = (words[:, :, None] >> np.arange(32, dtype=np.uint32)) & 1
    np.testing.assert_array_equal(bits.reshape(n, -1)[:, :n].astype(bool), matrix)
    assert not bits.reshape(n, -1)[:, n:].any()


@pytest.mark.parametrize("name", DCOPS)
def test_blocked_batch_makes_the_same_decisions(name):
    """A batch run block after block (``JaxProblem.block``) decides as the whole batch does."""
    problem = type(jax_eval.problem_module(name).PROBLEM)()
    batch = jax_eval.stack(name, relic_envs.splits(name).test_instances()[:6])
    problem.block = None
    whole = js.make_evaluator(problem, dsa_jax_team())(batch)
    problem.block = 2  # three blocks
    blocked = js.make_evaluator(problem, dsa_jax_team())(batch)
    np.testing.assert_array_equal(blocked[2], whole[2])
    np.testing.assert_array_equal(blocked[1], whole[1])
    np.testing.assert_allclose(blocked[0], whole[0], rtol=1e-12)


def test_out_of_domain_jax_policy_is_flagged_invalid():
    team = dsa_jax_team()
    team["B"] = lambda obs: obs["cur"] + 7
    result = jax_eval.evaluate("dgc", team, relic_envs.splits("dgc").test_instances()[:2])
    assert not result.valid.any()


def test_wrong_shape_jax_policy_is_rejected_at_trace_time():
    team = dsa_jax_team()
    team["C"] = lambda obs: obs["cur"][:-1]
    with pytest.raises(relic_envs.errors.InvalidReturn, match="shape"):
        jax_eval.evaluate("dgc", team, relic_envs.splits("dgc").test_instances()[:1])


def test_compiles_once_per_batch_shape():
    run = jax_eval.evaluator("dgc", dsa_jax_team())
    batch = jax_eval.stack("dgc", relic_envs.splits("dgc").test_instances()[:4])
    run(batch)
    run(batch)
    assert run.jitted._cache_size() == 1


def test_relic_envs_imports_without_jax_and_says_what_to_install():
    code = (
        "import sys; sys.modules['jax'] = None\n"
        "import relic_envs\n"
        "env = relic_envs.make('dgc')\n"
        "try:\n    from relic_envs.dcop import jax_eval\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install 'relic-envs[jax]'" in out


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 600), st.integers(1, 6), st.sampled_from([5, 10, 20]))
@example(seed=0, n=600, meetings=1, words=5)  # one slot of one meeting past 255: 16-bit fields
def test_dimes_packed_slot_counts_are_the_counts(seed, n, meetings, words):
    """DiMES's slot counts packed into 32-bit words (8-, 16- or 32-bit fields) unpack to
    ``_counts``, also for meetings of more than 255 attendances (wider fields)."""
    from relic_envs.dcop.dimes.jax_eval import PROBLEM, D, _count_words

    rng = np.random.default_rng(seed)
    meeting = rng.integers(0, meetings, n).astype(np.int32)
    words = max(words, _count_words(int(np.bincount(meeting).max())))
    x = rng.integers(0, D, n).astype(np.int32)
    x[: n // 2] = 0  # a crowded slot: its count passes 255 from 510 attendances of one meeting
    data = {"meeting": meeting, "meetings": np.zeros(meetings, np.int8), "count_words": np.zeros(words, np.int8)}
    packed = np.asarray(PROBLEM.sweep_inputs(data, js.jnp.asarray(x)))
    per, bits = -(-D // words), 32 // -(-D // words)
    fields = (packed[:, :, None].astype(np.uint64) >> (bits * np.arange(per, dtype=np.uint64))) & ((1 << bits) - 1)
    np.testing.assert_array_equal(fields.reshape(meetings, -1)[:, :D], np.asarray(PROBLEM._counts(data, js.jnp.asarray(x))))


@pytest.mark.parametrize("n_devices", [120, 300])
def test_shds_load_has_the_numpy_bits(n_devices):
    """SHDS's JAX load adds the devices' powers in the numpy order: equal bit for bit,
    also past one unrolled block of 128 devices."""
    from relic_envs.dcop.shds import generator, simulator
    from relic_envs.dcop.shds.jax_eval import PROBLEM

    rng = np.random.default_rng(n_devices)
    instance = generator.generate(generator.SHDSRegime(1.35, n_devices), rng)
    with js.jax.enable_x64(True):
        data = {k: js.jnp.asarray(v[0]) for k, v in jax_eval.stack("shds", [instance]).data.items()}
        for _ in range(5):
            x = rng.integers(0, simulator.N_STARTS, n_devices)
            np.testing.assert_array_equal(np.asarray(PROBLEM.load(data, js.jnp.asarray(x))), simulator.load(instance, x))
