"""Seed programs: exact paper signatures, valid on the test split, no hidden randomness."""

from __future__ import annotations

import ast

import pytest

import relic_envs
from relic_envs.core.program import check_source
from relic_envs.seeds import seed_path, seed_source, seed_team

DCOPS = ["dgc", "dimes", "sensor_dcsp", "shds"]


@pytest.mark.parametrize("name", DCOPS)
@pytest.mark.parametrize("role", ["A", "B", "C"])
def test_seed_has_the_exact_paper_signature(name, role):
    sig = relic_envs.get_benchmark(name).signatures()[role]
    tree = check_source(seed_source(name, role), sig)
    (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert fn.name == f"select_values_{role}"
    assert [a.arg for a in fn.args.args] == list(sig.param_names)
    assert seed_path(name, role).name == f"{role}.py"


@pytest.mark.parametrize("name", DCOPS)
def test_seed_team_is_valid_and_deterministic(name):
    instances = relic_envs.splits(name).test_instances()[:4]
    first = relic_envs.rollout(name, seed_team(name), instances)
    assert all(r.valid for r in first), [r.invalid for r in first]
    second = relic_envs.rollout(name, seed_team(name), instances)
    assert [r.objective for r in first] == [r.objective for r in second]


def test_signature_parameters_are_the_papers():
    sigs = relic_envs.get_benchmark("sensor_dcsp").signatures()
    assert sigs["B"].header() == (
        "def select_values_B(cur: np.ndarray, delta: np.ndarray, u: np.ndarray, t: int, "
        "candidate_target: np.ndarray, valid_mask: np.ndarray, target_value: np.ndarray, "
        "target_coverage: np.ndarray, target_supply: np.ndarray) -> np.ndarray:"
    )
    shds = relic_envs.get_benchmark("shds").signatures()
    assert shds["C"].param_names == (
        "cur", "delta", "u", "t", "duration", "power", "load_now", "load_change", "capacity"
    )
    dgc = relic_envs.get_benchmark("dgc").signatures()
    assert dgc["C"].param_names == (
        "cur", "delta", "u", "t", "peer_value_hist", "peer_churn_rate", "local_trend"
    )
