"""The alternative interface (A deadline sentinel, B value harvester, C system regulator):
signatures, the arguments' meaning on hand-made states, same data as the paper interface,
and valid seeds on the test splits."""

from __future__ import annotations

import numpy as np
import pytest

import relic_envs
from relic_envs.core.program import check_source
from relic_envs.core.rollout import rollout
from relic_envs.mas.fs.generator import FSInstance
from relic_envs.mas.jd.generator import JDInstance
from relic_envs.mas.st.generator import STInstance
from relic_envs.seeds import seed_source, seed_team

MAS = ["mas_jd", "mas_st", "mas_fs"]
PARAMS = {
    "mas_jd": {"A": ["candidates", "t_now"], "B": ["values", "my_finish", "rival_finish", "t_now"],
               "C": ["team_state", "job_table", "t_now"]},
    "mas_st": {"A": ["candidates", "t_now"], "B": ["values", "my_finish", "rival_finish", "t_now"],
               "C": ["team_state", "job_table", "t_now"]},
    "mas_fs": {"A": ["candidates", "t_now"], "B": ["values", "my_finish", "downstream_wait", "t_now"],
               "C": ["team_state", "job_table", "t_now"]},
}
TABLE_WIDTH = {"mas_jd": 6, "mas_st": 9, "mas_fs": 7}
TEAM_KEYS = ["busy_until", "load", "utilisation", "backlog", "coverage"]


def _f(*xs):
    return np.array(xs, dtype=np.float64)


def _kwargs(bench, ep, role):
    return bench.signatures("alt")[role].to_kwargs(ep.observe(role))


@pytest.mark.parametrize("name", MAS)
def test_signatures_and_python_types(name):
    bench = relic_envs.get_benchmark(name)
    assert bench.interfaces == ("paper", "alt")
    sigs = bench.signatures("alt")
    inst = relic_envs.splits(name).test["test50"][0]
    ep = bench.new_episode(inst, "alt")
    ep.step({r: int(np.flatnonzero(ep.observe(r)["action_mask"])[-1]) - 1 for r in "ABC"})  # one job each, if any
    for role in "ABC":
        sig = sigs[role]
        assert sig.function == f"select_next_{role}" and list(sig.param_names) == PARAMS[name][role]
        assert bench.observation_space(role, inst, "alt").contains(ep.observe(role))
        kw = sig.to_kwargs(ep.observe(role))
        if role == "A":
            assert isinstance(kw["candidates"], dict) and kw["candidates"]
            for job, row in kw["candidates"].items():
                assert type(job) is int and all(type(x) is float for x in row)
                assert len(row) == (4 if name == "mas_fs" else 3)
        elif role == "B":
            for key in PARAMS[name]["B"][:3]:
                assert isinstance(kw[key], np.ndarray) and kw[key].shape == (inst.n_jobs,)
        else:
            assert list(kw["team_state"]) == TEAM_KEYS and type(kw["team_state"]["coverage"]) is float
            assert all(isinstance(kw["team_state"][k], list) and len(kw["team_state"][k]) == 3 for k in TEAM_KEYS[:4])
            released = int((inst.release <= ep.t).sum())
            assert kw["job_table"].shape == (released, TABLE_WIDTH[name])
        assert type(kw["t_now"]) is float


def test_jd_arguments_by_hand():
    #  job  r  p  d  w      A takes job 0 at t = 0 (busy until 2); at t = 1 job 2 arrives.
    #  0    0  2  3  1      Epoch t = 1: pool {1, 2}; B and C free (B took nothing).
    #  1    0  1  4  2
    #  2    1  3  9  5
    inst = JDInstance(release=_f(0, 0, 1), proc=_f(2, 1, 3), due=_f(3, 4, 9), weight=_f(1, 2, 5))
    bench = relic_envs.get_benchmark("mas_jd")
    ep = bench.new_episode(inst, "alt")
    ep.step({"A": 0, "B": -1, "C": -1})
    assert ep.t == 1.0
    a = _kwargs(bench, ep, "A")  # A is busy until 2, but still observes
    assert a["candidates"] == {1: (4 - (1 + 1), 1.0, 2.0), 2: (9 - (1 + 3), 3.0, 5.0)}  # slack = d - (t + p)
    b = _kwargs(bench, ep, "B")
    assert b["values"].tolist() == [0, 2, 5]
    assert b["my_finish"].tolist() == [np.inf, 2, 4]  # B free now: t + p
    assert b["rival_finish"].tolist() == [np.inf, 2, 4]  # C is free too (A would be later: 2 + p)
    c = _kwargs(bench, ep, "C")
    assert c["team_state"]["busy_until"] == [2.0, 0.0, 0.0] and c["team_state"]["load"] == [2.0, 0.0, 0.0]
    # utilisation: work done since the first release (t = 0) over the elapsed 1: A 1 of 1
    assert c["team_state"]["utilisation"] == [1.0, 0.0, 0.0]
    assert c["team_state"]["backlog"] == [4.0, 4.0, 4.0]  # jobs 1 and 2 wait (shared pool)
    assert c["team_state"]["coverage"] == pytest.approx(1 / 3)  # job 0 of the 3 released is dispatched
    # rows (p, d, w, machine, completion, available)
    assert c["job_table"].tolist() == [[2, 3, 1, 0, 2, 0], [1, 4, 2, -1, -1, 1], [3, 9, 5, -1, -1, 1]]


def test_st_arguments_by_hand():
    #  task r  c  p  v  d      skills: A (1, .5, .5), B (.5, 1, .5), C (.5, .5, 1)
    #  0    0  0  1  2  1.5    at t = 0 every worker is free, pool {0, 1}
    #  1    0  1  1  5  1.8
    skills = np.array([[1, 0.5, 0.5], [0.5, 1, 0.5], [0.5, 0.5, 1]], dtype=np.float64)
    inst = STInstance(release=_f(0, 0), category=np.array([0, 1]), duration=_f(1, 1), value=_f(2, 5),
                      deadline=_f(1.5, 1.8), skills=skills)
    bench = relic_envs.get_benchmark("mas_st")
    ep = bench.new_episode(inst, "alt")
    a = _kwargs(bench, ep, "A")  # A: task 0 in 1 (slack 0.5), task 1 in 2 (slack -0.2: late)
    assert a["candidates"][0] == (0.5, 1.0, 2.0)
    assert a["candidates"][1][0] == pytest.approx(-0.2) and a["candidates"][1][1:] == (2.0, 5.0)
    b = _kwargs(bench, ep, "B")  # B: task 0 takes 2 > 1.5 (not attainable), task 1 takes 1 <= 1.8
    assert b["values"].tolist() == [0, 5] and b["my_finish"].tolist() == [2, 1]
    assert b["rival_finish"].tolist() == [1, 2]  # A does task 0 in 1; A or C do task 1 in 2
    c = _kwargs(bench, ep, "C")
    # rows (c, v, d, time_A, time_B, time_C, worker, completion, available)
    assert c["job_table"].tolist() == [[0, 2, 1.5, 1, 2, 2, -1, -1, 1], [1, 5, 1.8, 2, 1, 2, -1, -1, 1]]
    assert c["team_state"]["backlog"] == [3.0, 3.0, 4.0]  # each worker's own time for both tasks


def test_fs_arguments_by_hand():
    #  job  r  p1 p2 p3  w     t = 0: A takes job 0 (stage 1 until 1).
    #  0    0  1  2  1   1     t = 1: job 0 at stage 2 (B takes it, until 3); A takes job 1 (until 3).
    #  1    0  2  1  4   2     t = 3: job 0 to stage 3 (C, until 4), job 1 waits for B since 3.
    #  2    0  1  1  1   3     Job 2 has waited in stage 1's buffer since 0.
    inst = FSInstance(release=_f(0, 0, 0), proc=np.array([[1.0, 2, 1], [2, 1, 4], [1, 1, 1]]), weight=_f(1, 2, 3))
    bench = relic_envs.get_benchmark("mas_fs")
    ep = bench.new_episode(inst, "alt")
    ep.step({"A": 0, "B": -1, "C": -1})
    ep.step({"A": 1, "B": 0, "C": -1})
    assert ep.t == 3.0
    a = _kwargs(bench, ep, "A")
    assert a["candidates"] == {2: (3.0, 1.0, 2.0, 3.0)}  # (waited, p_here, p_rest, w)
    b = _kwargs(bench, ep, "B")  # job 1 ready at stage 2 since 3; stage 3 busy until 4 (job 0), buffer empty
    assert b["values"].tolist() == [0, 2, 0] and b["my_finish"].tolist() == [np.inf, 4, np.inf]
    assert b["downstream_wait"].tolist() == [0, 0, 0]  # 1 unit of work ahead at stage 3, job 1 takes 1 here
    ep.step({"A": 2, "B": -1, "C": 0})  # B idles: at t = 4 job 2 is done at stage 1 (3 + 1)
    assert ep.t == 4.0
    b = _kwargs(bench, ep, "B")
    assert b["my_finish"].tolist() == [np.inf, 5, 5] and b["downstream_wait"].tolist() == [0, 0, 0]
    c = _kwargs(bench, ep, "C")
    # rows (stage_current, rem1, rem2, rem3, w, waited, available): job 0 finished at 4
    assert c["job_table"].tolist() == [[3, 0, 0, 0, 1, 0, 0], [1, 0, 1, 4, 2, 1, 0], [1, 0, 1, 1, 3, 0, 0]]
    assert c["team_state"]["coverage"] == pytest.approx(1 / 3)
    ep.step({"A": -1, "B": 1, "C": -1})  # B takes job 1 (until 5); job 2 waits
    c = _kwargs(bench, ep, "C")
    assert ep.t == 5.0 and c["team_state"]["backlog"] == [0.0, 1.0, 4.0]


@pytest.mark.parametrize("name", MAS)
def test_both_interfaces_play_the_same_problem(name):
    """Same data, objective and epochs: only the observations differ."""
    bench = relic_envs.get_benchmark(name)
    first = {r: bench.reference_policy(r) for r in "ABC"}
    instances = relic_envs.splits(name).test["test50"][:3]
    paper = rollout(name, first, instances, interface="paper")
    alt = rollout(name, first, instances, interface="alt")
    assert [(r.objective, r.steps) for r in paper] == [(r.objective, r.steps) for r in alt]


@pytest.mark.parametrize("name", MAS)
def test_alt_seeds_pass_the_program_checks(name):
    for role, sig in relic_envs.get_benchmark(name).signatures("alt").items():
        check_source(seed_source(name, role, "alt"), sig)


@pytest.mark.parametrize("name", MAS)
@pytest.mark.parametrize("regime", ["test50", "test80"])
def test_alt_seed_team_is_valid_on_the_test_splits_and_beats_first_come(name, regime):
    bench = relic_envs.get_benchmark(name)
    instances = relic_envs.splits(name).test[regime]
    results = rollout(name, seed_team(name, "alt"), instances, interface="alt")
    assert all(r.valid for r in results), [r.invalid for r in results if not r.valid]
    reference = rollout(name, {r: bench.reference_policy(r, "alt") for r in "ABC"}, instances[:5], interface="alt")
    assert np.mean([r.score for r in results[:5]]) > np.mean([r.score for r in reference])
