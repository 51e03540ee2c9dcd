"""What a newcomer's first mistakes get: a precise error that says what to do (issue 39, small items)."""

from __future__ import annotations

import pytest

import relic_envs
from relic_envs.errors import InvalidConfig
from relic_envs.seeds import seed_team


def test_rollout_without_a_team_says_what_a_team_is():
    with pytest.raises(InvalidConfig, match="team must map each role"):
        relic_envs.rollout("dgc", None, relic_envs.splits("dgc").test_instances()[:1])


def test_rollout_on_a_splits_test_dict_points_to_test_instances():
    with pytest.raises(InvalidConfig, match=r"test_instances\(regime\)"):
        relic_envs.rollout("dgc", seed_team("dgc"), relic_envs.splits("dgc").test)


def test_the_papers_spelling_of_mcts_ahd_is_accepted(tmp_path):
    from relic_learner.cli import main

    out = tmp_path / "run"
    assert main(["learn", "--method", "mcts-ahd", "--env", "dgc", "--batches", "1", "--proposals", "1",
                 "--workers", "1", "--out", str(out), "--quiet"]) == 0
    assert '"method": "mcts_ahd"' in (out / "config.json").read_text()


def test_request_timeout_reaches_the_client(tmp_path, monkeypatch):
    from relic_learner.relic import RelicConfig

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    from relic_learner.stream import run_client

    config = RelicConfig(env="dgc", llm="openai:some-model", base_url="http://127.0.0.1:9", request_timeout_s=7.5)
    client = run_client(config, tmp_path)
    assert client.timeout_s == 7.5
    with pytest.raises(InvalidConfig, match="request_timeout_s"):
        RelicConfig(env="dgc", request_timeout_s=0)


@pytest.mark.parametrize("name", ["dgc", "mapp_pc", "mas_jd", "hmtsp"])
def test_functional_step_names_a_missing_role(name):
    """One benchmark per family: a role left out of ``actions`` is named, not a bare KeyError."""
    import jax

    from relic_envs.core.functional import make
    from relic_envs.errors import InvalidAction

    fenv = make(name)
    regime = next(iter(fenv.benchmark.regimes()))
    instance = fenv.benchmark.generate(regime, __import__("numpy").random.default_rng(0))
    params = jax.tree.map(lambda a: a[0], fenv.params([instance]))
    key = jax.random.key(0)
    obs, state = fenv.reset(key, params)
    with pytest.raises(InvalidAction, match=r"missing \['B'\]") as err:
        fenv.step(key, state, {"A": 0, "C": 0}, params)
    assert err.value.agent is None and err.value.reason == "agent"
    with pytest.raises(InvalidAction, match=r"unknown \['D'\]"):
        fenv.step(key, state, {"A": 0, "B": 0, "C": 0, "D": 0}, params)


def test_co_refusal_names_the_value_once():
    import relic_envs
    from relic_envs.errors import InvalidAction

    env = relic_envs.make("hmtsp", regime="test100", on_invalid="raise")
    env.reset(seed=0)
    with pytest.raises(InvalidAction) as err:
        env.step({a: 5000 for a in env.agents})
    assert str(err.value).count("5000") == 1, str(err.value)


def test_learn_takes_reevos_own_schedule_from_the_command_line(tmp_path):
    import json

    from relic_learner.cli import main

    out = tmp_path / "reevo"
    assert main(["learn", "--env", "dgc", "--method", "reevo", "--schedule", "reference", "--batches", "1",
                 "--proposals", "1", "--workers", "1", "--quiet", "--out", str(out)]) == 0
    assert json.loads((out / "config.json").read_text())["schedule"] == "reference"
    assert main(["learn", "--env", "dgc", "--schedule", "reference", "--out", str(tmp_path / "r")]) == 2


def test_baselines_rl_without_jax_is_one_line_naming_the_extra(monkeypatch, capsys):
    """Issue 55: not a ModuleNotFoundError from deep inside the trainer."""
    import builtins

    real = builtins.__import__

    def no_jax(name, *args, **kwargs):
        if name.split(".")[0] in ("jax", "optax"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real(name, *args, **kwargs)

    from baselines.rl.__main__ import main

    monkeypatch.setattr(builtins, "__import__", no_jax)
    assert main(["train", "dgc", "--out", "unused"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("python -m baselines.rl train: error: 'jax' is needed for this feature; "
                           "install it with pip install 'relic-envs[jax]'")


def test_splits_write_never_rewrites_an_installed_package(monkeypatch, tmp_path, capsys):
    from relic_envs import cli
    from relic_envs.core.splits import DATA_DIR

    before = (DATA_DIR / "dgc" / "test.npz").stat().st_mtime_ns
    monkeypatch.setattr(cli, "_in_checkout", lambda: False)
    assert cli.main(["splits", "--write", "dgc"]) == 2
    assert "--out DIR" in capsys.readouterr().err
    assert cli.main(["splits", "--write", "dgc", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("(same as shipped)") == 6 and "DIFFERS" not in printed
    assert (tmp_path / "dgc" / "test.npz").exists() and (tmp_path / "manifest.json").exists()
    assert (DATA_DIR / "dgc" / "test.npz").stat().st_mtime_ns == before


def test_relic_envs_eval_refuses_an_unknown_split_before_printing(capsys):
    from relic_envs.cli import main

    assert main(["eval", "--env", "mapp_pc", "--split", "test100", "--quiet"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("relic-envs eval: error: unknown --split 'test100' for mapp_pc: use test or test50 or "
                            "test80 or train1 or train2 or train3 or train4 or train5\n")


@pytest.mark.parametrize("spelled, name", [("DGC", "dgc"), ("MAPP-PC", "mapp_pc"), ("Sensor_DCSP", "sensor_dcsp")])
def test_every_env_flag_answers_the_papers_spelling_with_the_name(spelled, name, capsys):
    from baselines.cli import main as baselines_main
    from relic_envs.cli import main as envs_main

    for main in (envs_main, baselines_main):
        with pytest.raises(SystemExit):
            main(["eval", "--env", spelled, "--quiet"])
        assert f"Did you mean {name!r}?" in capsys.readouterr().err
