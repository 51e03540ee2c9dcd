"""The MOTIF control's competitive tree: turns, rewards, credit, the dynamic baseline."""

from __future__ import annotations

import math

import numpy as np

from baselines.ahd._search import Candidate
from baselines.ahd.motif import OPERATORS, Arena, Node, value


def _c(i: int, score: float) -> Candidate:
    return Candidate(i, f"src{i}", f"idea {i}", score, 1)


def _arena(baseline=10.0) -> Arena:
    seed = _c(0, baseline)
    return Arena(nodes=[Node({"P1": seed, "P2": seed}, "P1")], best={"P1": seed, "P2": seed}, baseline=baseline,
                 baseline_program=seed)


def test_value_mixes_own_improvement_and_the_lead_over_the_opponent():
    assert math.isclose(value(0.0, 0.0), 0.5)
    assert math.isclose(value(1.0, 0.0), 0.7 / (1 + math.exp(-10)) + 0.3 / (1 + math.exp(-10)))
    assert value(0.2, 0.5) < value(0.2, 0.0)


def test_turns_alternate_and_each_node_holds_its_creators_value():
    arena, rng = _arena(), np.random.default_rng(0)
    i, op = arena.select(rng)
    assert i == 0 and op in OPERATORS
    arena.expand(0, op, _c(1, 11.0), "better")  # P1 moves: +10 % (0.1)
    child = arena.nodes[1]
    assert child.active == "P2" and child.programs["P1"].id == 1 and child.programs["P2"].id == 0
    assert math.isclose(child.q, value(0.1, 0.0)) and arena.nodes[0].visits == 1
    arena.expand(1, "counter", None, "")  # P2 fails: improvement -1, P2 keeps its program
    grandchild = arena.nodes[2]
    assert grandchild.active == "P1" and grandchild.programs["P2"].id == 0
    assert math.isclose(grandchild.q, value(-1.0, 0.1))  # created by P2
    assert math.isclose(arena.nodes[1].total, value(0.1, 0.0) + value(0.1, -1.0))  # P1's view of the same outcome
    assert arena.best["P1"].id == 1 and arena.attempts[-1] == {
        "player": "P2", "operator": "counter", "summary": "", "improvement": -1.0, "valid": False, "code": ""}


def test_selection_tries_every_operator_before_descending_and_rebase_resets_statistics():
    arena, rng = _arena(), np.random.default_rng(1)
    for k in range(3):
        i, op = arena.select(rng)
        assert i == 0
        arena.expand(0, op, _c(k + 1, 10.0 + k), f"m{k}")
    assert sorted(arena.nodes[0].tried) == sorted(OPERATORS)
    i, _ = arena.select(rng)
    assert i == 3  # all operators tried at the root: the child with the best Q (P1 at +20 %), then its operators
    arena.rebase(arena.nodes[3].programs["P1"], 12.0)
    assert arena.baseline == 12.0 and all(n.visits == 0 and n.total == 0 for n in arena.nodes)
    assert arena.baseline_program.id == 3  # the program shown as the baseline moves with its score
    assert math.isclose(arena.improvement(arena.nodes[3].programs["P1"]), 0.0)
