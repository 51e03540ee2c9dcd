"""TeamEvaluator: agreement with the reference rollout, statuses, caching, pooling,
mixed batches and Reflect's credit map."""

from __future__ import annotations

import pytest

import relic_envs
from relic_envs.seeds import seed_source, seed_team
from relic_learner.batches import Batch, mixed_batch, stream_batch
from relic_learner.evaluate import TeamEvaluator
from relic_learner.reference import classify_gaps, credit


@pytest.fixture(scope="module")
def splits():
    return relic_envs.splits("dgc")


@pytest.fixture(scope="module")
def team():
    return {r: seed_source("dgc", r) for r in "ABC"}


@pytest.fixture(scope="module")
def evaluator():
    with TeamEvaluator("dgc", workers=2) as ev:
        yield ev


def test_sandboxed_scores_equal_the_reference_rollout(evaluator, team, splits):
    batch = Batch(splits.test_instances()[:5])
    result = evaluator.evaluate(team, batch)
    expected = relic_envs.rollout("dgc", seed_team("dgc"), batch.instances)
    assert result.ok and not result.cached
    assert [r.objective for r in result.results] == [r.objective for r in expected]
    assert result.mean_score == pytest.approx(sum(r.score for r in expected) / 5)
    assert result.calls == {"A": 250, "B": 250, "C": 250}  # 5 instances x 50 sweeps


def test_in_process_mode_agrees(team, splits):
    batch = Batch(splits.test_instances()[:3])
    with TeamEvaluator("dgc", sandbox=False) as plain, TeamEvaluator("dgc", workers=1) as boxed:
        assert plain.evaluate(team, batch).results == boxed.evaluate(team, batch).results


def test_cache_by_sources_and_batch(evaluator, team, splits):
    batch = Batch(splits.test_instances()[5:7])
    first = evaluator.evaluate(team, batch)
    runs = evaluator.evaluations
    again = evaluator.evaluate(dict(team), Batch(tuple(batch.instances)))  # equal content, new objects
    assert again.cached and again.results == first.results and evaluator.evaluations == runs
    other = evaluator.evaluate({**team, "B": team["B"] + "\n"}, batch)
    assert not other.cached and evaluator.evaluations == runs + 1


def test_rejected_text_never_reaches_a_worker(evaluator, team, splits):
    runs = evaluator.evaluations
    result = evaluator.evaluate({**team, "C": "def nope(:\n"}, Batch(splits.test_instances()[:1]))
    assert (result.status.reason, result.status.role) == ("syntax", "C")
    assert result.mean_score is None and evaluator.evaluations == runs


def test_evaluate_many_keeps_order_and_mixes_valid_and_invalid(evaluator, team, splits):
    batch = Batch(splits.test_instances()[7:10])
    bad = {**team, "A": team["A"].replace("return np.where", "return 1.5 * np.where", 1)}
    assert bad["A"] != team["A"]
    results = evaluator.evaluate_many([team, bad, {**team, "B": None}], batch)
    assert results[0].ok and results[2].ok
    assert (results[1].status.reason, results[1].status.role) == ("dtype", "A")


def test_teams_evaluated_together_play_whole_and_score_as_alone(evaluator, team, splits):
    """Several teams at once: each referee plays whole teams (one child per role and one round
    trip per step, instead of two half batches each), and every result is the one alone gives."""
    assert evaluator._chunks(16, teams=1) == [(0, 8), (8, 16)]
    assert evaluator._chunks(16, teams=2) == [(0, 16)]
    assert evaluator._chunks(16, teams=3) == [(0, 16)]
    batch = Batch(splits.test_instances()[10:14])
    teams = [team, {**team, "B": None}, {**team, "C": team["C"] + "\n# another team\n"}]
    together = evaluator.evaluate_many(teams, batch)
    with TeamEvaluator("dgc", workers=2) as fresh:
        alone = [fresh.evaluate(t, batch) for t in teams]  # each split over both workers
    for many, one in zip(together, alone):
        assert many.ok and one.ok and not many.cached and not one.cached
        assert many.results == one.results and many.calls == one.calls


def test_bad_arguments_raise_precise_errors(evaluator, team, splits):
    with pytest.raises(ValueError, match="missing"):
        evaluator.evaluate({"A": team["A"]}, Batch(splits.test_instances()[:1]))
    with pytest.raises(TypeError, match="Batch"):
        evaluator.evaluate(team, list(splits.test_instances()[:1]))
    with pytest.raises(ValueError, match="workers"):
        TeamEvaluator("dgc", workers=0)


def test_mixed_batch_follows_eq3(splits):
    first = mixed_batch(splits.train, 1, seed=7)
    assert first.provenance == stream_batch(splits.train, 1).provenance  # nothing to replay yet
    b4 = mixed_batch(splits.train, 4, seed=7)
    sources = [p[0] for p in b4.provenance]
    assert sources.count(4) == 10 and sources.count(2) == 3 and sources.count(3) == 3 and 1 not in sources
    assert b4.digest == mixed_batch(splits.train, 4, seed=7).digest  # fixed by the run seed
    assert any(mixed_batch(splits.train, 4, seed=s).provenance != b4.provenance for s in range(8, 12))
    for b, i in b4.provenance:
        assert b4.instances[b4.provenance.index((b, i))] is splits.train[b - 1][i]
    with pytest.raises(ValueError, match="batch index"):
        mixed_batch(splits.train, 6, seed=0)


def test_classify_gaps_by_hand():
    # reference scores -200 (tolerance 2) and -50 (tolerance 0.5)
    assert classify_gaps([2.5, 1.9, -0.6, 0.4], [-200.0, -200.0, -50.0, -50.0]) == [
        "dominant", "redundant", "harmful", "redundant",
    ]


def test_credit_compares_with_the_reference_and_hides_raw_scores(evaluator, team, splits):
    batch = mixed_batch(splits.train, 2, seed=0)
    c = credit(evaluator, team, "A", batch)
    full, ref = c.full, c.reference
    assert c.gaps == tuple(f.score - r.score for f, r in zip(full.results, ref.results))
    assert len(c.classes) == len(batch)
    assert "holding your variables" in c.summary
    for kind in ("dominant", "redundant", "harmful"):
        assert f"- {kind}: " in c.summary
    for result in full.results:  # no raw per-instance score appears in the text
        assert f"{result.objective:g}" not in c.summary
    assert "select_values" not in c.summary  # nor any code


def test_a_closed_evaluators_referee_serves_the_next_one_with_the_same_scores(team, splits):
    """Referees are reused across evaluators (no restart); a fresh one and a reused one agree exactly."""
    import os

    from relic_learner import evaluate as ev

    ev.close_spare_referees()
    batch = Batch(tuple(splits.train[0][:3]), label="b")
    with TeamEvaluator(relic_envs.get_benchmark("dgc"), workers=1) as first:
        fresh = [r.objective for r in first.evaluate(team, batch).results]
        (referee,) = first._workers
        pid = referee._process.pid
    assert ev._SPARES == [referee] and referee.alive  # left started for the next evaluator
    child = os.fork()
    if child == 0:  # a forked child forgets the parent's spares without stopping them
        os._exit(0 if ev._SPARES == [] else 1)
    assert os.waitpid(child, 0)[1] == 0
    with TeamEvaluator(relic_envs.get_benchmark("dgc"), workers=1) as second:
        assert second._workers == [referee] and referee._process.pid == pid
        assert second.restarts == 0 and second.isolation == {}
        again = [r.objective for r in second.evaluate(team, batch).results]
    assert again == fresh
    ev.close_spare_referees()
    assert ev._SPARES == [] and not referee.alive


def test_the_episodes_counters_travel_from_the_referee():
    """``RolloutResult.info`` (CO: repairs per role, the benchmark's counters) arrives as the rollout has it."""
    name = "fjagv"
    instances = relic_envs.splits(name).test["test100"][:2] if "test100" in relic_envs.splits(name).test \
        else next(iter(relic_envs.splits(name).test.values()))[:2]
    expected = relic_envs.rollout(name, seed_team(name), instances)
    with TeamEvaluator(name, workers=1) as evaluator:
        got = evaluator.evaluate({r: seed_source(name, r) for r in "ABC"}, Batch(tuple(instances)))
    assert [r.info for r in got.results] == [r.info for r in expected]
    assert got.results[0].info["repairs"] == {"A": 0, "B": 0, "C": 0} and got.results[0].info["trips"] > 0
