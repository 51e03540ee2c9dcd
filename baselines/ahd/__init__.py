"""The paper's LLM comparators as role-isolated searches on RELIC's evaluator (Appendix D).

``METHODS`` maps each CLI name to its search class. Every method runs on the same
data, evaluator, LLM client, budget (ten proposals per role and batch, invalid ones
charged) and run directory as ``relic learn``; see :mod:`baselines.ahd._search`.
"""

from __future__ import annotations

from baselines.ahd._search import IsolatedSearch, SearchConfig
from baselines.ahd.eoh import EoHInd
from baselines.ahd.hifo import HiFoInd
from baselines.ahd.mcts_ahd import MctsAhdInd
from baselines.ahd.motif import MotifControl
from baselines.ahd.reevo import ReEvoInd

METHODS: dict[str, type[IsolatedSearch]] = {"eoh": EoHInd, "reevo": ReEvoInd, "mcts_ahd": MctsAhdInd, "hifo": HiFoInd, "motif": MotifControl}



def method(name: str) -> type[IsolatedSearch]:
    """The search class of a comparator name."""
    if name not in METHODS:
        raise ValueError(f"unknown comparator {name!r}; available: {sorted(METHODS)}")
    return METHODS[name]


__all__ = ["METHODS", "IsolatedSearch", "SearchConfig", "method"]
