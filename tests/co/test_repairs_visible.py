"""Issue 55: a repaired answer scores (B.3's semantics), so every place a CO score is shown
also shows the share of each role's answers that the evaluator repaired."""

from __future__ import annotations

import pytest

import relic_envs
from relic_envs.core.rollout import repair_counts, repair_shares, repair_text
from relic_envs.seeds import seed_source

NEVER_VALID_B = '''import numpy as np


def select_next_B(machine_id: int, operation_ids: np.ndarray, processing_times: np.ndarray, due_dates: np.ndarray) -> int:
    """Always an id no decision offers: every answer is repaired."""
    return 10 ** 6
'''


def _team(tmp_path, b_source: str) -> str:
    paths = []
    for role in "ABC":
        path = tmp_path / f"{role}.py"
        path.write_text(b_source if role == "B" else seed_source("fjagv", role))
        paths.append(str(path))
    return ",".join(paths)


@pytest.fixture(scope="module")
def instances():
    return relic_envs.splits("fjagv").train[0][:2]


def test_repair_counts_by_hand(instances):
    from relic_envs.core.program import ProgramPolicy

    team = {r: ProgramPolicy(seed_source("fjagv", r), relic_envs.get_benchmark("fjagv").signatures("paper")[r])
            for r in "AC"}
    team["B"] = ProgramPolicy(NEVER_VALID_B, relic_envs.get_benchmark("fjagv").signatures("paper")["B"])
    results = relic_envs.rollout("fjagv", team, instances)
    counts = repair_counts(results)
    decisions_b = sum(r.info["decisions"]["B"] for r in results)
    assert decisions_b > 0 and counts["B"] == (decisions_b, decisions_b)  # every B answer repaired
    assert counts["A"][0] == 0 and counts["C"][0] == 0
    assert repair_shares(results)["B"] == 1.0
    assert f"B {decisions_b} of {decisions_b} (100.0%)" in repair_text(results)


def test_a_benchmark_that_never_repairs_shows_nothing():
    results = relic_envs.rollout("dgc", relic_envs.seeds.seed_team("dgc"), relic_envs.splits("dgc").train[0][:1])
    assert repair_counts(results) is None and repair_text(results) is None


def test_relic_envs_eval_prints_the_repair_share(tmp_path, capsys):
    from relic_envs.cli import main

    assert main(["eval", "--env", "fjagv", "--team", _team(tmp_path, NEVER_VALID_B), "--split", "train1",
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "answers repaired" in line)
    assert "(100.0%)" in line.split("B ")[1] and "A 0 of" in line and "C 0 of" in line


def test_relic_baselines_eval_prints_the_repair_share(capsys):
    from baselines.cli import main

    assert main(["eval", "--env", "fjagv", "--team", "seeds", "--split", "train1", "--quiet"]) == 0
    assert "answers repaired: A " in capsys.readouterr().out


def test_the_learner_records_the_repair_share_of_every_program_it_keeps(tmp_path, capsys):
    from relic_learner.llm import OfflineClient
    from relic_learner.relic import Relic, RelicConfig

    relic = Relic(RelicConfig(env="fjagv", batches=1, proposals=1, seed=2, workers=1), tmp_path / "run",
                  llm=OfflineClient(seed=2))
    relic.learn()
    kept = [e for e in relic.run.events() if e["kind"] == "proposal" and e["status"] == "ok"]
    assert kept, "the offline run kept no program: pick another seed"
    for event in kept:
        assert set(event["repairs"]) == {"A", "B", "C"} and all(0 <= v <= 1 for v in event["repairs"].values())
    from relic_learner.cli import main

    assert main(["eval", str(tmp_path / "run"), "--split", "test100", "--workers", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "  learned: answers repaired: A " in out and "  seeds: answers repaired: A " in out
    assert main(["show", str(tmp_path / "run")]) == 0
    shown = capsys.readouterr().out
    changed = [r for r in "ABC" if relic.state.incumbent[r] != 0]
    assert all(f"  {r}: node" in shown for r in changed)
    assert shown.count("of its answers repaired when kept") == len(changed)
