"""Hypothesis: random valid play on random small instances gives a feasible schedule whose
objective an independent recomputation from the schedule confirms."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import relic_envs
from relic_envs.mas.fs.generator import FSInstance
from relic_envs.mas.jd.generator import JDInstance
from relic_envs.mas.st.generator import STInstance

TOL = 1e-9


def _times(draw, n, lo, hi):
    return np.array(draw(st.lists(st.floats(lo, hi), min_size=n, max_size=n)), dtype=np.float64)


@st.composite
def instances(draw, kind):
    n = draw(st.integers(1, 7))
    release = np.sort(_times(draw, n, 0.0, 3.0))
    if kind == "mas_jd":
        return JDInstance(release=release, proc=_times(draw, n, 0.1, 2.0), due=release + _times(draw, n, 0.0, 4.0),
                          weight=_times(draw, n, 0.0, 5.0))
    if kind == "mas_st":
        skills = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=9, max_size=9))).reshape(3, 3)
        return STInstance(release=release, category=np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))),
                          duration=_times(draw, n, 0.1, 2.0), value=_times(draw, n, 0.0, 5.0),
                          deadline=release + _times(draw, n, 0.0, 4.0), skills=skills)
    return FSInstance(release=release, proc=_times(draw, 3 * n, 0.1, 2.0).reshape(n, 3), weight=_times(draw, n, 0.0, 5.0))


def _play(name, inst, seed):
    """Random valid play (uniform over each acting role's mask), recording each epoch."""
    bench = relic_envs.get_benchmark(name)
    ep = bench.new_episode(inst)
    rng = np.random.default_rng(seed)
    epochs = []
    while not ep.done:
        actions = {r: int(rng.choice(np.flatnonzero(ep.observe(r)["action_mask"]))) - 1 for r in "ABC"}
        epochs.append((ep.t, ep.busy.copy()))
        assert ep.step(actions) is None
    assert ep.step_count <= bench.max_steps(inst)
    assert bench.state_space(inst).contains(ep.state_vector())
    lo, hi = bench.score_bounds(inst)
    assert lo - TOL <= bench.score(ep.objective()) <= hi + TOL
    return bench, ep, epochs


def _check_schedule(ep, inst, stages, duration):
    """Feasibility from the schedule alone: release, precedence, durations, non-overlap."""
    for s in range(stages):
        for k in range(3):
            jobs = [j for j in range(inst.n_jobs) if ep.machine[j, s] == k]
            spans = sorted((ep.start[j, s], ep.end[j, s]) for j in jobs)
            for (_, e0), (s1, _) in zip(spans, spans[1:]):
                assert s1 >= e0 - TOL  # one job at a time per resource
            for j in jobs:
                assert abs(ep.end[j, s] - ep.start[j, s] - duration(k, j, s)) <= TOL
                ready = inst.release[j] if s == 0 else ep.end[j, s - 1]
                assert ep.start[j, s] >= ready - TOL  # Eq. mas-fs-precedence (release for stage 1)


@settings(max_examples=60, deadline=None)
@given(instances("mas_jd"), st.integers(0, 2**31))
def test_jd_schedule_and_cost(inst, seed):
    _, ep, _ = _play("mas_jd", inst, seed)
    assert (ep.machine[:, 0] >= 0).all()  # every job assigned exactly once (valid play never stalls)
    _check_schedule(ep, inst, 1, lambda k, j, s: inst.proc[j])
    cost = 0.0
    for j in range(inst.n_jobs):
        cost += inst.weight[j] * max(0.0, float(ep.end[j, 0]) - inst.due[j])
    assert abs(ep.objective() - cost) <= 1e-7 * max(1.0, cost)


@settings(max_examples=60, deadline=None)
@given(instances("mas_st"), st.integers(0, 2**31))
def test_st_schedule_and_value(inst, seed):
    _, ep, _ = _play("mas_st", inst, seed)

    def eff(k, j, s):
        return inst.duration[j] / max(inst.skills[k, inst.category[j]], 0.05)

    _check_schedule(ep, inst, 1, eff)
    for j in range(inst.n_jobs):  # nobody takes a task it is unqualified for
        if ep.machine[j, 0] >= 0:
            assert inst.skills[ep.machine[j, 0], inst.category[j]] >= 0.05
    value = sum(inst.value[j] for j in range(inst.n_jobs) if ep.machine[j, 0] >= 0 and ep.end[j, 0] <= inst.deadline[j])
    assert abs(ep.objective() - value) <= 1e-9


@settings(max_examples=60, deadline=None)
@given(instances("mas_fs"), st.integers(0, 2**31))
def test_fs_schedule_and_cost(inst, seed):
    _, ep, _ = _play("mas_fs", inst, seed)
    assert (ep.machine >= 0).all() and all((ep.machine[:, s] == s).all() for s in range(3))
    _check_schedule(ep, inst, 3, lambda k, j, s: inst.proc[j, s])
    cost = sum(inst.weight[j] * float(ep.end[j, 2]) for j in range(inst.n_jobs))
    assert abs(ep.objective() - cost) <= 1e-7 * max(1.0, cost)


@settings(max_examples=30, deadline=None)
@given(instances("mas_jd"), st.integers(0, 2**31))
def test_epochs_advance_and_only_free_resources_act(inst, seed):
    _, ep, epochs = _play("mas_jd", inst, seed)
    times = [t for t, _ in epochs]
    assert all(b > a for a, b in zip(times, times[1:]))  # one epoch per event time, strictly later
    for j in range(inst.n_jobs):  # each job starts at an epoch, on a machine free then
        k = ep.machine[j, 0]
        (busy,) = [b for t, b in epochs if t == ep.start[j, 0]]
        assert busy[k] <= ep.start[j, 0] + TOL
