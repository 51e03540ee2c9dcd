"""EoH-ind.'s own rules: rank-based parent selection and greedy survival."""

from __future__ import annotations

import numpy as np

from baselines.ahd._search import Candidate
from baselines.ahd.eoh import Population


def test_operators_select_parents_by_rank_and_keep_the_best_distinct():
    pop = Population([Candidate(i, f"src{i}", f"t{i}", score, 1) for i, score in enumerate([1.0, 5.0, 3.0, 5.0])])
    pop.manage(size=2)
    assert [c.id for c in pop.members] == [1, 2]  # duplicates of a score dropped (id 3), best 2 kept
    draws = [pop.select(1, np.random.default_rng(k))[0].id for k in range(4000)]
    # prob_rank: weights 1/(0+1+2) and 1/(1+1+2), i.e. 4/7 and 3/7
    assert abs(draws.count(1) / len(draws) - 4 / 7) < 0.03
    assert len({c.id for c in pop.select(2, np.random.default_rng(0))}) == 2
