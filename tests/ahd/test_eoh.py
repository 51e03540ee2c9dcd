"""EoH-ind.'s own rules: rank-based parent selection and greedy survival."""

from __future__ import annotations

import types

import numpy as np

from baselines.ahd._search import Candidate
from baselines.ahd.eoh import EoHInd, Population


def test_operators_select_parents_by_rank_and_keep_the_best_distinct():
    pop = Population([Candidate(i, f"src{i}", f"t{i}", score, 1) for i, score in enumerate([1.0, 5.0, 3.0, 5.0])])
    pop.manage(size=2)
    assert [c.id for c in pop.members] == [1, 2]  # duplicates of a score dropped (id 3), best 2 kept
    draws = [pop.select(1, np.random.default_rng(k))[0].id for k in range(4000)]
    # prob_rank: weights 1/(0+1+2) and 1/(1+1+2), i.e. 4/7 and 3/7
    assert abs(draws.count(1) / len(draws) - 4 / 7) < 0.03
    assert len({c.id for c in pop.select(2, np.random.default_rng(0))}) == 2  # without replacement (MCTS-AHD's use)


def test_e1_e2_parents_are_drawn_with_replacement_as_eohs_random_choices():
    pop = Population([Candidate(i, f"src{i}", f"t{i}", float(i), 1) for i in range(2)])
    pairs = [tuple(c.id for c in pop.select(2, np.random.default_rng(k), replace=True)) for k in range(2000)]
    # P(the same parent twice) = (4/7)^2 + (3/7)^2 = 25/49 with weights 1/3 and 1/4
    assert abs(sum(a == b for a, b in pairs) / len(pairs) - 25 / 49) < 0.04
    # the search itself: E1 on a one-program population shows that program twice (EoH's m = 2 draws)
    fake = types.SimpleNamespace(state=types.SimpleNamespace(roles={"A": Population([pop.members[0]])}),
                                 targets={"A": "[Target Function]"})
    offer = EoHInd.prompt(fake, "A", 0, np.random.default_rng(0))
    only = pop.members[0].id
    assert offer.operator == "e1" and offer.parents == (only, only) and "I have 2 existing algorithms" in \
        offer.messages[-1]["content"]
