"""IPPO/MAPPO in JAX (baselines.rl): checkpoints, PettingZoo parity, and learning on a tiny fixed instance."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("optax")

import relic_envs  # noqa: E402
from baselines.rl import evaluate_checkpoint, load, save  # noqa: E402
from baselines.rl.ppo import Config, Trainer, feature_dims, init_params, training_instances  # noqa: E402
from relic_envs.core.functional import make as make_functional  # noqa: E402


def _untrained(tmp_path, env: str, algo: str = "ippo", seed: int = 3):
    cfg = Config(env=env, algo=algo, seed=seed)
    fenv = make_functional(env)
    inst = training_instances(env, 1, seed)
    dims = feature_dims(cfg.kind, fenv, jax.tree.map(lambda a: a[0], fenv.params(inst)))
    params = init_params(cfg, dims, jax.random.key(seed))
    return save(tmp_path / f"{env}_{algo}", params["actor"], cfg, dims, {"note": "untrained"}), params


def test_checkpoint_round_trip(tmp_path):
    out, params = _untrained(tmp_path, "mapp_pc", "mappo")
    team = load(out)
    assert team.env == "mapp_pc" and team.meta["config"]["algo"] == "mappo"
    a, b = jax.tree_util.tree_leaves(params["actor"]), jax.tree_util.tree_leaves(team.actor_params)
    assert len(a) == len(b) and all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(a, b))
    assert set(team) == {"A", "B", "C"}


@pytest.mark.parametrize("env", [pytest.param("dgc", marks=pytest.mark.slow), "mapp_pc"])
def test_policy_in_pettingzoo_reproduces_functional_score(tmp_path, env):
    """The saved policy played through relic_envs.rollout (the numpy env's episode) scores exactly what
    the functional env gives on the same instance (test size: a network trained at the training size
    runs unchanged on it)."""
    out, _ = _untrained(tmp_path, env)
    team = load(out)
    regime = list(relic_envs.splits(env).test)[-1]
    inst = relic_envs.splits(env).test[regime][0]
    functional = evaluate_checkpoint(team, instances={"one": [inst]})["one"]
    assert functional["complete"] and functional["invalid"] == 0
    (result,) = relic_envs.rollout(env, team, [inst])
    assert result.valid
    assert result.score == pytest.approx(functional["score"], rel=1e-9, abs=1e-9)


CHECKPOINTS = Path(__file__).resolve().parents[2] / "docs" / "images" / "rl" / "checkpoints"


@pytest.mark.parametrize("name", ["mapp_ar_alt_ippo", "mas_st_alt_mappo"])
def test_an_alternative_interface_checkpoint_plays_the_numpy_env_as_it_scored(name):
    """A shipped checkpoint trained on the alternative interface knows its interface: played through
    relic_envs.rollout on that interface it scores what the functional env gives."""
    if not (CHECKPOINTS / name / "config.json").exists():
        pytest.skip("needs the repository's checkpoints")
    team = load(CHECKPOINTS / name)
    assert team.interface == "alt"
    regime = list(relic_envs.splits(team.env).test)[0]
    inst = relic_envs.splits(team.env).test[regime][0]
    functional = evaluate_checkpoint(team, instances={"one": [inst]})["one"]
    assert functional["complete"] and functional["invalid"] == 0
    (result,) = relic_envs.rollout(team.env, team, [inst], interface="alt")
    assert result.valid and result.score == pytest.approx(functional["score"], rel=1e-9, abs=1e-9)


def test_policy_plays_the_pettingzoo_env(tmp_path):
    out, _ = _untrained(tmp_path, "mas_jd")
    team = load(out)
    env = relic_envs.make("mas_jd")
    obs, infos = env.reset(seed=0)
    total = 0.0
    while env.agents:
        actions = {agent: team[agent](obs[agent]) for agent in env.agents}
        obs, rewards, terms, truncs, infos = env.step(actions)
        total += rewards["A"]
    assert np.isfinite(total)


# Compiling the training scan is most of the time: the IPPO case took 85 s on 2 cores
# (668 s on a heavily loaded machine), so it runs by default (slow) and MAPPO, the same
# trainer with a centralised critic, is heavy (`python -m pytest -m heavy tests/rl`).
@pytest.mark.parametrize("algo", [pytest.param("ippo", marks=pytest.mark.slow),
                                  pytest.param("mappo", marks=pytest.mark.heavy)])
def test_trainer_improves_on_a_tiny_fixed_instance(algo):
    """One fixed MAPP-PC training instance (pool = validation = that instance): a few PPO updates lift the
    greedy score clearly above the untrained network's."""
    cfg = Config(env="mapp_pc", algo=algo, total_steps=16 * 16 * 30, n_envs=16, n_steps=16, pool=1, n_val=1,
                 chunk=10, seed=0, lr=3e-3, hidden=32)
    trainer = Trainer(cfg, log=lambda *a: None)
    trainer.val_params = trainer.pool_params  # the same tiny instance
    result = trainer.train()
    assert result["best_val"] > result["init_val"] + 0.1 * abs(result["init_val"]) + 1.0


ALL = ["dgc", "dimes", "sensor_dcsp", "shds", "mapp_pc", "mapp_ar", "mapp_ds",
       "mas_jd", "mas_st", "mas_fs", "hmtsp", "fstsp", "fjagv", "mrcps"]


@pytest.mark.parametrize("env", ALL)
def test_feature_dims_do_not_depend_on_size(env):
    """Every benchmark's features have the same dimensions at the training size and at each test size, so
    a network trained on the training regimes runs unchanged on the held-out test splits."""
    cfg = Config(env=env)
    fenv = make_functional(env)
    first = lambda insts: jax.tree.map(lambda a: a[0], fenv.params(insts))  # noqa: E731
    train = feature_dims(cfg.kind, fenv, first(training_instances(env, 1, 0)))
    for regime, insts in relic_envs.splits(env).test.items():
        assert feature_dims(cfg.kind, fenv, first(insts[:1])) == train, regime


@pytest.mark.parametrize("env", [pytest.param("dimes", marks=pytest.mark.slow), "mapp_ds", "mas_fs",
                                 pytest.param("fjagv", marks=pytest.mark.slow)])
def test_policy_plays_the_pettingzoo_env_other_families(tmp_path, env):
    """An (untrained) checkpoint's team plays a whole PettingZoo episode at a test size with no refused action."""
    out, _ = _untrained(tmp_path, env)
    team = load(out)
    inst = next(iter(relic_envs.splits(env).test.values()))[0]
    (result,) = relic_envs.rollout(env, team, [inst])
    assert result.valid and np.isfinite(result.objective)


def test_auto_micro_batch_sizes_pieces_to_the_cache_and_divides_the_minibatch():
    from baselines.rl.ppo import CPU_PIECE_BYTES, auto_micro_batch

    assert auto_micro_batch(512, 40, 32, backend="gpu") == 512  # off the CPU: the whole minibatch
    m = auto_micro_batch(512, 40, 32, backend="cpu")
    assert 512 % m == 0 and m * 40 * 32 * 4 <= CPU_PIECE_BYTES < 2 * m * 40 * 32 * 4
    assert auto_micro_batch(512, 40 * 20, 32, backend="cpu") == 8  # a DIMES activation: 102 KB per sample
    assert auto_micro_batch(96, 40, 32, backend="cpu") == 32  # the largest power of two dividing 96 that fits
    assert auto_micro_batch(512, 10**6, 32, backend="cpu") == 1


@pytest.mark.parametrize("algo", ["ippo", pytest.param("mappo", marks=pytest.mark.slow)])
def test_micro_batched_update_is_the_whole_minibatch_update(algo):
    """The gradient summed over pieces of a minibatch is the minibatch's gradient: one PPO update (4 epochs
    x 2 minibatches) from the same start lands on the same parameters up to float32 rounding. Plain SGD,
    not Adam, so that a gradient off by a constant factor would show too."""
    import jax.numpy as jnp
    import optax

    out = {}
    for micro in (32, 4):
        cfg = Config(env="mas_jd", algo=algo, n_envs=4, n_steps=16, minibatches=2, pool=4, n_val=1, micro_batch=micro)
        trainer = Trainer(cfg, log=lambda *a: None)
        assert trainer.micro_batch == micro
        trainer.optimizer = optax.sgd(1e-3)
        params = init_params(cfg, trainer.dims, jax.random.key(0))
        run_chunk, init_env_state = trainer.make_update_chunk()
        out[micro] = run_chunk(params, trainer.optimizer.init(params), init_env_state(jax.random.key(1)),
                               jnp.float32(1.0), jax.random.key(2), length=1)[0]
        moved = max(float(jnp.abs(a - b).max()) for a, b in zip(jax.tree.leaves(params), jax.tree.leaves(out[micro])))
        assert moved > 1e-4  # the update did change the parameters
    for a, b in zip(jax.tree.leaves(out[32]), jax.tree.leaves(out[4])):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-6)


def test_a_micro_batch_that_does_not_divide_the_minibatch_is_refused():
    with pytest.raises(ValueError, match="does not divide"):
        Trainer(Config(env="mas_jd", n_envs=4, n_steps=16, minibatches=2, pool=2, n_val=1, micro_batch=5),
                log=lambda *a: None)
