"""Hand-worked MAS objectives on tiny instances, and the event loop's rules."""

from __future__ import annotations

import numpy as np
import pytest

import relic_envs
from relic_envs.core.benchmark import WAIT
from relic_envs.core.rollout import rollout
from relic_envs.errors import InvalidReturn
from relic_envs.mas.fs.generator import FSInstance
from relic_envs.mas.jd.generator import JDInstance
from relic_envs.mas.st.generator import STInstance

JD = relic_envs.get_benchmark("mas_jd")
ST = relic_envs.get_benchmark("mas_st")
FS = relic_envs.get_benchmark("mas_fs")


def _f(*values):
    return np.array(values, dtype=np.float64)


def _jd():
    #  job  r    p    d    w
    #  0    0    2    1    1
    #  1    0    1    2    2
    #  2    1    1    1.5  3
    return JDInstance(release=_f(0, 0, 1), proc=_f(2, 1, 1), due=_f(1, 2, 1.5), weight=_f(1, 2, 3))


def test_jd_weighted_tardiness_by_hand():
    ep = JD.new_episode(_jd())
    assert ep.t == 0 and all(ep.acting(r) for r in "ABC")
    # t=0: A takes 0 (C=2), B takes 1 (C=1), C idles (job 2 is still to come).
    assert ep.step({"A": 0, "B": 1, "C": -1}) is None
    # Next event t=1: B is done and job 2 arrives; A is busy until 2 and does not act.
    assert ep.t == 1 and not ep.acting("A") and ep.acting("B") and ep.acting("C")
    assert ep.step({"A": 99, "B": 2, "C": -1}) is None  # A's answer is ignored, unchecked
    assert ep.done and ep.step_count == 2
    # T0 = 2-1 = 1 (w1), T1 = 0, T2 = 2-1.5 = 0.5 (w3): 1 + 1.5 = 2.5
    assert ep.objective() == pytest.approx(2.5)
    assert list(ep.machine[:, 0]) == [0, 1, 1]


def test_jd_collision_idles_the_later_role():
    ep = JD.new_episode(_jd())
    ep.step({"A": 1, "B": 1, "C": 0})  # B asks for the job A has just taken
    assert ep.collisions == [(0, "B", 1)]
    assert ep.machine[1, 0] == 0 and ep.machine[0, 0] == 2 and ep.busy[1] == 0


@pytest.mark.parametrize(
    ("value", "reason"),
    [(2, "pool"), (3, "range"), (-2, "range"), (1.0, "type"), (True, "type"), ("1", "type"), (ValueError("x"), "exception")],
)
def test_jd_bad_answers_void_the_rollout(value, reason):
    ep = JD.new_episode(_jd())
    assert ep.check("A", value).reason == reason
    invalid = ep.step({"A": value, "B": 1, "C": -1})
    assert invalid.role == "A" and invalid.reason == reason and ep.done
    assert np.all(ep.machine < 0)  # nothing was applied


def test_numpy_integers_are_job_ids():
    ep = JD.new_episode(_jd())
    assert ep.step({"A": np.int32(0), "B": np.array(1), "C": np.int64(-1)}) is None


def test_the_whole_team_idling_at_a_last_chance_epoch_is_a_stall():
    one = JDInstance(release=_f(0), proc=_f(1), due=_f(1), weight=_f(1))
    ep = JD.new_episode(one)  # nothing else will ever happen: someone must take job 0
    assert ep.check("A", -1) is None  # one role idling is not a stall by itself ...
    assert ep.check_team({"A": -1, "B": -1, "C": -1}).reason == "stall"  # ... the whole team idling is
    # the mask is conservative: the designated role (the first free one with a pool) may not idle
    assert [ep.observe(r)["action_mask"].tolist() for r in "ABC"] == [[0, 1], [1, 1], [1, 1]]
    invalid = ep.step({"A": -1, "B": -1, "C": -1})
    assert invalid.role == "A" and invalid.reason == "stall" and ep.done and ep.void is not None
    ep = JD.new_episode(one)
    assert ep.step({"A": -1, "B": -1, "C": 0}) is None  # A and B idle while C takes it: valid
    assert ep.done and ep.objective() == 0.0
    ep = JD.new_episode(one)
    ep.step({"A": 0, "B": 0, "C": 0})  # B and C collide with A: fine
    assert ep.done and ep.objective() == 0.0


def test_idling_while_a_teammate_finishes_the_last_jobs_is_valid():
    # Two jobs released at 0, both on machine B one after the other; A and C idle at the
    # last-chance epoch t = 1 (no release pending, nobody busy) while B takes job 1.
    two = JDInstance(release=_f(0, 0), proc=_f(1, 1), due=_f(5, 5), weight=_f(1, 1))
    ep = JD.new_episode(two)
    assert ep.step({"A": -1, "B": 0, "C": -1}) is None
    assert ep.t == 1.0 and ep._last_chance
    assert ep.step({"A": -1, "B": 1, "C": -1}) is None
    assert ep.done and ep.machine[:, 0].tolist() == [1, 1] and ep.objective() == 0.0


def test_penalized_stall_charges_the_horizon():
    one = JDInstance(release=_f(0), proc=_f(1), due=_f(0.5), weight=_f(2))
    ep = JD.new_episode(one)
    ep.step({"A": WAIT, "B": WAIT, "C": WAIT})  # what on_invalid="penalize" applies for refused idles
    assert ep.done and ep.unfinished().all()
    # the job is charged at the horizon H = r_max + sum p = 0 + 1: w * (H - d) = 2 * 0.5
    assert ep.horizon == 1.0 and ep.objective() == pytest.approx(1.0)
    assert JD.score(ep.objective()) >= JD.score_bounds(one)[0]


def test_busy_roles_exceptions_are_ignored_by_rollout():
    def picky(obs):
        if obs["my_busy_until"] > obs["t_now"]:
            raise RuntimeError("called while busy")
        jobs = np.flatnonzero(obs["action_mask"][1:])
        return int(jobs[0]) if jobs.size else -1

    team = {"A": picky, "B": picky, "C": lambda obs: (-1 if obs["action_mask"][0] else int(np.flatnonzero(obs["action_mask"])[0] - 1))}
    (res,) = rollout("mas_jd", team, [_jd()])
    assert res.valid, res.invalid


def test_st_value_on_time_by_hand():
    #  task r  c  p  v  d     worker skills: A (1, .5, .5), B (.5, 1, .5), C (.5, .5, 1)
    #  0    0  0  1  2  1.5
    #  1    0  1  1  5  1.5
    skills = np.array([[1, 0.5, 0.5], [0.5, 1, 0.5], [0.5, 0.5, 1]], dtype=np.float64)
    inst = STInstance(release=_f(0, 0), category=np.array([0, 1]), duration=_f(1, 1), value=_f(2, 5),
                      deadline=_f(1.5, 1.5), skills=skills)
    good = ST.new_episode(inst)
    good.step({"A": 0, "B": 1, "C": -1})  # each on its specialty: 1/1 = 1 <= 1.5: 2 + 5
    assert good.done and good.objective() == 7.0
    bad = ST.new_episode(inst)
    bad.step({"A": 1, "B": 0, "C": -1})  # swapped: 1/0.5 = 2 > 1.5, both late: 0, workers busy until 2
    assert bad.done and bad.objective() == 0.0 and bad.busy.tolist() == [2.0, 2.0, 0.0]
    idle = ST.new_episode(inst)
    assert idle.check("A", -1) is None  # MAS-ST has no stall rule: tasks may stay unserved
    idle.step({"A": -1, "B": -1, "C": -1})
    assert idle.done and idle.objective() == 0.0


def test_fs_weighted_completion_by_hand():
    #  job  r  p1 p2 p3  w
    #  0    0  1  2  1   1
    #  1    0  2  1  1   2
    inst = FSInstance(release=_f(0, 0), proc=np.array([[1.0, 2, 1], [2, 1, 1]]), weight=_f(1, 2))
    ep = FS.new_episode(inst)
    assert ep.observe("B")["action_mask"].tolist() == [1, 0, 0]  # stage 2 has nothing yet: only idle
    ep.step({"A": 1, "B": -1, "C": -1})  # t=0: stage 1 runs job 1 until 2
    assert ep.t == 2
    ep.step({"A": 0, "B": 1, "C": -1})  # t=2: job 0 at stage 1 until 3, job 1 at stage 2 until 3
    assert ep.t == 3
    ep.step({"A": -1, "B": 0, "C": 1})  # t=3: job 0 at stage 2 until 5, job 1 at stage 3 until 4
    assert ep.t == 5  # t=4 is no epoch: C is free but its buffer is empty until job 0 arrives at 5
    ep.step({"A": -1, "B": -1, "C": 0})  # t=5: job 0 at stage 3 until 6
    assert ep.done and ep.step_count == 4
    assert ep.completion().tolist() == [6.0, 4.0]
    assert ep.objective() == pytest.approx(1 * 6 + 2 * 4)  # 14


def test_fs_job_table_and_b_arguments():
    inst = FSInstance(release=_f(0, 0), proc=np.array([[1.0, 2, 1], [2, 1, 1]]), weight=_f(1, 2))
    ep = FS.new_episode(inst)
    ep.step({"A": 1, "B": -1, "C": -1})
    ep.step({"A": 0, "B": 1, "C": -1})  # now t=3
    sig = FS.signatures()
    c = sig["C"].to_kwargs(ep.observe("C"))
    # job 0: done at stage 1 (at 3), waits at stage 2; job 1: done at stages 1, 2, waits at stage 3
    assert c["job_table"].tolist() == [[1, 0, 2, 1, 1], [2, 0, 0, 1, 2]]
    assert c["my_buffer"] == {1: (1.0, 2.0)} and c["pipeline_state"].tolist() == [3.0, 3.0, 0.0]
    b = sig["B"].to_kwargs(ep.observe("B"))
    assert b == {"my_buffer": {0: (2.0, 1.0)}, "upstream_busy": 3.0, "downstream_buf_size": 1, "my_busy_until": 3.0}
    assert sig["A"].to_kwargs(ep.observe("A"))["dummy"] == 0.0


def test_kwargs_have_the_papers_types():
    inst = relic_envs.splits("mas_st").test["test50"][0]
    ep = ST.new_episode(inst)
    sig = ST.signatures()
    a = sig["A"].to_kwargs(ep.observe("A"))
    assert isinstance(a["my_skills"], np.ndarray) and isinstance(a["task_pool"], dict) and isinstance(a["t_now"], float)
    (c, p, v, d), = list(a["task_pool"].values())[:1]
    assert isinstance(c, int) and all(isinstance(x, float) for x in (p, v, d))
    b = sig["B"].to_kwargs(ep.observe("B"))
    assert set(b["my_state"]) == {"skills", "busy_until"} and len(b["teammate_states"]) == 2
    assert np.array_equal(b["teammate_states"][1]["skills"], inst.skills[2])
    c = sig["C"].to_kwargs(ep.observe("C"))
    assert c["skill_matrix"].shape == (3, 3) and c["task_features"].shape[1] == 5
    assert c["task_features"][:, 0].tolist() == sorted(a["task_pool"])
    jd = JD.signatures()["C"].to_kwargs(JD.new_episode(_jd()).observe("C"))
    assert jd["job_ids"].dtype == np.int64 and jd["job_ids"].tolist() == [0, 1]
    assert jd["job_features"].tolist() == [[2, 1, 1], [1, 2, 2]]
    assert JD.signatures()["B"].to_kwargs(JD.new_episode(_jd()).observe("B"))["teammate_busy_until"] == [0.0, 0.0]


def test_bad_instances_name_the_field():
    with pytest.raises(ValueError, match="'release' must be sorted"):
        JDInstance(release=_f(1, 0), proc=_f(1, 1), due=_f(1, 1), weight=_f(1, 1))
    with pytest.raises(ValueError, match="'proc'"):
        JDInstance(release=_f(0), proc=_f(0), due=_f(1), weight=_f(1))
    with pytest.raises(ValueError, match="'category'"):
        STInstance(release=_f(0), category=np.array([3]), duration=_f(1), value=_f(1), deadline=_f(1), skills=np.eye(3))
    with pytest.raises(ValueError, match="'proc'"):
        FSInstance(release=_f(0), proc=_f(1, 1), weight=_f(1))


def test_check_return_rejects_what_the_mask_refuses():
    ep = JD.new_episode(_jd())
    obs = ep.observe("A")
    sig = JD.signatures()["A"]
    assert sig.check_return(1, obs) == 1
    for bad in (2, 1.0):
        with pytest.raises(InvalidReturn):
            sig.check_return(bad, obs)
