"""FSTSP: hand-worked sorties, the candidate rules, repair, and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relic_envs
from relic_envs.co.fstsp.generator import FSTSPInstance, FSTSPRegime, generate
from relic_envs.errors import InvalidInstance
from relic_envs.seeds import seed_team

BENCH = relic_envs.get_benchmark("fstsp")
SQRT18 = math.sqrt(0.18)  # l(c1, c2) = sqrt(0.3^2 + 0.3^2) = 0.4242641


def tiny() -> FSTSPInstance:
    """Depot 0 at (.5,.5); customer 1 at (.5,.8) (drone-eligible), 2 at (.8,.5) (truck only)::

        1 (.5,.8)
        |
        0 (.5,.5) -- 2 (.8,.5)

    Drone speed 2, truck speed 1, endurance 0.7.
    """
    return FSTSPInstance(
        depot=np.array([0.5, 0.5]), customers=np.array([[0.5, 0.8], [0.8, 0.5]]), eligible=np.array([True, False]),
        endurance=0.7, drone_speed=2.0, truck_speed=1.0,
    )


def _sortie_to(recovery: int) -> relic_envs.core.benchmark.Episode:
    ep = BENCH.new_episode(tiny())
    kw = BENCH.signatures()["A"].to_kwargs(ep.observe("A"))
    # A: customer 1 only (2 is not eligible); round trip 2*0.3/2 = 0.3, truck detour 2*0.3 = 0.6.
    assert kw["candidate_ids"].tolist() == [1]
    assert kw["drone_roundtrip_times"] == pytest.approx([0.3]) and kw["truck_detours"] == pytest.approx([0.6])
    ep.step({"A": 1})
    kw = BENCH.signatures()["B"].to_kwargs(ep.observe("B"))
    # B: customer 2; meeting there: max(truck 0.3, drone (0.3 + 0.4243)/2 = 0.3621) <= 0.7.
    assert kw["current"] == 0 and kw["drone_customer"] == 1 and kw["candidate_ids"].tolist() == [2]
    assert kw["truck_distances"] == pytest.approx([0.0, 0.3, 0.3])  # indexed by node id
    ep.step({"B": 2})
    kw = BENCH.signatures()["C"].to_kwargs(ep.observe("C"))
    # C: meet at 2, or (no customer left) at the depot: truck 0.3 + 0.3 = 0.6, drone 0.6/2 = 0.3.
    assert kw["candidate_ids"].tolist() == [0, 2]
    assert kw["truck_etas"] == pytest.approx([0.6, 0.3])
    assert kw["drone_etas"] == pytest.approx([0.3, (0.3 + SQRT18) / 2])
    assert kw["endurance"] == 0.7
    ep.step({"C": recovery})
    assert ep.done
    return ep


def test_hand_worked_sortie_meeting_at_the_truck_customer():
    ep = _sortie_to(2)
    # Sortie: max(0.3, 0.3621) = 0.3621; then the truck returns 2 -> 0: +0.3.
    # T = 0.6621320, D = 0.3 + 0.3 = 0.6, C = 0.6621320 + 0.05*0.6 = 0.6921320
    assert ep.objective() == pytest.approx((0.3 + SQRT18) / 2 + 0.3 + 0.05 * 0.6)
    assert ep.info()["sorties"] == 1 and ep.info()["drone_served"] == 1


def test_hand_worked_sortie_meeting_at_the_depot():
    ep = _sortie_to(0)
    # Sortie 0 -> 2 -> 0 for the truck (0.6), 0 -> 1 -> 0 for the drone (0.3): T = 0.6, D = 0.6, C = 0.63
    assert ep.objective() == pytest.approx(0.63)


def test_truck_only_step_and_skip_repair():
    ep = BENCH.new_episode(tiny())
    ep.step({"A": -1})  # no sortie: B must move the truck
    assert ep.check("B", -1).reason == "skip"
    ep.step({"B": -1})  # repaired to the nearest customer (1 and 2 tie at 0.3: the lowest id)
    assert ep.repairs["B"] == 1 and ep.state.epochs == [(0, -1, 1, 1)]
    # At node 1 the drone could serve nothing (2 is not eligible): A is not asked.
    assert ep.acting("B") and not ep.acting("A")
    ep.step({"B": 2})
    # 0 -> 1 -> 2 -> 0 by truck: 0.3 + 0.4243 + 0.3 = 1.0243; C = 1.05 * 1.0243
    assert ep.done and ep.objective() == pytest.approx(1.05 * (0.6 + SQRT18))
    assert ep.info()["repairs"] == {"A": 0, "B": 1, "C": 0}


def test_recovery_repair_takes_the_earliest_rendezvous():
    ep = BENCH.new_episode(tiny())
    ep.step({"A": 1})
    ep.step({"B": 2})
    assert ep.check("C", -1).reason == "skip" and ep.check("C", 1).reason == "infeasible"
    ep.step({"C": 1})  # rendezvous max(eta): depot 0.6, node 2 0.3621 -> node 2
    assert ep.state.epochs == [(0, 1, 2, 2)] and ep.repairs["C"] == 1


def test_bad_instances_are_refused():
    good = tiny().arrays()
    with pytest.raises(InvalidInstance, match="endurance"):
        FSTSPInstance(**{**good, "endurance": -1.0})
    with pytest.raises(InvalidInstance, match="eligible"):
        FSTSPInstance(**{**good, "eligible": np.array([1, 0])})


def test_seed_team_needs_no_repair_and_uses_the_drone():
    team = seed_team("fstsp")
    for inst in relic_envs.splits("fstsp").train[0][:3]:
        ep = BENCH.new_episode(inst)
        while not ep.done:
            role = next(r for r in "ABC" if ep.acting(r))
            ep.step({role: team[role](ep.observe(role))})
        assert ep.repairs == {"A": 0, "B": 0, "C": 0} and ep.info()["sorties"] > 0


def _recompute(inst: FSTSPInstance, epochs) -> tuple[float, list[int]]:
    """C_FSTSP from the epochs alone, checking the synchronisation and endurance rules."""
    xy = np.concatenate([inst.depot[None], inst.customers])
    d = lambda a, b: math.dist(xy[a], xy[b])  # noqa: E731
    t = dist = 0.0
    u, served = 0, []
    for launch, a, b, r in epochs:
        assert launch == u
        truck = [u] + ([b] if b >= 0 and b != r else []) + [r]
        leg = sum(d(x, y) for x, y in zip(truck, truck[1:]))
        span = leg / inst.truck_speed
        if a >= 0:
            assert inst.eligible[a - 1] and 2 * d(u, a) / inst.drone_speed <= inst.endurance + 1e-12
            fly = (d(u, a) + d(a, r)) / inst.drone_speed
            assert max(span, fly) <= inst.endurance + 1e-12
            span = max(span, fly)
            served.append(a)
        served += [v for v in truck[1:] if v != 0 and v not in served]
        t, dist, u = t + span, dist + leg, r
    t += d(u, 0) / inst.truck_speed
    dist += d(u, 0)
    return t + 0.05 * dist, served


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 9), seed=st.integers(0, 2**31 - 1), answers=st.lists(st.integers(-2, 11), min_size=30, max_size=30))
def test_any_answers_serve_everyone_once_costed_as_recomputed(n, seed, answers):
    inst = generate(FSTSPRegime(n), np.random.default_rng(seed))
    ep = BENCH.new_episode(inst)
    lo, hi = BENCH.score_bounds(inst)
    space = BENCH.state_space(inst)
    k = 0
    while not ep.done:
        role = next(r for r in "ABC" if ep.acting(r))
        ep.step({role: answers[k % len(answers)]})
        k += 1
        assert space.contains(ep.state_vector())
    assert k <= BENCH.max_steps(inst)
    cost, served = _recompute(inst, ep.state.epochs)
    assert sorted(served) == list(range(1, n + 1))  # every customer exactly once
    assert ep.objective() == pytest.approx(cost)
    assert lo <= BENCH.score(ep.objective()) <= hi
