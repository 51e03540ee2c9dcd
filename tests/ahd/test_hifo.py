"""HiFo-ind.'s hindsight and foresight rules: the insight pool, its credit, the navigator."""

from __future__ import annotations

import types

import numpy as np

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
    for best in (1.0, 1.0, 1.0):
        nav.guide(best, diversity=1.0, rng=rng)
    assert nav.guide(1.0, diversity=1.0, rng=rng)[0] == "exploration"  # third generation without improvement
    nav.guide(2.0, diversity=1.0, rng=rng)
    assert nav.guide(3.0, diversity=1.0, rng=rng)[0] == "exploitation"  # two improving generations
    assert Navigator().guide(1.0, diversity=0.1, rng=rng)[0] == "exploration"  # low diversity


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
