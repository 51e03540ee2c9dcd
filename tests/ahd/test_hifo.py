"""HiFo-ind.'s hindsight and foresight rules: the insight pool, its credit, the navigator; re-scores and ties."""

from __future__ import annotations

import dataclasses
import types

import numpy as np

from baselines.ahd import SearchConfig
from baselines.ahd._search import Candidate, Offer
from baselines.ahd.hifo import POOL, HiFoInd, HiFoState, InsightPool, Navigator, effectiveness


def test_pool_drops_near_duplicates_picks_adaptively_and_evicts_mature_weak_insights():
    pool = InsightPool()
    assert pool.add("prefer options that keep later choices open")
    assert not pool.add("prefer options that keep later choices open now")  # overlap 6/7 > 0.7
    assert pool.add("serve the most urgent request first")
    pool.insights[1].effectiveness = 0.9
    assert [i.text for i in pool.pick(k=1)] == ["serve the most urgent request first"]
    pool.credit(["serve the most urgent request first"], -1.0)
    assert np.isclose(pool.insights[1].effectiveness, 0.7 * 0.9 - 0.3)
    for k in range(POOL - 2):
        pool.add(f"distinct principle {k} " + " ".join(f"w{k}_{j}" for j in range(6)))
    assert len(pool.insights) == POOL
    for i in pool.insights:
        i.uses = 3
    pool.insights[5].effectiveness = -0.9
    victim = pool.insights[5].text
    pool.add("a brand new principle about spreading work across idle agents")
    assert len(pool.insights) == POOL and victim not in [i.text for i in pool.insights]


def test_effectiveness_ranks_an_offspring_in_its_population():
    pop = [1.0, 2.0, 3.0]
    assert effectiveness(3.5, pop) == 1.0  # above the best: 0.8 + 0.2 * 1.25, clipped
    assert np.isclose(effectiveness(2.5, pop), 0.2 + 0.6 * 0.75)
    assert np.isclose(effectiveness(1.0, pop), -0.3)
    assert effectiveness(None, pop) == -0.5 and effectiveness(2.0, [2.0, 2.0]) == 0.1


def test_navigator_explores_after_stagnation_and_exploits_after_improvements():
    nav, rng = Navigator(), np.random.default_rng(0)
    for _ in range(3):
        nav.record(1.0, 1.0 + 1e-5)  # the reference's threshold: a gain of at most 1e-4 is stagnation
    assert nav.guide(diversity=1.0, rng=rng)[0] == "exploration"  # three generations without improvement
    nav.record(1.0, 2.0)
    nav.record(2.0, 3.0)
    assert nav.guide(diversity=1.0, rng=rng)[0] == "exploitation"  # two improving generations
    assert Navigator().guide(diversity=0.1, rng=rng)[0] == "exploration"  # low diversity
    nav.record(float("-inf"), float("-inf"))  # every program fails in the current team: no progress
    assert (nav.stagnation, nav.improvement) == (1, 0)


@dataclasses.dataclass
class _Result:
    ok: bool
    mean_score: float
    mean_objective: float
    status: object = None
    results: tuple = ()


class TableEvaluator:
    """Role A's program decides the team score (a table, 0 for a program not in it), plus an offset the test moves
    as a new batch or a new teammate would move every score at once."""

    def __init__(self):
        self.scores: dict[str, float] = {}
        self.offset = 0.0

    def evaluate(self, team, batch):
        score = self.scores.get(team["A"], 0.0) + self.offset
        return _Result(True, score, score)

    def evaluate_many(self, teams, batch):
        return [self.evaluate(t, batch) for t in teams]

    def close(self):
        pass


def _hifo(tmp_path, evaluator) -> HiFoInd:
    search = HiFoInd(SearchConfig(method="hifo", env="mapp_pc", batches=3, proposals=3, seed=0), tmp_path / "run",
                     evaluator=evaluator)
    search.step()  # batch 1 starts: every role's seed is its incumbent and its population
    return search


def _child(search, evaluator, source: str, base: float):
    evaluator.scores[source] = base
    return search.new_candidate("A", source, f"idea {source}", base + evaluator.offset, "e1")


def test_a_rescore_is_not_progress_for_the_navigator(tmp_path):
    """Issue 55: re-scoring the retained programs moves every score; the navigator must read only what offspring did."""
    ev = TableEvaluator()
    search = _hifo(tmp_path, ev)
    nav, rng = search.state.roles["A"].navigator, np.random.default_rng(0)
    search.state.h = 0
    offer = search.prompt("A", 0, rng)
    search.accept("A", offer, _child(search, ev, "worse", -1.0), rng)  # below the seed: a stagnant generation
    ev.offset = 10.0  # an easier batch (or a better teammate): every program scores 10 more
    search._rescore("A", search.batch(), reason="team_changed")
    search.state.h = 1
    offer = search.prompt("A", 1, rng)
    assert (nav.stagnation, nav.improvement) == (1, 0)  # not an improving generation
    search.accept("A", offer, _child(search, ev, "better", 10.0), rng)  # 20 > 10: an improving generation
    ev.offset = 0.0  # a harder batch: every program scores 10 less
    search._rescore("A", search.batch(), reason="team_changed")
    search.state.h = 2
    search.prompt("A", 2, rng)
    assert (nav.stagnation, nav.improvement) == (0, 1)  # not a stagnant one


def test_a_tie_at_batch_start_keeps_the_incumbent_as_relic_does(tmp_path):
    """RELIC's _revalidate lists the incumbent first and keeps the first of the best; the seed must not win a tie."""
    ev = TableEvaluator()
    search = _hifo(tmp_path, ev)
    s, rng = search.state, np.random.default_rng(0)
    child = _child(search, ev, "new incumbent", 5.0)
    s.incumbent["A"], s.incumbent_score = child, 5.0  # an improving proposal, as _propose records it
    search.accept("A", Offer([], "e1"), child, rng)
    for b in (2, 3):
        ev.scores["new incumbent"] = 0.0  # on the new batch it scores what the seed does
        s.b = b
        search._rescore("A", search.batch())
        assert s.incumbent["A"].id == child.id and s.incumbent["A"].score == 0.0, b
    # EoH's survival keeps the older of a tie, so the population holds the seed; the incumbent is still scored
    assert [c.id for c in s.roles["A"].population.members] == [0]


def test_a_failed_offspring_credits_no_insight_as_in_the_reference():
    st = HiFoState()
    st.pool.add("serve the most urgent request first")
    st.population.members = [Candidate(0, "src0", "t0", 1.0, 1), Candidate(1, "src1", "t1", 3.0, 1)]
    st.shown[4] = ["serve the most urgent request first"]
    fake = types.SimpleNamespace(state=types.SimpleNamespace(roles={"A": st}, h=4))
    HiFoInd.accept(fake, "A", Offer([], "e1"), None, np.random.default_rng(0))
    assert st.pool.insights[0].effectiveness == 0.0 and 4 not in st.shown  # no -0.5: the reference credits nothing
    st.shown[5] = ["serve the most urgent request first"]
    fake.state.h = 5
    HiFoInd.accept(fake, "A", Offer([], "e2"), Candidate(2, "src2", "t2", 5.0, 1), np.random.default_rng(0))
    assert np.isclose(st.pool.insights[0].effectiveness, 0.3 * 1.0)  # a valid one above the best: 0.8 + 0.2 * 2, clipped
