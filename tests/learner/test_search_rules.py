"""Selection and update rules of the RELIC search against hand-computed values
(Eqs. 4, 5, 7, 11, 12, 13 and Appendix C.2/C.4)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from relic_learner.principles import Archive, PublicTree, parse_principles
from relic_learner.relic import RelicConfig, available_operators, corrupt, operator_table
from relic_learner.trees import Node, PrivateTree, node_uct, operator_uct

OPS = ["lift", "bridge", "reflect"]


def test_node_uct_by_hand():
    parent = Node(0, "", None, 0, N=7)
    child = Node(1, "", 0, 1, N=3, Q=0.5)
    assert node_uct(child, parent, 1.0) == pytest.approx(0.5 + math.sqrt(math.log(7) / 3))
    assert node_uct(child, parent, 2.0) == pytest.approx(0.5 + 2 * math.sqrt(math.log(7) / 3))
    assert node_uct(Node(2, "", 0, 1, N=0), parent, 1.0) == math.inf  # unvisited first


def test_operator_uct_by_hand_and_untried_first():
    node = Node(0, "", None, 0, N_op={"lift": 2, "reflect": 3}, Q_op={"lift": 1.0, "reflect": 2.0})
    total = 2 + 3  # bridge is unavailable, so it does not count in the sum
    assert operator_uct(node, "lift", ["lift", "reflect"], 1.0) == pytest.approx(1.0 + math.sqrt(math.log(total) / 2))
    assert operator_uct(node, "bridge", OPS, 1.0) == math.inf
    tree = PrivateTree("A", "seed")
    assert tree.select_operator(node, OPS) == "bridge"  # the untried one
    # all tried: reflect's 2 + sqrt(ln5/3) = 2.732 beats lift's 1 + sqrt(ln5/2) = 1.897
    assert tree.select_operator(node, ["lift", "reflect"]) == "reflect"


def test_add_child_sets_q_to_gain_counts_ancestors_and_applies_eq13():
    tree = PrivateTree("A", "seed")
    root = tree.root
    a = tree.add_child(root, "a", 2.0, "reflect", batch=1)
    b = tree.add_child(a, "b", -1.0, "reflect", batch=1)
    assert (a.Q, b.Q) == (2.0, -1.0)  # Eq. 7, never replaced by descendants
    assert (root.N, a.N, b.N) == (3, 2, 1)  # ancestors' visits incremented
    tree.add_child(root, "c", 4.0, "reflect", batch=1)
    assert root.N_op["reflect"] == 2 and root.Q_op["reflect"] == pytest.approx(3.0)  # (2 + 4) / 2
    tree.record_failure(root, "lift")
    assert root.N_op["lift"] == 1 and "lift" not in root.Q_op and len(tree.nodes) == 4  # no child, no reward
    tree.add_child(root, "d", 3.0, "lift", batch=2)
    # Eq. 13 over the valid attempts ("no synthetic reward" for the failure); N_op = 2 counts both
    assert root.Q_op["lift"] == pytest.approx(3.0) and root.N_op["lift"] == 2


def test_eq13_does_not_depend_on_the_order_of_failures_and_successes():
    """A failure before a success must not halve the success (it did when Eq. 13 divided by N_op)."""
    first, second = PrivateTree("A", "seed"), PrivateTree("A", "seed")
    first.add_child(first.root, "a", 4.0, "lift", batch=1)
    first.record_failure(first.root, "lift")
    first.add_child(first.root, "b", 2.0, "lift", batch=1)
    second.record_failure(second.root, "lift")
    second.add_child(second.root, "a", 4.0, "lift", batch=1)
    second.add_child(second.root, "b", 2.0, "lift", batch=1)
    for tree in (first, second):
        assert tree.root.Q_op["lift"] == pytest.approx(3.0) and tree.root.N_op["lift"] == 3


def test_a_program_that_once_won_stays_a_revalidation_candidate():
    """C.1 revalidates "previously successful programs"; revalidation resets the winner's Q to 0."""
    tree = PrivateTree("A", "seed")
    won = tree.add_child(tree.root, "won", 2.5, "reflect", batch=1)
    lost = tree.add_child(tree.root, "lost", -1.0, "reflect", batch=1)
    won.Q = 0.0  # what revalidation does to the incumbent it picks
    assert tree.successful() == [won] and won.gain == 2.5 and lost not in tree.successful()


def test_descent_stops_at_the_first_expandable_node():
    tree = PrivateTree("A", "seed", c_node=1.0)
    root = tree.root
    assert tree.select_node(["reflect"]) is root  # no child yet
    good = tree.add_child(root, "good", 5.0, "reflect", batch=1)
    tree.add_child(root, "bad", -5.0, "reflect", batch=1)
    assert tree.select_node(["reflect"]) is good  # root tried reflect and has children: descend by U_node
    assert tree.select_node(["lift", "reflect"]) is root  # a new operator makes the root expandable again
    for op in ("lift", "reflect"):
        tree.record_failure(good, op)
    grand = tree.add_child(good, "g", 1.0, "reflect", batch=1)
    assert tree.select_node(["reflect"]) is grand  # root -> good (higher U_node) -> grand (no child yet)


def test_depth_limit():
    tree = PrivateTree("A", "seed", max_depth=2)
    a = tree.add_child(tree.root, "a", 1.0, "reflect", batch=1)
    tree.add_child(a, "b", 1.0, "reflect", batch=1)
    # the root and a have tried reflect and have children; b sits at the limit, so a is expanded
    assert tree.select_node(["reflect"]) is a


def test_tree_round_trips_through_dict():
    tree = PrivateTree("B", "seed")
    tree.add_child(tree.root, "x", 1.0, "lift", batch=1, public_id=3)
    again = PrivateTree.from_dict(tree.to_dict())
    assert again.to_dict() == tree.to_dict()


def test_public_retrieval_untried_first_never_own_then_uct():
    pub = PublicTree(c_pub=1.0)
    p1 = pub.add("one", "STRATEGY", "A", 1, "distill")
    p2 = pub.add("two", "PATTERN", "B", 1, "distill")
    p3 = pub.add("three", "COORDINATION", "C", 1, "cross_distill")
    rng = np.random.default_rng(0)
    assert [n.id for n in pub.eligible("A")] == [p2.id, p3.id]
    assert pub.select("A", rng) is p2  # untried, oldest first
    pub.retrieve(p2.id)
    pub.endorse(p2.id, 3.0)
    assert pub.select("A", rng) is p3
    pub.retrieve(p3.id)
    pub.retrieve(p3.id)
    pub.endorse(p3.id, -2.0)  # negative gain never endorses
    assert p3.E == 0.0
    # U(p2) = 3/1 + sqrt(ln 3 / 1) = 4.048 ; U(p3) = 0/2 + sqrt(ln 3 / 2) = 0.741
    assert pub.select("A", rng) is p2
    assert p1 not in pub.eligible("A")


def test_lineage_and_pruning_keep_internal_nodes_and_five_nodes():
    pub = PublicTree()
    base = pub.add("base", "STRATEGY", "A", 1, "distill")
    child = pub.add("refined", "STRATEGY", "B", 2, "distill", parent=base.id)
    assert child.parent == base.id and base.children == [child.id]
    leaves = [pub.add(f"p{k}", "PATTERN", "C", 2, "cross_distill") for k in range(5)]
    for node in (child, *leaves):
        pub.retrieve(node.id)  # all measured once
    leaves[0].E = 0.9  # above the threshold: kept
    removed = pub.prune(threshold=0.5, keep=5)
    # live: base (internal), refined, p0..p4 = 7; weak leaves: refined, p1..p4 (E = 0); two go, oldest first
    assert removed == [child.id, leaves[1].id]
    assert len(pub.live()) == 5 and base in pub.live()  # internal when pruning started: kept
    assert pub.prune(threshold=0.5, keep=5) == []  # never below five
    flat = PublicTree(flat=True)
    assert flat.add("x", "PATTERN", "A", 1, "distill", parent=5).parent == 0 and flat.prune() == []


def test_pruning_spares_principles_nobody_has_retrieved_yet():
    """Pruning runs right after Distill adds fresh principles (E = 0): they must reach Bridge first."""
    pub = PublicTree()
    unretrieved = [pub.add(f"new{k}", "STRATEGY", "B", 2, "distill") for k in range(4)]  # the oldest ids
    tried = [pub.add(f"old{k}", "PATTERN", "A", 2, "distill") for k in range(4)]
    for node in tried:
        pub.retrieve(node.id)
    tried[0].E = 2.0
    removed = pub.prune(threshold=0.5, keep=5)
    assert removed == [tried[1].id, tried[2].id, tried[3].id]  # measured and weak
    assert all(n in pub.live() for n in unretrieved)
    pub.retrieve(unretrieved[0].id)  # retrieved once, no gain: now it may go
    assert pub.prune(threshold=0.5, keep=0) == [unretrieved[0].id]


def test_parse_principles():
    text = "TYPE: STRATEGY\nPRINCIPLE: Act early.\n\nTYPE: coordination\nPRINCIPLE: Split the\n work.\nTYPE: PATTERN\nPRINCIPLE: x"
    assert parse_principles(text) == [("STRATEGY", "Act early."), ("COORDINATION", "Split the work.")]
    assert parse_principles("plain words") == [("STRATEGY", "plain words")]
    assert parse_principles("") == []


def test_operator_availability_follows_context_and_switches():
    cfg = RelicConfig(env="dgc")
    archive, pub = Archive(), PublicTree()
    assert available_operators(cfg, archive, pub, "A") == ["reflect"]  # batch 1 begins with Reflect only
    archive.append("B", "text", 1)
    pub.add("mine", "PATTERN", "A", 1, "distill")
    assert available_operators(cfg, archive, pub, "A") == ["lift", "reflect"]  # own principle not eligible
    pub.add("theirs", "PATTERN", "C", 1, "distill")
    assert available_operators(cfg, archive, pub, "A") == OPS
    assert available_operators(RelicConfig(env="dgc", communication="nopeer"), archive, pub, "A") == ["reflect"]
    assert available_operators(RelicConfig(env="dgc", ablation="no_bridge"), archive, pub, "A") == ["lift", "reflect"]
    assert available_operators(RelicConfig(env="dgc", ablation="no_reflect"), Archive(), PublicTree(), "A") == ["refine"]


def test_config_rejects_bad_values():
    for bad in ({"env": "nope"}, {"env": "dgc", "batches": 0}, {"env": "dgc", "ablation": "x"},
                {"env": "dgc", "communication": "x"}, {"env": "dgc", "interface": "alt"}, {"env": "dgc", "c_pub": 0}):
        with pytest.raises(ValueError):
            RelicConfig(**bad)


def test_corrupt_inverts_directions():
    assert corrupt("prefer lower cost").startswith("avoid higher cost")


def test_operator_table_by_hand():
    proposals = [
        {"operator": "lift", "status": "ok", "gain": 2.0, "relative_gain": 0.02},
        {"operator": "lift", "status": "ok", "gain": -1.0, "relative_gain": -0.01},
        {"operator": "reflect", "status": "ok", "gain": 6.0, "relative_gain": 0.06},
        {"operator": "reflect", "status": "invalid"},
    ]
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]] for line in operator_table(proposals).splitlines()[2:]}
    assert rows["lift"] == ["50.0%", "50.0%", "2.00%", "25.0%", "50.0%", "0.0%"]
    assert rows["reflect"] == ["50.0%", "50.0%", "6.00%", "75.0%", "0.0%", "50.0%"]
    assert rows["bridge"][0] == "0.0%"
