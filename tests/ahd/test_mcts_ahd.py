"""MCTS-AHD-ind.'s tree rules: back-propagation, subtrees, progressive widening, UCT, re-scoring."""

from __future__ import annotations

import math

from baselines.ahd._search import Candidate
from baselines.ahd.mcts_ahd import LEAF_ACTIONS, Tree


def _c(i: int, score: float) -> Candidate:
    return Candidate(i, f"src{i}", "", score, 1)


def test_backpropagation_sets_best_child_q_and_counts_visits():
    tree = Tree()
    a = tree.add(_c(0, 1.0), None)
    b = tree.add(_c(1, 5.0), a)
    c = tree.add(_c(2, 3.0), a)
    d = tree.add(_c(3, 0.5), b)
    # A node's Q is its best child's Q (discount 1): b now has one child of Q 0.5, so b.Q = 0.5 and a.Q = max(0.5, 3).
    assert tree.nodes[b].Q == 0.5 and tree.nodes[a].Q == 3.0
    assert tree.nodes[a].visits == 4 and tree.nodes[b].visits == 2 and tree.root_visits == 4
    assert tree.nodes[a].subtree == [a, b, c, d]
    assert [m.id for m in tree.elite.members] == [1, 2, 0, 3]
    tree.nodes[d].program.score = 9.0  # a new batch: scores change, Q recomputed leaves up
    tree.requalify()
    assert tree.nodes[b].Q == 9.0 and tree.nodes[a].Q == 9.0


def test_plan_widens_the_root_then_expands_the_uct_leaf():
    tree = Tree()
    a = tree.add(_c(0, 1.0), None)
    tree.add(_c(1, 2.0), None)
    # root: 2 visits, 2 children: int(2 ** 0.5) = 1 is not > 2, so no widening; leaf = the better child
    plan = tree.plan(remaining=1.0)
    assert plan == [(1, op) for op in LEAF_ACTIONS]
    for k in range(3):
        tree.add(_c(10 + k, 0.0), a)
    # root has 5 visits now: int(5 ** 0.5) = 2, still not > 2 children
    assert all(op != "e1" for _, op in tree.plan(remaining=1.0))
    for k in range(5):
        tree.add(_c(20 + k, 0.0), a)
    # 10 visits: int(10 ** 0.5) = 3 > 2 children: widen the root with e1 before descending
    assert tree.plan(remaining=1.0)[0] == (-1, "e1")


def test_uct_normalises_q_and_decays_exploration():
    tree = Tree()
    a = tree.add(_c(0, -10.0), None)
    b = tree.add(_c(1, -2.0), None)
    assert tree.uct(b, tree.root_visits, remaining=0.0) == 1.0 and tree.uct(a, tree.root_visits, 0.0) == 0.0
    bonus = 0.1 * 0.5 * math.sqrt(math.log(tree.root_visits + 1) / 1)
    assert math.isclose(tree.uct(a, tree.root_visits, remaining=0.5), bonus)
