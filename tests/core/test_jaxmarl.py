"""``relic_envs.jaxmarl``: every benchmark and interface as a JaxMARL ``MultiAgentEnv``.

For each of the fourteen benchmarks and each of its interfaces, one compiled program
plays 4 episodes side by side (``jit`` of ``vmap`` over keys, through JaxMARL's own
``LogWrapper``), one step past the time limit so every env resets itself at least once,
with actions drawn from ``get_avail_actions`` only. The tests read that one rollout:
no drawn action is refused, the auto-reset follows JaxMARL's convention, LogWrapper's
episode return is the sum of the rewards and equals the functional env's return on the
same instance and actions, and the first observation is the flat view's vector of the
numpy env's observation. Skipped without the ``jaxmarl`` extra (except the checks that
need no JaxMARL: the pool, and the error that names the extra).
"""

from __future__ import annotations

import functools
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import relic_envs
import relic_envs.jaxmarl as rj
from relic_envs.core.registry import get_benchmark
from relic_envs.errors import InvalidConfig

CASES = [(name, interface) for name in relic_envs.names() for interface in get_benchmark(name).interfaces]
IDS = [f"{name}-{interface}" for name, interface in CASES]
POOL = 4  # the first training instances: the pool the rollouts draw from
B = 4  # envs side by side
FAST_COMPILE = {"xla_backend_optimization_level": 0}


@pytest.fixture(scope="module")
def jaxmarl():
    pytest.importorskip("jax")
    return pytest.importorskip("jaxmarl")


@functools.cache
def rollout(name: str, interface: str) -> dict:
    """One compiled run of ``B`` envs for ``limit + 2`` steps under LogWrapper, actions drawn from the masks."""
    import jax
    import jax.numpy as jnp
    from jaxmarl.wrappers.baselines import LogWrapper

    env = rj.make(name, interface, instances=rj.pool(name, interface)[:POOL])
    log = LogWrapper(env)
    fenv, steps = env.fenv, int(env._limits.max()) + 2
    pool_params = fenv.params(env.instances)  # the functional env's own params of the pool, for the replay

    def draw(key, avail):  # uniform over the available actions (the last axis: MultiDiscrete draws per variable)
        return jax.random.categorical(key, jnp.where(avail, 0.0, -jnp.inf), axis=-1).astype(jnp.int32)

    def run(key, pool_params):
        key, k0 = jax.random.split(key)
        obs0, state = log.reset(k0)

        def body(carry, _):
            state, key = carry
            key, k_act, k_step = jax.random.split(key, 3)
            avail = env.get_avail_actions(state.env_state)
            actions = {a: draw(k, avail[a]) for k, a in zip(jax.random.split(k_act, env.num_agents), env.agents)}
            obs, new, reward, done, info = log.step(k_step, state, actions)
            out = {"actions": actions, "avail": avail, "reward": reward, "done": done, "info": info,
                   "instance": state.env_state.instance, "next_step": new.env_state.step,
                   "next_instance": new.env_state.instance, "episode_returns": new.episode_returns,
                   "obs_shapes_ok": jnp.array([obs[a].shape == env.observation_space(a).shape for a in env.agents])}
            return (new, key), out

        _, trace = jax.lax.scan(body, (state, key), None, length=steps)

        # The first episode again, on the functional env of the same instance with the same actions (shifted
        # back to the benchmark's ids). After ``done`` its step is the identity with reward 0, so the sum over
        # the whole trace is that episode's return, and its first ``done`` is where the episode ended.
        params = jax.tree.map(lambda a: jnp.asarray(a)[state.env_state.instance], pool_params)
        _, fstate = fenv.reset(k0, params)

        def replay(fstate, actions):
            ours = {a: actions[a] + env._start[a] for a in env.agents}
            _, fstate, reward, done, info = fenv.step(k0, fstate, ours, params)
            return fstate, (reward, done, info["invalid"])

        fstate, (f_reward, f_done, f_invalid) = jax.lax.scan(replay, fstate, trace["actions"])
        functional = {"return": f_reward.sum(), "score": fstate.score, "done": f_done, "invalid": f_invalid}
        return obs0, state.env_state, trace, functional

    keys = jax.random.split(jax.random.key(0), B)
    program = jax.jit(jax.vmap(run, in_axes=(0, None))).lower(keys, pool_params)
    # XLA's backend optimisation level 0 halves the compile time, which is nearly all of this test's time.
    obs0, state0, trace, functional = program.compile(compiler_options=FAST_COMPILE)(keys, pool_params)
    return {"env": env, "obs0": jax.device_get(obs0), "state0": jax.device_get(state0),
            "trace": jax.device_get(trace), "functional": jax.device_get(functional)}


@pytest.mark.parametrize("name,interface", CASES, ids=IDS)
def test_masked_actions_are_never_refused_under_jit_vmap(jaxmarl, name, interface):
    r = rollout(name, interface)
    env, trace = r["env"], r["trace"]
    assert env.agents == ["A", "B", "C"] and env.num_agents == 3
    for a in env.agents:
        avail, action = trace["avail"][a], trace["actions"][a]
        assert avail.any(axis=-1).all(), f"{a}: an empty mask"
        assert np.take_along_axis(avail, action[..., None], axis=-1).all(), f"{a}: a drawn action is not available"
        assert env.action_space(a).contains(action).all()
    assert (trace["info"]["invalid"] == 0).all(), "an available action was refused"
    assert not trace["info"]["truncated"].any(), "a masked episode ran into the time limit"
    assert trace["obs_shapes_ok"].all()


@pytest.mark.parametrize("name,interface", CASES, ids=IDS)
def test_auto_reset_and_log_wrapper_returns(jaxmarl, name, interface):
    trace = rollout(name, interface)["trace"]
    done, reward = trace["done"]["__all__"], trace["reward"]
    assert done.any(axis=1).all(), "every env ends an episode within the time limit"
    for agent in ("A", "B", "C"):
        assert (trace["done"][agent] == done).all() and (reward[agent] == reward["A"]).all()  # one team
    returned = trace["info"]["returned_episode_returns"]
    for b in range(B):
        start, count = 0, 0
        for t in range(done.shape[1]):
            count += 1
            if not done[b, t]:
                assert trace["next_step"][b, t] == count and trace["next_instance"][b, t] == trace["instance"][b, t]
                continue
            # JaxMARL's convention: the done step's rewards, then a fresh episode (step 0) of a pool instance
            assert trace["next_step"][b, t] == 0 and 0 <= trace["next_instance"][b, t] < POOL
            assert (trace["episode_returns"][b, t] == 0).all() and trace["info"]["returned_episode"][b, t].all()
            np.testing.assert_allclose(returned[b, t], reward["A"][b, start:t + 1].sum(), rtol=1e-5, atol=1e-4)
            start, count = t + 1, 0


@pytest.mark.parametrize("name,interface", CASES, ids=IDS)
def test_episode_return_equals_the_functional_envs(jaxmarl, name, interface):
    """Each env's first episode, replayed action by action on the functional env of the same instance."""
    r = rollout(name, interface)
    trace, functional = r["trace"], r["functional"]
    done = trace["done"]["__all__"]
    for b in range(B):
        end = int(np.flatnonzero(done[b])[0])
        assert int(np.flatnonzero(functional["done"][b])[0]) == end, "the functional episode ends where this one does"
        assert (functional["invalid"][b] == 0).all()
        logged = trace["info"]["returned_episode_returns"][b, end]
        assert (logged == logged[0]).all()
        np.testing.assert_allclose(logged[0], functional["return"][b], rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(logged[0], functional["score"][b], rtol=1e-5, atol=1e-4)  # no refusal: the score


@pytest.mark.parametrize("name,interface", CASES, ids=IDS)
def test_observation_is_the_flat_views_vector(jaxmarl, name, interface):
    """The flat view's layout, exactly, of the functional env's ``Dict`` observation; and the numpy env's vector,
    up to the float32 dynamics (sums of float costs round differently in float32 than in numpy's float64)."""
    import jax

    from relic_envs.wrappers import flatten_observations

    r = rollout(name, interface)
    env = r["env"]
    k = int(r["state0"].instance[0])
    flat = flatten_observations(relic_envs.make(name, interface=interface, instances=[env.instances[k]]))
    expected, _ = flat.reset(seed=0)
    for a in env.agents:
        assert env.layout(a) == flat.layout(a)
        got = r["obs0"][a][0]
        assert got.dtype == np.float32 and got.shape == env.observation_space(a).shape
        same_dict = jax.tree.map(lambda x: np.asarray(x[0]), r["state0"].obs[a])
        np.testing.assert_array_equal(got, flat.flatteners[a].flatten(same_dict).astype(np.float32))
        finite = np.isfinite(expected[a])
        assert (np.isfinite(got) == finite).all()
        np.testing.assert_allclose(got[finite], expected[a][finite], rtol=1e-4, atol=1e-3)
        back = env.unflatten(a, got)  # the Dict again (float32 values)
        jax.tree.map(lambda x, y: np.testing.assert_array_equal(np.asarray(x, float), np.asarray(y, float)), back,
                     jax.tree.map(lambda v: np.asarray(v, np.float32), same_dict))


def jax_tree_index(tree, k):
    import jax

    return jax.tree.map(lambda x: x[k], tree)


def test_avail_actions_follow_the_action_spaces(jaxmarl):
    """MAPP: node ids; MAS and CO: index 0 is the idle/skip answer -1; DCOP: MultiDiscrete, every value available."""
    from jaxmarl.environments import spaces

    for name, interface in (("mapp_pc", "paper"), ("mas_jd", "alt"), ("fjagv", "paper"), ("sensor_dcsp", "paper")):
        r = rollout(name, interface)
        env, state0 = r["env"], r["state0"]
        bench, instance = get_benchmark(name), env.instances[0]
        for a in env.agents:
            ours = bench.action_space(a, instance, interface)
            space = env.action_space(a)
            if bench.family == "dcop":
                assert isinstance(space, spaces.MultiDiscrete) and space.shape == ours.shape
                assert r["trace"]["avail"][a].all()
            else:
                assert isinstance(space, spaces.Discrete) and space.n == ours.n
                assert env._start[a] == ours.start == (0 if bench.family == "mapp" else -1)
                mask = np.asarray(state0.obs[a]["action_mask"][0], bool)
                assert (np.asarray(env.get_avail_actions(jax_tree_index(state0, 0))[a]) == mask).all()


def test_ct_rollout_manager_runs_over_the_env(jaxmarl):
    """JaxMARL's Q-learning rollout manager (padding, agent ids, global state) over one benchmark."""
    import jax
    import jax.numpy as jnp
    from jaxmarl.wrappers.baselines import CTRolloutManager

    env = rj.make("mas_jd", instances=rj.pool("mas_jd")[:POOL])
    manager = CTRolloutManager(env, batch_size=3)
    obs, state = manager.batch_reset(jax.random.key(0))
    width = max(env.observation_space(a).shape[0] for a in env.agents) + env.num_agents
    assert all(obs[a].shape == (3, width) for a in env.agents)
    avail = jax.vmap(env.get_avail_actions)(state)
    actions = {a: jnp.argmax(avail[a], axis=-1) for a in env.agents}  # the first available action
    obs, state, reward, done, info = manager.batch_step(jax.random.key(1), state, actions)
    assert reward["__all__"].shape == (3,) and (info["invalid"] == 0).all()


def test_pool_and_config_errors(jaxmarl):
    small = rj.pool("mapp_pc", instances="test50")[:1]
    with pytest.raises(InvalidConfig, match="one size"):
        rj.make("mapp_pc", instances=rj.pool("mapp_pc")[:1] + small)
    with pytest.raises(InvalidConfig, match="dtype"):
        rj.make("dgc", instances=rj.pool("dgc")[:1], dtype="int32")
    with pytest.raises(InvalidConfig, match="time_limit"):
        rj.make("dgc", instances=rj.pool("dgc")[:1], time_limit=0)
    env = rj.make("dgc", instances=rj.pool("dgc")[:1], time_limit=3)
    assert env.n_instances == 1 and (env._limits == 3).all() and env.name == "relic_dgc"


def test_refused_actions_are_charged_and_the_time_limit_truncates(jaxmarl):
    import jax
    import jax.numpy as jnp

    instance = rj.pool("dgc")[0]
    env = rj.make("dgc", instances=[instance], time_limit=3)
    lo, hi = get_benchmark("dgc").score_bounds(instance)
    step = jax.jit(env.step)
    obs, state = env.reset(jax.random.key(0))
    hold = {a: jnp.asarray(state.obs[a]["cur"], jnp.int32) for a in env.agents}  # every variable keeps its value
    out_of_domain = {**hold, "A": hold["A"].at[0].set(env.action_space("A").num_categories[0])}
    rewards, scores = [], []
    for t, actions in enumerate((out_of_domain, hold, hold)):
        obs, state, reward, done, info = step(jax.random.key(t), state, actions)
        rewards.append(float(reward["A"]))
        scores.append(float(info["score"][0]))
        assert int(info["invalid"][0]) == (1 if t == 0 else 0)
        assert bool(done["__all__"]) == bool(info["truncated"][0]) == (t == 2)
    assert int(state.step) == 0  # reset after the third step
    # A's refused answer holds its values (WAIT) and costs the team hi - lo + 1; the score itself does not move
    np.testing.assert_allclose(rewards[0], scores[0] - (hi - lo + 1), rtol=1e-6)
    assert rewards[1:] == [0.0, 0.0] and scores[1:] == scores[:1] * 2


def test_pool_needs_no_jaxmarl():
    assert len(rj.pool("dgc")) == 50 and len(rj.pool("mapp_pc", instances="test80")) == 20
    assert len(rj.pool("dgc", regime="train1", n_instances=2, seed=3)) == 2
    with pytest.raises(InvalidConfig, match="test regime"):
        rj.pool("dgc", instances="validation")
    with pytest.raises(InvalidConfig, match="alt"):
        rj.pool("dgc", "alt")
    with pytest.raises(InvalidConfig, match="regime"):
        rj.pool("dgc", regime="huge")


def test_missing_extra_names_it():
    script = textwrap.dedent(
        """
        import sys
        sys.modules["jaxmarl"] = None  # as if the extra were not installed
        import relic_envs.jaxmarl as rj
        from relic_envs.errors import MissingExtra
        try:
            rj.make("dgc")
        except MissingExtra as exc:
            assert "relic-envs[jaxmarl]" in str(exc), exc
        else:
            raise AssertionError("make() without jaxmarl must raise MissingExtra")
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
