"""MRCPS event times: completions equal in exact arithmetic are one event (issue 38, item 4).

Two chains run the same three effective durations in a different order, ``(x + y) + z``
and ``(y + z) + x`` with ``x = 3 / 0.85``, ``y = 3 / 1.15``, ``z = 6 / 1.0``: equal in
exact arithmetic, ``1.8e-15`` apart in floats. Each chain's tail frees its worker and
releases one follow-up task that both workers can do, so at one shared event the team
sees both follow-ups and both workers; with exact float comparison it saw two events.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import relic_envs
from relic_envs.co.mrcps import simulator as sim
from relic_envs.co.mrcps.generator import MRCPSInstance
from relic_envs.seeds import seed_team

BENCH = relic_envs.get_benchmark("mrcps")
SIG = BENCH.signatures()


def two_chains() -> MRCPSInstance:
    """Project 0: tasks 0 -> 1 -> 2 -> 3; project 1: tasks 4 -> 5 -> 6 -> 7.

    Worker 0 alone holds skills 0, 1, 2 (levels 1, 3, 2: divisors 0.85, 1.15, 1.0),
    worker 1 alone skills 3, 4, 5 (levels 3, 2, 1); both hold skill 6 at level 2.
    Chain 0 runs x, y, z on worker 0; chain 1 runs y, z, x on worker 1; tasks 3 and 7
    (skill 6) follow the chain tails 2 and 6.
    """
    n = 8
    pred = np.zeros((n, n), dtype=bool)
    for i in (1, 2, 3, 5, 6, 7):
        pred[i, i - 1] = True
    level = np.zeros((2, 7), dtype=np.int64)
    level[0, [0, 1, 2]] = [1, 3, 2]
    level[1, [3, 4, 5]] = [3, 2, 1]
    level[:, 6] = 2
    return MRCPSInstance(
        project=np.array([0, 0, 0, 0, 1, 1, 1, 1]), duration=np.array([3, 3, 6, 4, 3, 6, 3, 5]),
        skill=np.array([0, 1, 2, 6, 3, 4, 5, 6]), pred=pred, level=level, cost=np.array([1.0, 2.0]),
        due=np.array([20.0, 20.0]), weight=np.array([1, 2]),
    )


def _play(instance, team):
    episode = BENCH.new_episode(instance)
    seen = []  # (t, role, candidate ids) of every decision
    while not episode.done:
        role = next(r for r in BENCH.roles if episode.acting(r))
        kw = SIG[role].to_kwargs(episode.observe(role))
        ids = {"A": "project_ids", "B": "task_ids", "C": "worker_ids"}[role]
        seen.append((episode.state.t, role, [int(j) for j in kw[ids]]))
        episode.step({r: team[r](episode.observe(r)) if r == role else None for r in BENCH.roles})
    return episode, seen


def test_the_two_chain_tails_differ_only_by_rounding():
    inst = two_chains()
    x, y, z = (float(inst.duration[i]) / sim.speed(int(inst.level[w, inst.skill[i]])) for i, w in ((0, 0), (1, 0), (2, 0)))
    first, second = (x + y) + z, (y + z) + x
    assert first != second and abs(first - second) < 1e-13  # the premise: floats disagree
    assert Fraction(x) + Fraction(y) + Fraction(z) == Fraction(y) + Fraction(z) + Fraction(x)  # exact sums agree


def test_completions_equal_in_exact_arithmetic_are_one_event():
    episode, seen = _play(two_chains(), seed_team("mrcps"))
    state = episode.state
    tails = state.finish[[2, 6]]
    assert tails[0] != tails[1] and abs(tails[0] - tails[1]) < 1e-13
    # Both follow-ups start at the same event, the later of the two tail completions.
    assert state.start[3] == state.start[7] == tails.max()
    # At that event role A chooses between both projects, and the first C between both workers.
    at = [(role, ids) for t, role, ids in seen if t == tails.max()]
    assert ("A", [0, 1]) in at
    assert ("C", [0, 1]) in at
    # No overlap: every task starts once all its predecessors are complete (exactly).
    for i, j in zip(*np.nonzero(two_chains().pred), strict=True):
        assert state.start[i] >= state.finish[j]
    assert sim.cost(episode.instance, state.worker, state.start) == pytest.approx(episode.objective(), rel=1e-12)


def test_next_event_window():
    assert sim.next_event(np.array([5.0, 5.0 + 4e-9, 6.0])) == 5.0 + 4e-9
    assert sim.next_event(np.array([5.0, 5.0 + 6e-9, 6.0])) == 5.0
    assert sim.next_event(np.array([0.1, 0.1 + 5e-10])) == 0.1 + 5e-10  # absolute 1e-9 below t = 1
    assert sim.next_event(np.array([7.0])) == 7.0


def test_jax_builds_the_same_schedule():
    pytest.importorskip("jax")
    from relic_envs.co.mrcps import jax_eval

    inst = two_chains()
    episode, _ = _play(inst, seed_team("mrcps"))
    out = jax_eval.evaluator(jax_eval.seed_policies())(jax_eval.stack([inst]))
    for key in ("worker", "start", "finish", "span"):
        np.testing.assert_array_equal(out.schedule[key][0], getattr(episode.state, key), err_msg=key)
    np.testing.assert_allclose(out.objective[0], episode.objective(), rtol=1e-12)
