"""relic-envs: the 14 cooperative multi-agent benchmarks of the RELIC paper.

>>> import relic_envs
>>> "dgc" in relic_envs.names()
True
"""

from relic_envs.core import *  # noqa: F403
from relic_envs.core import __all__ as _core_all
from relic_envs.core.registry import register_pettingzoo
from relic_envs.core.splits import Splits, splits

__version__ = "0.1.0"
__all__ = [*_core_all, "Splits", "splits", "__version__"]

register_pettingzoo()
