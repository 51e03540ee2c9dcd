"""Human-designed DCOP baselines (Appendix D.3): DSA-B and LSGA-DSA."""

from baselines.dcop.dsa import DSA, dsa_team, solve_dsa
from baselines.dcop.lsga import LSGA, LSGATeam, solve_lsga

__all__ = ["DSA", "LSGA", "LSGATeam", "dsa_team", "solve_dsa", "solve_lsga"]
