"""MCTS-AHD-ind.'s tree rules: back-propagation, subtrees, progressive widening, UCT, re-scoring; the initial
tree, its parents and the duplicates the reference rejects; the s1 path."""

from __future__ import annotations

import math
import types

import numpy as np

from baselines.ahd._search import Candidate, Offer
from baselines.ahd.mcts_ahd import LEAF_ACTIONS, MctsAhdInd, Tree


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


def _search(tree: Tree, proposals: int = 10):
    """A MctsAhdInd holding one role's tree, without a run directory (prompt and accept only)."""
    search = MctsAhdInd.__new__(MctsAhdInd)
    search.state = types.SimpleNamespace(roles={"A": tree}, b=1)
    search.targets = {"A": "[Target Function]"}
    search.config = types.SimpleNamespace(batches=5, proposals=proposals)
    search.run = types.SimpleNamespace(events=[], event=lambda kind, **f: search.run.events.append((kind, f)))
    return search


def test_initial_e1_parents_are_drawn_uniformly_with_replacement():
    """The reference's get_algorithm draws 2..m initial e1 parents by parent_selection_e1: weights 1, random.choices."""
    tree = Tree()
    tree.add(_c(0, 1.0), None)
    tree.add(_c(1, 9.0), None)
    search = _search(tree)
    draws = []
    for k in range(2000):
        tree.made, tree.queue = 0, []
        offer = search.prompt("A", 0, np.random.default_rng(k))
        assert offer.operator == "e1" and len(offer.parents) == 2  # min(randint(2, 5), |depth-1 nodes|)
        draws.append(offer.parents)
    assert abs(sum(a == b for a, b in draws) / len(draws) - 0.5) < 0.04  # the same program twice: 1/2
    assert abs(sum(p.count(0) for p in draws) / (2 * len(draws)) - 0.5) < 0.03  # uniform, not by rank


def test_an_e1_child_with_a_depth1_score_is_discarded_and_charged():
    """The reference's check_duplicate_obj(mcts.root.children_info, ...): an e1 child scoring like a depth-1 node is no
    node. The initial phase is three proposals whatever they give (the reference retries without bound)."""
    tree = Tree()
    tree.add(_c(0, 1.0), None)
    search = _search(tree)
    rng = np.random.default_rng(0)
    for made, (child, nodes) in enumerate([(_c(1, 2.0), 2), (_c(2, 1.0), 2), (_c(3, 2.0), 2)]):
        assert search._next_action(tree) == (-1, "e1") and tree.queue == []
        offer = search.prompt("A", made, rng)
        search.accept("A", offer, child, rng)
        assert len(tree.root_children) == nodes
    assert [f["child"] for kind, f in search.run.events if kind == "discarded"] == [2, 3]
    assert search._next_action(tree)[1] == "e2"  # the first MCTS iteration: the leaf's actions
    tree.queue = []
    for k in range(7):  # 9 root visits: int(9 ** 0.5) > 2 children, progressive widening asks for e1 again
        tree.add(_c(10 + k, 0.5), tree.root_children[0])
    assert tree.plan(remaining=1.0)[0] == (-1, "e1")
    search.accept("A", Offer([], "e1", (0,)), _c(4, 2.0), rng)  # a widening e1 is checked the same way
    assert len(tree.root_children) == 2 and search.run.events[-1][1]["child"] == 4


def test_a_child_with_the_code_of_an_elite_program_is_discarded():
    tree = Tree()
    a = tree.add(_c(0, 1.0), None)
    search = _search(tree)
    search.accept("A", Offer([], "m2", (0,)), Candidate(1, "src0", "", 1.0, 1, "m2", (0,)), np.random.default_rng(0))
    assert len(tree.nodes) == 1 and search.run.events[-1][1]["child"] == 1  # the reference's check_duplicate
    search.accept("A", Offer([], "m2", (0,)), _c(2, 0.5), np.random.default_rng(0))
    assert tree.nodes[-1].parent == a and tree.nodes[-1].program.id == 2


def test_s1_shows_the_path_once_per_description_worst_first_and_is_skipped_when_one_program_remains():
    tree = Tree()
    a = tree.add(Candidate(0, "src0", "greedy by distance", 2.0, 1), None)
    b = tree.add(Candidate(1, "src1", "greedy by distance", 3.0, 1), a)  # the same description as its parent
    c = tree.add(Candidate(2, "src2", "serve the oldest first", 1.0, 1), b)
    for k in range(3):  # past the initial phase
        tree.add(Candidate(10 + k, f"src{10 + k}", f"other idea {k}", 0.0, 1), None)
    tree.made, tree.queue = 10, [(b, "s1"), (c, "s1")]
    search = _search(tree)
    offer = search.prompt("A", 0, np.random.default_rng(0))
    # b's path has one description left: skipped without a call; c's: population_management_s1 keeps one
    # program per description (the deepest) and orders them by cost, largest first: worst score first
    assert tree.queue == [] and offer.operator == "s1" and offer.parents == (2, 1)
    text = offer.messages[-1]["content"]
    assert "I have 2 existing" in text and text.index("serve the oldest first") < text.index("greedy by distance")
    search.accept("A", offer, _c(3, 5.0), np.random.default_rng(0))
    assert tree.nodes[-1].parent == c  # the node s1 expanded: the deepest of the programs shown
    assert [p.id for p in tree.s1_programs(b)] == [1]
