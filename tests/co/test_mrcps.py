"""MRCPS: a hand-worked schedule, repair, the event rules, and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relic_envs
from relic_envs.co.mrcps.generator import MRCPSInstance, MRCPSRegime, generate
from relic_envs.errors import InvalidInstance
from relic_envs.seeds import seed_team

BENCH = relic_envs.get_benchmark("mrcps")
SIG = BENCH.signatures()


def tiny() -> MRCPSInstance:
    """Two projects, one skill, two workers::

        project 0: task 0 (a=6) -> task 1 (a=4)     due 8,  weight 1
        project 1: task 2 (a=10)                    due 5,  weight 3
        worker 0: level 2 (divisor 1.0),  cost 2
        worker 1: level 1 (divisor 0.85), cost 1
    """
    pred = np.zeros((3, 3), dtype=bool)
    pred[1, 0] = True
    return MRCPSInstance(
        project=np.array([0, 0, 1]), duration=np.array([6, 4, 10]), skill=np.array([0, 0, 0]), pred=pred,
        level=np.array([[2], [1]]), cost=np.array([2.0, 1.0]), due=np.array([8.0, 5.0]), weight=np.array([1, 3]),
    )


def _kw(ep, role):
    return SIG[role].to_kwargs(ep.observe(role))


def test_hand_worked_schedule():
    ep = BENCH.new_episode(tiny())
    kw = _kw(ep, "A")
    # t = 0: both projects have a schedulable task (task 1 waits for task 0).
    assert kw["project_ids"].tolist() == [0, 1] and kw["due_dates"].tolist() == [8.0, 5.0]
    assert kw["remaining_task_counts"].tolist() == [2, 1] and kw["t_now"] == 0.0
    ep.step({"A": 1})
    kw = _kw(ep, "B")
    assert kw["project_id"] == 1 and kw["task_ids"].tolist() == [2] and kw["durations"].tolist() == [10.0]
    assert kw["successor_counts"].tolist() == [0]
    ep.step({"B": 2})
    kw = _kw(ep, "C")
    assert kw["task_id"] == 2 and kw["worker_ids"].tolist() == [0, 1]
    assert kw["skill_levels"].tolist() == [2, 1] and kw["worker_costs"].tolist() == [2.0, 1.0]
    ep.step({"C": 1})  # task 2 by worker 1: 10 / 0.85 = 11.7647, [0, 11.7647)
    ep.step({"A": 0})
    assert _kw(ep, "B")["successor_counts"].tolist() == [1]  # task 0 precedes task 1
    ep.step({"B": 0})
    assert _kw(ep, "C")["worker_ids"].tolist() == [0]  # worker 1 is busy
    ep.step({"C": 0})  # task 0 by worker 0: 6 / 1.0 = 6, [0, 6)
    assert _kw(ep, "A")["t_now"] == 6.0  # time jumped to task 0's completion
    for role, answer in (("A", 0), ("B", 1), ("C", 0)):
        ep.step({role: answer})  # task 1 by worker 0: 4, [6, 10)
    assert ep.done and ep.repairs == {"A": 0, "B": 0, "C": 0}
    # C_0 = 10, C_1 = 10/0.85 = 11.7647; labor 1*11.7647 + 2*6 + 2*4 = 31.7647
    # C = 0.25*11.7647 + 1*(10-8) + 3*(11.7647-5) + 0.01*31.7647 = 25.5529
    c1 = 10 / 0.85
    assert ep.objective() == pytest.approx(0.25 * c1 + 2 + 3 * (c1 - 5) + 0.01 * (c1 + 20))
    assert ep.objective() == pytest.approx(25.552941176)


def test_every_bad_answer_is_repaired_to_the_cheapest_and_counted():
    ep = BENCH.new_episode(tiny())
    assert ep.check("A", -1).reason == "skip" and ep.check("A", 9).reason == "range"
    assert ep.check("A", 1.0).reason == "type" and ep.check("A", 0) is None
    ep.step({"A": 7})  # repaired: earliest due date -> project 1
    ep.step({"B": "x"})  # repaired: shortest -> task 2 (the only one)
    ep.step({"C": -1})  # repaired: fastest -> worker 0 (10 / 1.0)
    ep.step({"A": 1})  # infeasible now (project 1 is done) -> project 0
    ep.step({"B": 1})  # infeasible (task 1 waits for task 0) -> task 0
    ep.step({"C": 0})  # infeasible (worker 0 busy) -> worker 1: 6 / 0.85 = 7.0588
    for role in "ABC":
        ep.step({role: ValueError("boom")})  # task 1 at 7.0588 by worker 1 (the only free one): 4 / 0.85
    assert ep.done and ep.info()["repairs"] == {"A": 3, "B": 3, "C": 3}
    assert [(r, why) for _, r, why, _, _ in ep.repair_log] == [
        ("A", "range"), ("B", "type"), ("C", "skip"), ("A", "infeasible"), ("B", "infeasible"), ("C", "infeasible"),
        ("A", "exception"), ("B", "exception"), ("C", "exception"),
    ]
    # C_1 = 10, C_0 = (6 + 4)/0.85 = 11.7647; labor 2*10 + 1*11.7647
    # C = 0.25*11.7647 + 1*(11.7647-8) + 3*(10-5) + 0.01*31.7647 = 22.0235
    c0 = 10 / 0.85
    assert ep.objective() == pytest.approx(0.25 * c0 + (c0 - 8) + 15 + 0.01 * (20 + c0))


def test_bad_instances_are_refused():
    good = tiny().arrays()
    with pytest.raises(InvalidInstance, match="pred"):
        MRCPSInstance(**{**good, "pred": good["pred"].T.copy()})
    with pytest.raises(InvalidInstance, match="qualified"):
        MRCPSInstance(**{**good, "level": np.zeros((2, 1), dtype=np.int64)})
    with pytest.raises(InvalidInstance, match="level"):
        MRCPSInstance(**{**good, "level": np.array([[4], [1]])})


def test_generator_follows_the_paper():
    inst = generate(MRCPSRegime(100), np.random.default_rng(3))
    assert np.bincount(inst.project).tolist() == [20] * 5
    assert inst.duration.min() >= 3 and inst.duration.max() <= 17 and set(inst.skill.tolist()) <= {0, 1, 2, 3}
    for i in range(1, 100):  # the chain within each project
        assert inst.pred[i, i - 1] == (inst.project[i] == inst.project[i - 1])
    assert not (inst.pred & (inst.project[:, None] != inst.project[None, :])).any()
    assert (inst.level > 0).any(axis=0).all() and inst.level.shape == (10, 4)
    load = np.bincount(inst.project, weights=inst.duration) / 2
    assert np.all(inst.due >= 0.9 * load) and np.all(inst.due <= 1.5 * load)


def test_seed_and_case_study_teams_need_no_repair():
    from relic_envs.case_studies import case_study_team

    for team in (seed_team("mrcps"), case_study_team("mrcps")):
        res = relic_envs.rollout("mrcps", team, relic_envs.splits("mrcps").train[0][:2])
        assert all(r.valid and r.info["repairs"] == {"A": 0, "B": 0, "C": 0} for r in res)


def _recompute(inst: MRCPSInstance, worker, start) -> float:
    """C_MRCPS from the schedule alone, checking precedence, qualification and worker overlap."""
    n = inst.n_tasks
    fin = {}
    for i in range(n):
        assert worker[i] >= 0, "every task is scheduled"
        s = inst.level[worker[i], inst.skill[i]]
        assert s > 0
        fin[i] = start[i] + inst.duration[i] / (0.7 + 0.15 * s)
    for i in range(n):
        for j in np.flatnonzero(inst.pred[i]):
            assert start[i] >= fin[j] - 1e-9
    for w in range(inst.n_workers):
        spans = sorted((start[i], fin[i]) for i in range(n) if worker[i] == w)
        assert all(a[1] <= b[0] + 1e-9 for a, b in zip(spans, spans[1:]))
    c_p = [max([fin[i] for i in range(n) if inst.project[i] == p], default=0.0) for p in range(inst.n_projects)]
    labor = sum(inst.cost[worker[i]] * (fin[i] - start[i]) for i in range(n))
    tardy = sum(inst.weight[p] * max(c - inst.due[p], 0.0) for p, c in enumerate(c_p))
    return 0.25 * max(c_p) + tardy + 0.01 * labor


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 14), seed=st.integers(0, 2**31 - 1), answers=st.lists(st.integers(-2, 15), min_size=20, max_size=20))
def test_any_answers_give_a_feasible_schedule_costed_as_recomputed(n, seed, answers):
    inst = generate(MRCPSRegime(n), np.random.default_rng(seed))
    ep = BENCH.new_episode(inst)
    lo, hi = BENCH.score_bounds(inst)
    space = BENCH.state_space(inst)
    k = 0
    while not ep.done:
        role = next(r for r in "ABC" if ep.acting(r))
        if role == "B":  # tasks form a chain in each project: B never has a choice
            assert ep.decision.ids.size == 1
        ep.step({role: answers[k % len(answers)]})
        k += 1
        assert space.contains(ep.state_vector())
    assert k == BENCH.max_steps(inst)
    assert ep.objective() == pytest.approx(_recompute(inst, ep.state.worker, ep.state.start))
    assert lo <= BENCH.score(ep.objective()) <= hi
    assert math.isfinite(ep.objective())
