"""HMTSP: hand-worked costs, turn order, skips, forced assignment, repair, and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relic_envs
from relic_envs.co.hmtsp.generator import HMTSPInstance
from relic_envs.errors import InvalidAction, InvalidInstance
from relic_envs.seeds import seed_team

BENCH = relic_envs.get_benchmark("hmtsp")


def tiny() -> HMTSPInstance:
    """Two customers, three depots (node ids: customers 0, 1; depots 2, 3, 4)::

        (0,1) dC
          |
        (0,.5) c0 type 0        (1,.5) c1 type 1
          |                       |
        (0,0) dA                (1,0) dB
    """
    return HMTSPInstance(
        customers=np.array([[0.0, 0.5], [1.0, 0.5]]),
        task_type=np.array([0, 1]),
        depots=np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]),
        travel=np.array([1.0, 2.0, 1.0]),
        service=np.array([[0.2, 1.0, 1.0], [1.0, 0.3, 1.0], [1.0, 1.0, 0.4]]),
        budget=np.array([1.0, 5.0, 5.0]),
    )


def test_hand_worked_cost():
    ep = BENCH.new_episode(tiny())
    kw = BENCH.signatures()["A"].to_kwargs(ep.observe("A"))
    # A at its depot (node 2). c0: 1*(0.5 + 0.5 - 0) + s_A0 0.2 = 1.2;
    # c1: 1*(2*sqrt(1.25)) + s_A1 1.0 = 3.2360680
    assert kw["current"] == 2 and kw["candidate_ids"].tolist() == [0, 1]
    assert kw["candidate_costs"] == pytest.approx([1.2, 2 * math.sqrt(1.25) + 1.0])
    assert kw["budget_left"] == 1.0 and isinstance(kw["budget_left"], float)
    ep.step({"A": 0})
    assert ep.acting("B") and not ep.acting("A")
    kw = BENCH.signatures()["B"].to_kwargs(ep.observe("B"))
    assert kw["candidate_ids"].tolist() == [1] and kw["task_types"].tolist() == [1]
    assert kw["task_types"].dtype == np.int64 and kw["route_cost"] == 0.0
    ep.step({"B": 1})
    assert ep.done
    # L_A = 1*(0.5 + 0.5) + 0.2 = 1.2; L_B = 2*(0.5 + 0.5) + 0.3 = 2.3; L_C = 0
    # C = 1.2 + 2.3 + 0.5*2.3 + 5*max(1.2 - 1.0, 0) = 3.5 + 1.15 + 1.0 = 5.65
    assert ep.objective() == pytest.approx(5.65)
    assert ep.info()["repairs"] == {"A": 0, "B": 0, "C": 0} and ep.info()["forced"] == 0


def test_three_skips_force_the_globally_cheapest_assignment():
    ep = BENCH.new_episode(tiny())
    for role in "ABC":
        assert ep.acting(role)
        ep.step({role: -1})
    # Increments: A: c0 1.2, c1 3.236; B: c0 2*2*sqrt(1.25)+1 = 5.472, c1 2*1+0.3 = 2.3;
    # C: c0 1*(0.5+0.5)+1 = 2.0, c1 2*sqrt(1.25)+1 = 3.236. Cheapest: A takes c0.
    assert ep.state.routes == [[0], [], []] and ep.info()["forced"] == 1
    assert ep.acting("A")  # the turn passes on as usual
    ep.step({"A": -1})
    ep.step({"B": 1})
    assert ep.done and ep.objective() == pytest.approx(5.65)


def test_invalid_answers_are_repaired_to_the_cheapest_candidate_and_counted():
    ep = BENCH.new_episode(tiny())
    assert ep.check("A", 7).reason == "range"
    assert ep.check("A", 1.0).reason == "type"
    assert ep.check("B", 7) is None  # B is not deciding: its answer is ignored
    ep.step({"A": 7})  # repaired to A's cheapest candidate, c0
    assert ep.state.routes[0] == [0]
    assert ep.check("B", 0).reason == "infeasible"  # already assigned
    ep.step({"B": ValueError("boom")})  # an exception is repaired too: B's only candidate, c1
    assert ep.done and ep.state.routes[1] == [1]
    assert ep.repairs == {"A": 1, "B": 1, "C": 0}
    assert [(r, why, applied) for _, r, why, _, applied in ep.repair_log] == [("A", "range", 0), ("B", "exception", 1)]
    assert ep.info()["repairs"] == {"A": 1, "B": 1, "C": 0}


def test_env_modes_on_a_repaired_answer():
    env = relic_envs.make("hmtsp", instances=[tiny()], on_invalid="raise")
    obs, _ = env.reset()
    with pytest.raises(InvalidAction, match="agent 'A'"):
        env.step({"A": 1.5, "B": -1, "C": -1})
    program = relic_envs.make("hmtsp", instances=[tiny()], on_invalid="program")
    program.reset()
    _, _, _, _, infos = program.step({"A": 1.5, "B": -1, "C": -1})
    assert infos["A"]["invalid_actions"][0]["reason"] == "type"
    assert program.episode.repairs["A"] == 1 and program.episode.state.routes[0] == [0]
    default = relic_envs.make("hmtsp", instances=[tiny()])  # "penalize": refused, charged, reported, not repaired
    default.reset()
    _, _, _, _, infos = default.step({"A": 1.5, "B": -1, "C": -1})
    assert infos["A"]["invalid_actions"][0]["reason"] == "type" and infos["A"]["penalty"] > 0
    assert default.episode.repairs["A"] == 0


def test_bad_instances_are_refused():
    good = tiny().arrays()
    with pytest.raises(InvalidInstance, match="task_type"):
        HMTSPInstance(**{**good, "task_type": np.array([0, 3])})
    with pytest.raises(InvalidInstance, match="travel"):
        HMTSPInstance(**{**good, "travel": np.array([1.0, 0.0, 1.0])})


def test_seed_team_needs_no_repair_on_training_instances():
    instances = relic_envs.splits("hmtsp").train[0][:3]
    team = seed_team("hmtsp")
    for inst in instances:
        ep = BENCH.new_episode(inst)
        while not ep.done:
            role = next(r for r in "ABC" if ep.acting(r))
            ep.step({role: team[role](ep.observe(role))})
        assert ep.repairs == {"A": 0, "B": 0, "C": 0}
        assert sorted(c for route in ep.state.routes for c in route) == list(range(inst.n_customers))


def _recompute(inst: HMTSPInstance, routes) -> float:
    """C_HMTSP from the routes alone (independent of the simulator)."""
    n = inst.n_customers
    xy = np.concatenate([inst.customers, inst.depots])
    lengths = []
    for k, route in enumerate(routes):
        if not route:
            lengths.append(0.0)
            continue
        path = [n + k, *route, n + k]
        legs = sum(math.dist(xy[a], xy[b]) for a, b in zip(path, path[1:]))
        lengths.append(inst.travel[k] * legs + sum(inst.service[k, inst.task_type[v]] for v in route))
    excess = sum(max(length - b, 0.0) for length, b in zip(lengths, inst.budget))
    return sum(lengths) + 0.5 * max(lengths) + 5 * excess


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 9), seed=st.integers(0, 2**31 - 1), answers=st.lists(st.integers(-2, 11), min_size=30, max_size=30))
def test_any_answers_give_a_complete_assignment_costed_as_recomputed(n, seed, answers):
    from relic_envs.co.hmtsp.generator import HMTSPRegime, generate

    inst = generate(HMTSPRegime(n), np.random.default_rng(seed))
    inst = HMTSPInstance(**{**inst.arrays(), "budget": np.full(3, 0.05 * n)})  # tight budgets: the excess term binds
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
    routes = ep.state.routes
    assert sorted(c for r in routes for c in r) == list(range(n))
    assert ep.objective() == pytest.approx(_recompute(inst, routes))
    assert lo <= BENCH.score(ep.objective()) <= hi
