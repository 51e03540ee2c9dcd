"""DGC roles: A repairs high-risk conflicts, B takes improvement opportunities, C keeps
coordination stable (Appendix B.4). Features are defined in ``relic_envs.dcop._features``.
"""

from __future__ import annotations

import numpy as np

from relic_envs.dcop import _features
from relic_envs.dcop._sweep import DCOPProblem, SweepContext
from relic_envs.dcop.dgc import generator, simulator

PURPOSES = {
    "A": "high-risk conflict repair",
    "B": "improvement opportunity",
    "C": "coordination stability",
}


class DGCProblem(DCOPProblem, instance=generator.DGCInstance, simulator=simulator):
    domain = simulator.N_COLORS
    purposes = PURPOSES
    role_features = _features.ROLE_FEATURES

    def worst_cost(self, instance):
        return float(np.abs(instance.weights).sum())  # every edge monochromatic

    def features(self, ctx: SweepContext, role: str, idx: np.ndarray):
        directed, count = ctx.instance_cache("peers", lambda: _features.peer_stats(self.peers(ctx.instance), ctx.x.size))
        return _features.graph_features(ctx, role, idx, lambda: ctx.landscape, directed, count)
