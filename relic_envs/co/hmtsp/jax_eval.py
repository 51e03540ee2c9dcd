"""HMTSP in JAX: the functional twin of ``simulator.py`` + ``roles.py`` (paper interface).

Use through :func:`relic_envs.co.jax_eval.evaluate` or ``evaluator(policies)`` here. The
solution holds each customer's vehicle and position (``routes`` rebuilds the routes),
the route costs ``lengths`` and the count of ``forced`` assignments.
"""

from __future__ import annotations

import numpy as np

from relic_envs.co import _jax_construct as jc
from relic_envs.co import _jax_decisions as jd
from relic_envs.co._jax_decisions import jnp
from relic_envs.co.hmtsp.generator import VEHICLES
from relic_envs.co.hmtsp.simulator import BALANCE, EXCESS


class HMTSPJax(jc.JaxConstructProblem):
    name = "hmtsp"
    cyclic = True  # vehicle k = A, B, C decides turns k, k + 3, ... (skips and forced turns included)
    batched_loop = True  # one loop over the batch (JaxDecisionProblem.batched_loop)

    def arrays(self, instance):
        svc = instance.service[:, instance.task_type]  # (3, N): s_{k, c(j)}; "back" (3, N): l(j, d_k)
        dist, n = instance.distances(), instance.n_customers
        return {"dist": dist, "back": dist[:n, n:].T.copy(), "travel": np.asarray(instance.travel, np.float64), "svc": svc,
                "task_type": np.asarray(instance.task_type, np.int64), "budget": np.asarray(instance.budget, np.float64)}

    def shape(self, instance):
        return (instance.n_customers,)

    def max_decisions(self, data):
        return 3 * data["task_type"].shape[0]

    def start(self, data):
        n = data["task_type"].shape[0]
        zeros = jnp.zeros(VEHICLES, data["travel"].dtype)
        return {"cur": n + jnp.arange(VEHICLES), "lengths": zeros, "open": zeros, "count": jnp.zeros(VEHICLES, int),
                "vehicle": jnp.full(n, -1), "position": jnp.full(n, -1), "turn": jnp.int32(0), "skips": jnp.int32(0),
                "forced": jnp.int32(0), "done": jnp.bool_(False),
                "row_best": jnp.full(VEHICLES, jnp.inf, data["travel"].dtype), "row_best_id": jnp.zeros(VEHICLES, jnp.int32)}

    def increment_row(self, data, s, k):
        """``State.increments(k)``: the change of ``L_k`` when each customer is appended;
        ``k`` a Python int where the loop knows the vehicle, else traced."""
        n = data["task_type"].shape[0]
        row = data["dist"][s["cur"][k]]  # a whole row gathers fast; element gathers do not
        travel = row[:n] + data["back"][k] - row[n + k]
        return data["travel"][k] * travel + data["svc"][k]

    def decision(self, data, s, role=None):
        k = s["turn"]
        row = self.increment_row(data, s, k if role is None else role)  # role == turn wherever it counts
        return jc.Decision(k, s["vehicle"] < 0, row, jnp.bool_(True))

    def observe(self, data, s, masks):
        out = {}
        for k, r in enumerate("ABC"):
            ids = masks[k]
            obs = {"candidate_ids": ids.astype(jnp.int8), "candidate_costs": jd.aligned(ids, self.increment_row(data, s, k)),
                   "current": s["cur"][k]}
            if r == "A":
                obs["budget_left"] = data["budget"][k] - s["lengths"][k]
            elif r == "B":
                obs["task_types"] = jd.aligned(ids, data["task_type"].astype(data["budget"].dtype))
                obs["route_cost"] = s["lengths"][k]
            else:
                obs["team_route_costs"] = s["lengths"]
            out[r] = obs
        return out

    def commit(self, data, s, choice, role=None):
        skips = jnp.where(choice >= 0, 0, s["skips"] + 1)
        forced = skips == VEHICLES  # every vehicle skipped its latest turn
        # The forced assignment is the row-major first minimum of the whole (3, N) table of
        # free customers (lowest vehicle, then lowest customer). Skips change nothing, so
        # over the three skipped turns that force it each vehicle's row was the deciding
        # one once: its first minimum, kept per row, is all the forced choice needs, and
        # the table is never reduced as a whole (that reduction cost a third of a step).
        k_now = s["turn"]
        row = self.increment_row(data, s, k_now if role is None else role)  # role == turn wherever it counts
        free = s["vehicle"] < 0
        j_now = jd.first_min(free, row)
        row_best = jd.put(s["row_best"], k_now, jnp.where(free.any(), row[j_now], jnp.inf))
        row_best_id = jd.put(s["row_best_id"], k_now, j_now)
        k_forced = jd.first_min(jnp.ones(VEHICLES, bool), row_best)
        k = jnp.where(choice >= 0, k_now, k_forced)
        j = jnp.where(choice >= 0, choice, row_best_id[k_forced])
        s = self._append(data, s, k, j, (choice >= 0) | forced)
        return {**s, "skips": jnp.where(forced, 0, skips), "forced": s["forced"] + forced,
                "turn": (s["turn"] + 1) % VEHICLES, "done": ~(s["vehicle"] < 0).any(),
                "row_best": row_best, "row_best_id": row_best_id}

    def _append(self, data, s, k, j, on):
        dist, n = data["dist"], data["task_type"].shape[0]
        opened = s["open"][k] + data["travel"][k] * dist[s["cur"][k], j] + data["svc"][k, j]
        length = opened + data["travel"][k] * dist[j, n + k]
        return {**s, "open": jd.put(s["open"], k, opened, on), "lengths": jd.put(s["lengths"], k, length, on),
                "cur": jd.put(s["cur"], k, j, on), "vehicle": jd.put(s["vehicle"], j, k, on),
                "position": jd.put(s["position"], j, s["count"][k], on), "count": jd.put(s["count"], k, s["count"][k] + 1, on)}

    def objective(self, data, s):
        l = s["lengths"]  # noqa: E741 - the paper's L
        total = l[0] + l[1] + l[2]  # numpy's order: a 3-element sum is sequential
        excess = jnp.maximum(l - data["budget"], 0.0)
        return total + BALANCE * l.max() + EXCESS * (excess[0] + excess[1] + excess[2])

    def result(self, data, s):
        return {"vehicle": s["vehicle"], "position": s["position"], "lengths": s["lengths"], "forced": s["forced"]}


PROBLEM = HMTSPJax()


def routes(vehicle: np.ndarray, position: np.ndarray) -> list[list[int]]:
    """The three routes (``State.routes``) of one instance's solution."""
    out = []
    for k in range(VEHICLES):
        mine = np.flatnonzero(vehicle == k)
        out.append([int(j) for j in mine[np.argsort(position[mine])]])
    return out


# The module contract of relic_envs.co.jax_eval: stack(instances), evaluator(policies, *, x64=True) and
# seed_policies() (the twins of relic_envs/seeds/hmtsp/paper).
stack, evaluator, seed_policies = jd.entry_points(PROBLEM, seeds="relic_envs.co.hmtsp.jax_seeds")
