"""FJAGV: a hand-worked schedule with transports, repair, the event rules, and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relic_envs
from relic_envs.co.fjagv.generator import FJAGVInstance, FJAGVRegime, generate
from relic_envs.errors import InvalidInstance
from relic_envs.seeds import seed_team

BENCH = relic_envs.get_benchmark("fjagv")
SIG = BENCH.signatures()


def tiny(n_agvs: int = 1) -> FJAGVInstance:
    """Two jobs of two operations, two machines, one AGV; travel = 5 x distance::

        m1 (.6,.8)          depot -> m0: 3,  depot -> m1: 5,  m0 -> m1: 4
          |
        depot (0,0) ---- m0 (.6,0)

        job 0 (due 10, weight 2): op 0 on m0 (5), op 1 on m1 (2)
        job 1 (due 20, weight 1): op 2 on m0 (4) or m1 (3), op 3 on m0 (6)
    """
    proc = np.array([[[5, 0], [0, 2]], [[4, 3], [6, 0]]])
    return FJAGVInstance(
        proc=proc, due=np.array([10.0, 20.0]), weight=np.array([2, 1]),
        locations=np.array([[0.0, 0.0], [0.6, 0.0], [0.6, 0.8]]), n_agvs=n_agvs,
    )


def _kw(ep, role):
    return SIG[role].to_kwargs(ep.observe(role))


def _play(ep, answers):
    for role, answer in answers:
        assert ep.acting(role), (role, ep.decision)
        ep.step({role: answer})


def test_hand_worked_schedule():
    ep = BENCH.new_episode(tiny())
    kw = _kw(ep, "A")  # t = 0: first operations are ready, lowest id first
    assert kw["operation_id"] == 0 and kw["machine_ids"].tolist() == [0]
    ep.step({"A": 0})  # request 0: depot -> m0
    kw = _kw(ep, "A")
    # m0 now has op 0 (5) in its backlog: ready at 0 + 5; m1 is free now.
    assert kw["operation_id"] == 2 and kw["machine_ids"].tolist() == [0, 1]
    assert kw["processing_times"].tolist() == [4.0, 3.0] and kw["machine_ready_times"].tolist() == [5.0, 0.0]
    ep.step({"A": 1})  # request 2: depot -> m1
    kw = _kw(ep, "C")
    assert kw["agv_id"] == 0 and kw["request_ids"].tolist() == [0, 2]
    assert kw["travel_times"] == pytest.approx([3.0, 5.0]) and kw["ready_times"].tolist() == [0.0, 0.0]
    ep.step({"C": 0})  # t=0: AGV depot -> m0 (3), delivers op 0 at 3
    kw = _kw(ep, "C")  # t=3: the AGV is at m0; request 2 needs m0 -> depot -> m1 = 3 + 5
    assert kw["request_ids"].tolist() == [2] and kw["travel_times"] == pytest.approx([8.0])
    ep.step({"C": 2})  # delivers op 2 at 11
    kw = _kw(ep, "B")
    assert kw["machine_id"] == 0 and kw["operation_ids"].tolist() == [0] and kw["due_dates"].tolist() == [10.0]
    ep.step({"B": 0})  # op 0 on m0: [3, 8)
    kw = _kw(ep, "A")  # t=8: op 1 ready; m1 holds op 2 (3) not yet started: ready 8 + 3
    assert kw["operation_id"] == 1 and kw["machine_ready_times"].tolist() == [11.0]
    _play(ep, [
        ("A", 1),  # request 1: m0 -> m1; the AGV is busy until 11
        ("C", 1),  # t=11: AGV at m1: m1 -> m0 -> m1 = 4 + 4, delivers op 1 at 19
        ("B", 2),  # op 2 on m1: [11, 14)
        ("A", 0),  # t=14: op 3 -> m0, request m1 -> m0
        ("C", 3),  # t=19: AGV at m1: 0 + 4, delivers op 3 at 23
        ("B", 1),  # op 1 on m1: [19, 21): C_0 = 21
        ("B", 3),  # t=23: op 3 on m0: [23, 29): C_1 = 29
    ])
    assert ep.done and ep.repairs == {"A": 0, "B": 0, "C": 0}
    assert ep.info()["trips"] == 4 and ep.info()["agv_travel"] == pytest.approx(3 + 8 + 8 + 4)
    # C = 29 + 0.2*(2*(21-10) + 1*(29-20)) + 0.02*23 = 29 + 6.2 + 0.46 = 35.66
    assert ep.objective() == pytest.approx(35.66)


def test_same_machine_needs_no_trip():
    """One job, both operations on m0 only: one trip (3), op 1 delivered when op 0 ends."""
    inst = FJAGVInstance(
        proc=np.array([[[5, 0], [2, 0]]]), due=np.array([20.0]), weight=np.array([1]),
        locations=np.array([[0.0, 0.0], [0.6, 0.0], [0.6, 0.8]]), n_agvs=2,
    )
    ep = BENCH.new_episode(inst)
    _play(ep, [("A", 0), ("C", 0), ("B", 0), ("A", 0), ("B", 1)])
    # op 0: [3, 8); op 1: [8, 10); C = 10 + 0 + 0.02*3
    assert ep.done and ep.objective() == pytest.approx(10.06) and ep.info()["trips"] == 1


def test_every_bad_answer_is_repaired_to_the_cheapest_and_counted():
    ep = BENCH.new_episode(tiny())
    assert ep.check("A", -1).reason == "skip" and ep.check("A", 1).reason == "infeasible"
    assert ep.check("A", 2).reason == "range" and ep.check("A", np.int64(0)) is None
    ep.step({"A": 1})  # infeasible -> m0 (the only eligible)
    ep.step({"A": None})  # type -> earliest finish: m0 5 + 4 = 9, m1 0 + 3 = 3 -> m1
    ep.step({"C": 5})  # range (4 operations) -> nearest: request 0 (3)
    assert ep.state.trips[0][1] == 0 and ep.state.machine.tolist()[:3] == [0, -1, 1]
    while not ep.done:
        role = next(r for r in "ABC" if ep.acting(r))
        ep.step({role: RuntimeError("x")})
    info = ep.info()["repairs"]
    assert info["A"] == 4 and info["C"] == 4 and info["B"] == 4  # every decision of this episode was repaired
    assert [why for _, _, why, _, _ in ep.repair_log[:3]] == ["infeasible", "type", "range"]


def test_bad_instances_are_refused():
    good = tiny().arrays()
    with pytest.raises(InvalidInstance, match="eligible"):
        FJAGVInstance(**{**good, "proc": np.array([[[5, 0], [0, 0]], [[4, 3], [6, 0]]])})
    with pytest.raises(InvalidInstance, match="locations"):
        FJAGVInstance(**{**good, "locations": np.zeros((2, 2))})
    with pytest.raises(InvalidInstance, match="n_agvs"):
        FJAGVInstance(**{**good, "n_agvs": 0})


def test_generator_follows_the_paper():
    inst = generate(FJAGVRegime(100), np.random.default_rng(5))
    assert inst.proc.shape == (100, 3, 5) and inst.n_agvs == 2 and inst.locations.shape == (6, 2)
    eligible = (inst.proc > 0).sum(axis=2)
    assert eligible.min() >= 2 and eligible.max() <= 5
    assert inst.proc[inst.proc > 0].min() >= 4 and inst.proc.max() <= 24
    fastest = np.where(inst.proc > 0, inst.proc, 99).min(axis=2).sum(axis=1)
    assert np.all(inst.due >= 1.8 * fastest) and np.all(inst.due <= 3.2 * fastest)
    assert set(inst.weight.tolist()) <= {1, 2, 3, 4, 5}


def test_seed_team_needs_no_repair():
    res = relic_envs.rollout("fjagv", seed_team("fjagv"), relic_envs.splits("fjagv").train[0][:2])
    assert all(r.valid and r.info["repairs"] == {"A": 0, "B": 0, "C": 0} for r in res)


def _recompute(inst: FJAGVInstance, state) -> float:
    """C_FJAGV from the schedule and the trips alone, checking every constraint."""
    k, m = inst.n_ops_per_job, inst.n_machines
    loc = lambda x: inst.locations[x]  # noqa: E731
    tt = lambda a, b: 5 * math.dist(loc(a), loc(b))  # noqa: E731
    machine, start, finish, delivered = state.machine, state.start, state.finish, state.delivered
    for o in range(inst.n_operations):
        p = inst.proc[o // k, o % k, machine[o]]
        assert p > 0 and finish[o] == pytest.approx(start[o] + p)
        assert start[o] >= delivered[o] - 1e-9
        if o % k:
            assert delivered[o] >= finish[o - 1] - 1e-9  # carried only after its predecessor completed
    for mach in range(m):
        spans = sorted((start[o], finish[o]) for o in range(inst.n_operations) if machine[o] == mach)
        assert all(a[1] <= b[0] + 1e-9 for a, b in zip(spans, spans[1:]))
    travel, carried = 0.0, set()
    for g in range(inst.n_agvs):
        at, free = 0, 0.0
        for agv, o, depart, frm, pickup, to, arrive in state.trips:
            if agv != g:
                continue
            src = 0 if o % k == 0 else machine[o - 1] + 1
            assert (frm, pickup, to) == (at, src, machine[o] + 1) and depart >= free - 1e-9
            leg = tt(at, src) + tt(src, to)
            assert arrive == pytest.approx(depart + leg) and delivered[o] == pytest.approx(arrive)
            travel += leg
            at, free = to, arrive
            carried.add(o)
    for o in range(inst.n_operations):
        src = 0 if o % k == 0 else machine[o - 1] + 1
        assert (o in carried) == (src != machine[o] + 1)  # a trip exactly when the material must move
    done = [max(finish[j * k:(j + 1) * k]) for j in range(inst.n_jobs)]
    tardy = sum(w * max(c - d, 0.0) for c, d, w in zip(done, inst.due, inst.weight))
    return max(done) + 0.2 * tardy + 0.02 * travel


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 6), seed=st.integers(0, 2**31 - 1), answers=st.lists(st.integers(-2, 20), min_size=25, max_size=25))
def test_any_answers_give_a_feasible_schedule_costed_as_recomputed(n, seed, answers):
    inst = generate(FJAGVRegime(n), np.random.default_rng(seed))
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
    assert (ep.state.start >= 0).all()
    assert ep.objective() == pytest.approx(_recompute(inst, ep.state))
    assert lo <= BENCH.score(ep.objective()) <= hi
