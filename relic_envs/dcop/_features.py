"""Role features shared by DGC and DiMES (same three signatures in the paper).

Definitions (``i`` a variable the role owns, ``V`` the benchmark's *violation*
landscape: the constraint-penalty part of ``delta``; for DGC all of it, for DiMES the
off-majority and travel terms without preference costs):

- ``violation_now`` (m,): ``V[i, x_i]``, the penalty cost the variable is in now.
- ``repair_gain`` (m, domain): ``V[i, x_i] - V[i, v]``; positive where value ``v``
  repairs violations.
- ``opportunity_gain`` (m, domain): ``delta[i, x_i] - delta[i, v]``, the exact
  decrease of the global cost if only ``i`` moved to ``v``.
- ``flexibility`` (m,): how many values reach the least violation ``min_v V[i, v]``
  (within 1e-9); for DGC, the number of least-conflicted colours.
- ``peer_value_hist`` (m, domain): how many of ``i``'s peers (variables sharing a cost
  term with it) hold each value now.
- ``peer_churn_rate`` (m,): the fraction of ``i``'s peers whose value changed in the
  last sweep (0 at ``t = 0``).
- ``local_trend`` (m,): ``delta_t[i, x_i(t)] - delta_{t-1}[i, x_i(t-1)]``, the change
  of ``i``'s local cost over the last sweep (negative = improving; 0 at ``t = 0``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from relic_envs.dcop._sweep import Feature, SweepContext, per_value, per_var

FEATURES_A = (
    Feature("violation_now", "float64 (m,): penalty (constraint-violation) cost at the current value", per_var, low=0.0),
    Feature("repair_gain", "float64 (m, domain): penalty cost removed by switching to each value", per_value),
)
FEATURES_B = (
    Feature("opportunity_gain", "float64 (m, domain): global cost decrease of switching to each value", per_value),
    Feature("flexibility", "float64 (m,): number of values with the least penalty cost", per_var, low=0.0),
)
FEATURES_C = (
    Feature("peer_value_hist", "float64 (m, domain): number of peers holding each value now", per_value, low=0.0),
    Feature("peer_churn_rate", "float64 (m,) in [0,1]: fraction of peers that changed value last sweep", per_var, low=0.0, high=1.0),
    Feature("local_trend", "float64 (m,): change of the local cost at the current value since last sweep", per_var),
)
ROLE_FEATURES = {"A": FEATURES_A, "B": FEATURES_B, "C": FEATURES_C}


def peer_stats(peers: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Both directions of every peer pair, and each variable's peer count."""
    src = np.concatenate([peers[:, 0], peers[:, 1]])
    dst = np.concatenate([peers[:, 1], peers[:, 0]])
    return np.stack([src, dst], axis=1), np.bincount(src, minlength=n)


def graph_features(
    ctx: SweepContext,
    role: str,
    idx: np.ndarray,
    violation: Callable[[], np.ndarray],
    directed_peers: np.ndarray,
    peer_count: np.ndarray,
) -> dict[str, np.ndarray]:
    """The features of ``role`` for variables ``idx`` (see the module doc)."""
    rows = np.arange(idx.size)
    x = ctx.x
    if role == "A":
        v = ctx.cache("violation", violation)[idx]
        now = v[rows, x[idx]]
        return {"violation_now": now, "repair_gain": now[:, None] - v}
    if role == "B":
        delta = ctx.landscape[idx]
        v = ctx.cache("violation", violation)[idx]
        flexible = v <= v.min(axis=1, keepdims=True) + 1e-9
        return {
            "opportunity_gain": delta[rows, x[idx]][:, None] - delta,
            "flexibility": flexible.sum(axis=1).astype(np.float64),
        }
    n, d = x.size, ctx.problem.domain
    src, dst = directed_peers[:, 0], directed_peers[:, 1]
    hist = np.bincount(src * d + x[dst], minlength=n * d).reshape(n, d).astype(np.float64)
    changed = np.bincount(src, weights=(x[dst] != ctx.x_prev[dst]).astype(np.float64), minlength=n)
    churn = changed / np.maximum(peer_count, 1)
    trend = ctx.local_cost - ctx.prev.local_cost if ctx.prev is not None else np.zeros(n)
    return {"peer_value_hist": hist[idx], "peer_churn_rate": churn[idx], "local_trend": trend[idx]}
