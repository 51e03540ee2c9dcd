"""MAPP-DS reward (Eq. mapp-ds): value of the requests served while active.

Request ``rho`` (node ``i``, arrival ``tau``, value ``w``, time-to-live ``delta``) is
active through ``tau <= t <= tau + delta``. One hop is one step: an agent that decides
at epoch ``t`` arrives at time ``t + 1``, and on arrival the evaluator serves and
removes the highest-value active request at that node (ties: the earliest arrival),
if any. Two agents arriving at one node in one step are served in rollout order, so
the second gets the next-best request. Roles at epoch ``t`` observe, per node, the
most valuable request active at ``t`` and its remaining time-to-live ``tau + delta - t``.
"""

from __future__ import annotations

import numpy as np

from relic_envs.mapp.ds.generator import stream


def init_dynamic(instance, dist) -> dict[str, np.ndarray]:
    s = stream(instance)
    return {
        "fire": s.fire, "value": s.value, "expiry": s.expiry,
        "served": np.zeros_like(s.fire), "gained": np.zeros(1, dtype=np.float64),
    }


def active(dyn, t: int) -> np.ndarray:
    """``(H, N)`` bool: requests active at time ``t`` and not yet served."""
    tau = np.arange(dyn["fire"].shape[0])[:, None]
    return dyn["fire"] & ~dyn["served"] & (tau <= t) & (t <= dyn["expiry"])


def best(dyn, t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per node: the row of the best active request, its value (0 if none), and whether one exists."""
    score = np.where(active(dyn, t), dyn["value"], -np.inf)
    row = np.argmax(score, axis=0)  # first maximum = earliest arrival on ties
    top = score[row, np.arange(score.shape[1])]
    exists = np.isfinite(top)
    return row, np.where(exists, top, 0.0), exists


def arrive(instance, dyn, node: int, t: int) -> None:
    score = np.where(active(dyn, t)[:, node], dyn["value"][:, node], -np.inf)
    row = int(np.argmax(score))
    if np.isfinite(score[row]):
        dyn["served"][row, node] = True
        dyn["gained"][0] += dyn["value"][row, node]


def objective(instance, dyn) -> float:
    return float(np.sum(dyn["value"][dyn["served"]]))


def node_view(instance, dyn, t: int) -> dict[str, np.ndarray]:
    row, value, exists = best(dyn, t)
    ttl = np.where(exists, dyn["expiry"][row, np.arange(row.size)] - t, 0).astype(np.float64)
    released = float(np.sum(dyn["value"][: t + 1]))  # value of every request that has arrived by t
    return {"value": value, "ttl": ttl, "active": exists, "released": np.array(released), "served_value": dyn["gained"].copy()}


def objective_bound(instance, dyn) -> float:
    """The largest reward any team can collect: every request of the stream."""
    return float(np.sum(np.abs(dyn["value"])))
