"""IPPO and MAPPO trained entirely in JAX on the functional envs; trained policies as comparators.

    python -m baselines.rl train dgc --algo ippo --steps 200000 --out runs/dgc_ippo
    python -m baselines.rl eval runs/dgc_ippo

See docs/rl.md ("IPPO and MAPPO").
"""

from baselines.rl.policy import RLTeam, evaluate_checkpoint, load, save
from baselines.rl.ppo import Config, train

__all__ = ["Config", "RLTeam", "evaluate_checkpoint", "load", "save", "train"]
