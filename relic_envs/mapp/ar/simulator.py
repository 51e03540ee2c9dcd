"""MAPP-AR reward (Eqs. mapp-ar-update, mapp-ar).

``u^(0)`` is 0 at the depot, 1 elsewhere. A scan at node ``s`` updates every node
``u_j <- u_j (1 - rho_sj)`` with ``rho_sj = exp(-l_sj^2 / (2 sigma^2))``, then sets
``u_s = u_0 = 0``. Scans are applied one at a time in rollout order (A, B, C within a
step), so two agents scanning in one step, or one node scanned twice by different
agents, apply the update twice. ``R_AR = U_0 - U_T = (N - 1) - sum_j u_j``.
"""

from __future__ import annotations

import numpy as np

from relic_envs.core.numerics import exp


def correlation(dist: np.ndarray, sigma: float) -> np.ndarray:
    """``rho_sj`` for every pair, with the CPU-independent ``exp`` (see CONTRIBUTING.md)."""
    return exp(-(dist * dist) / (2.0 * sigma * sigma))


def init_dynamic(instance, dist) -> dict[str, np.ndarray]:
    n = instance.n_nodes
    u = np.ones(n, dtype=np.float64)
    u[0] = 0.0
    return {"u": u, "scanned": np.zeros(n, dtype=bool), "rho": correlation(dist, instance.sigma)}


def scan(u: np.ndarray, rho_row: np.ndarray, node: int) -> None:
    """One scan event at ``node``, in place."""
    u *= 1.0 - rho_row
    u[node] = 0.0
    u[0] = 0.0


def arrive(instance, dyn, node: int, t: int) -> None:
    scan(dyn["u"], dyn["rho"][node], node)
    dyn["scanned"][node] = True


def objective(instance, dyn) -> float:
    return float((instance.n_nodes - 1) - np.sum(dyn["u"]))


def node_view(instance, dyn, t: int) -> dict[str, np.ndarray]:
    unscanned = ~dyn["scanned"]
    unscanned[0] = False
    return {"uncertainty": dyn["u"].copy(), "unscanned": unscanned}


def objective_bound(instance, dyn) -> float:
    """The largest reward any team can collect: all the initial uncertainty ``U_0``."""
    return float(instance.n_nodes - 1)
