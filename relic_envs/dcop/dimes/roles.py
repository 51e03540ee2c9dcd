"""DiMES roles: A current constraint risk, B exploitable cost reduction, C peer
agreement and stability (Appendix B.4). Same signatures and feature definitions as DGC
(``relic_envs.dcop._features``) over attendance variables.
"""

from __future__ import annotations

import numpy as np

from relic_envs.dcop import _features
from relic_envs.dcop._sweep import DCOPProblem, SweepContext
from relic_envs.dcop.dimes import generator, simulator

PURPOSES = {
    "A": "current constraint risk (off-majority and travel violations)",
    "B": "exploitable cost reduction",
    "C": "peer agreement and stability",
}


class DiMESProblem(DCOPProblem, instance=generator.DiMESInstance, simulator=simulator):
    domain = simulator.N_SLOTS
    purposes = PURPOSES
    role_features = _features.ROLE_FEATURES

    def worst_cost(self, instance):
        # Every attendance off its meeting's slot, every travel term at its full time,
        # every preference at its largest magnitude.
        off = simulator.OFF_SLOT_COST * instance.meeting.size
        travel = simulator.TRAVEL_COST * float(np.abs(simulator.travel_time(instance)[::2]).sum())
        return off + travel + float(np.abs(instance.pref).max(axis=1).sum())

    def features(self, ctx: SweepContext, role: str, idx: np.ndarray):
        directed, count = ctx.instance_cache("peers", lambda: _features.peer_stats(self.peers(ctx.instance), ctx.x.size))
        violation = lambda: simulator.violation(ctx.instance, ctx.x)  # noqa: E731
        return _features.graph_features(ctx, role, idx, violation, directed, count)
