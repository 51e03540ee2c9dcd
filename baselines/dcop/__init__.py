"""DCOP comparators: the paper's human baselines (DSA-B, LSGA-DSA, Appendix D.3), the
classical algorithms a DCOP researcher compares against (DSA-A/B/C, MGM, MGM-2,
Max-Sum) and CP-SAT optimum references (``baselines.dcop.cpsat``, extra ``solvers``)."""

from baselines.dcop.configs import make_solver
from baselines.dcop.dsa import DSA, dsa_team, solve_dsa
from baselines.dcop.lsga import LSGA, LSGATeam, solve_lsga
from baselines.dcop.maxsum import MaxSum
from baselines.dcop.mgm import MGM, MGM2
from baselines.dcop.sweep import CentralTeam, SweepSolver, run_sweeps, solve

__all__ = [
    "DSA", "LSGA", "LSGATeam", "MGM", "MGM2", "CentralTeam", "MaxSum", "SweepSolver",
    "dsa_team", "make_solver", "run_sweeps", "solve", "solve_dsa", "solve_lsga",
]
