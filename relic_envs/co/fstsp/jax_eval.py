"""FSTSP in JAX: the functional twin of ``simulator.py`` + ``roles.py`` (paper interface).

Use through :func:`relic_envs.co.jax_eval.evaluate` or ``evaluator(policies)`` here. The
solution holds the epochs ``(u, a, b, r)`` in order (``epochs`` rows, ``-1`` past
``n_epochs``: ``State.epochs``), who served each customer and when (``served_by``,
``served_at``) and the count of ``sorties``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from relic_envs.co import _jax_construct as jc
from relic_envs.co import _jax_decisions as jd
from relic_envs.co._jax_decisions import jax, jnp
from relic_envs.co.fstsp.simulator import DISTANCE_WEIGHT, STAGE_A, STAGE_B, STAGE_C

SKIP = -1


class FSTSPJax(jc.JaxConstructProblem):
    name = "fstsp"
    staged = True  # each epoch: A (sortie or not), B (truck stop; passed over without candidates), C (meeting)

    def turn(self, data, s):
        return s["stage"]

    def arrays(self, instance):
        return {"dist": instance.distances(), "eligible": np.concatenate([[False], instance.eligible]),
                "vt": np.float64(instance.truck_speed), "vd": np.float64(instance.drone_speed),
                "endurance": np.float64(instance.endurance)}

    def shape(self, instance):
        return (instance.n_customers,)

    def max_decisions(self, data):
        return 3 * (data["eligible"].shape[0] - 1)

    def start(self, data):
        nodes = data["eligible"].shape[0]
        zero = jnp.zeros((), data["vt"].dtype)
        s = {"unserved": jnp.ones(nodes, bool).at[0].set(False), "cur": jnp.int32(0), "t": zero, "d_truck": zero,
             "stage": jnp.int32(STAGE_A), "a": jnp.int32(SKIP), "b": jnp.int32(SKIP),
             "served_by": jnp.full(nodes - 1, -1), "served_at": jnp.full(nodes - 1, -1.0, data["vt"].dtype),
             "epochs": jnp.full((nodes - 1, 4), -1), "n_epochs": jnp.int32(0), "done": jnp.bool_(False)}
        return self._skip_empty(data, s)

    # -- candidate sets (State's methods) ------------------------------------------------
    def drone_candidates(self, data, s):
        trip = 2 * data["dist"][s["cur"]] / data["vd"]
        return s["unserved"] & data["eligible"] & (trip <= data["endurance"])

    def truck_candidates(self, data, s):
        dist, u, a = data["dist"], s["cur"], s["a"]
        ac = jnp.maximum(a, 0)
        meet = jnp.maximum(dist[u] / data["vt"], (dist[u, ac] + dist[ac]) / data["vd"])
        sortie = jd.put(s["unserved"], ac, False) & (meet <= data["endurance"])
        return jnp.where(a == SKIP, s["unserved"], sortie)

    def etas(self, data, s):
        dist, u, a, b = data["dist"], s["cur"], jnp.maximum(s["a"], 0), s["b"]
        bc = jnp.maximum(b, 0)
        via_b = jd.put((dist[u, bc] + dist[bc]) / data["vt"], bc, dist[u, bc] / data["vt"])
        truck = jnp.where(b == SKIP, dist[u] / data["vt"], via_b)
        drone = (dist[u, a] + dist[a]) / data["vd"]
        return truck, drone

    def recovery_candidates(self, data, s):
        b, ac, bc = s["b"], jnp.maximum(s["a"], 0), jnp.maximum(s["b"], 0)
        first = jnp.where(b != SKIP, b, s["cur"])
        others = jd.put(s["unserved"], ac, False)
        others = others & ((jnp.arange(others.shape[0]) != bc) | (b == SKIP))
        others = jd.put(others, 0, True, ~others.any())  # the last sortie may end at the depot
        truck, drone = self.etas(data, s)
        return jd.put(others & (jnp.maximum(truck, drone) <= data["endurance"]), first, True)

    # -- the construction ----------------------------------------------------------------
    def decision(self, data, s, role=None):
        dist, u, stage = data["dist"], s["cur"], s["stage"]
        truck, drone = self.etas(data, s)
        masks = (self.drone_candidates, self.truck_candidates, self.recovery_candidates)
        costs = (lambda: 2 * dist[u] / data["vd"], lambda: dist[u], lambda: jnp.maximum(truck, drone))
        if role is None:
            mask = jnp.select([stage == STAGE_A, stage == STAGE_B], [m(data, s) for m in masks[:2]], masks[2](data, s))
            cost = jnp.select([stage == STAGE_A, stage == STAGE_B], [c() for c in costs[:2]], costs[2]())
        else:  # the stage is `role` wherever this decision counts
            mask, cost = masks[role](data, s), costs[role]()
        can_skip = (stage == STAGE_A) | ((stage == STAGE_B) & (s["a"] != SKIP))
        return jc.Decision(stage, mask, cost, can_skip)

    def observe(self, data, s, masks):
        dist, u = data["dist"], s["cur"]
        truck, drone = self.etas(data, s)
        a_ids, b_ids, c_ids = masks
        endurance = data["endurance"]
        return {
            "A": {"candidate_ids": a_ids.astype(jnp.int8), "drone_roundtrip_times": jd.aligned(a_ids, 2 * dist[u] / data["vd"]),
                  "truck_detours": jd.aligned(a_ids, 2 * dist[u] / data["vt"]), "endurance": endurance},
            "B": {"current": u, "candidate_ids": b_ids.astype(jnp.int8), "truck_distances": dist[u],
                  "drone_customer": s["a"]},  # numpy shows B the pending a at every stage
            "C": {"candidate_ids": c_ids.astype(jnp.int8), "truck_etas": jd.aligned(c_ids, truck),
                  "drone_etas": jd.aligned(c_ids, drone), "endurance": endurance},
        }

    def commit(self, data, s, choice, role=None):
        stage = s["stage"]
        a = jnp.where(stage == STAGE_A, choice, s["a"])
        b = jnp.where(stage == STAGE_B, choice, s["b"])
        closes = (stage == STAGE_C) | ((stage == STAGE_B) & (s["a"] == SKIP))
        r = jnp.where(stage == STAGE_C, choice, b)
        pending = {**s, "a": a, "b": b, "stage": jnp.minimum(stage + 1, STAGE_C)}
        closed = self._close(data, pending, r)
        s = jax_select(closes, closed, pending)
        return jax_select(s["done"], s, self._skip_empty(data, s))

    def _skip_empty(self, data, s):
        """Pass over stages whose role has no candidate (A: no drone customer; B in a sortie)."""
        skip_a = (s["stage"] == STAGE_A) & ~self.drone_candidates(data, s).any()
        s = {**s, "a": jnp.where(skip_a, SKIP, s["a"]), "stage": jnp.where(skip_a, STAGE_B, s["stage"])}
        skip_b = (s["stage"] == STAGE_B) & (s["a"] != SKIP) & ~self.truck_candidates(data, s).any()
        return {**s, "b": jnp.where(skip_b, SKIP, s["b"]), "stage": jnp.where(skip_b, STAGE_C, s["stage"])}

    def _close(self, data, s, r):
        """End the epoch with both vehicles at ``r`` (``State._close``)."""
        dist, vt, vd = data["dist"], data["vt"], data["vd"]
        u, a, b = s["cur"], s["a"], s["b"]
        ac, bc = jnp.maximum(a, 0), jnp.maximum(b, 0)
        via_b = (b != SKIP) & (b != r)
        leg = jnp.where(via_b, dist[u, bc] + dist[bc, r], dist[u, r])
        drone = jnp.where(a != SKIP, (dist[u, ac] + dist[ac, r]) / vd, 0.0)
        at_b = s["t"] + dist[u, bc] / vt
        at_r = jnp.where(via_b, at_b + dist[bc, r] / vt, s["t"] + dist[u, r] / vt)
        s = self._serve(s, bc, 0, at_b, via_b & s["unserved"][bc])
        s = self._serve(s, r, 0, at_r, s["unserved"][r])
        s = self._serve(s, ac, 1, s["t"] + dist[u, ac] / vd, a != SKIP)
        t = s["t"] + jnp.maximum(leg / vt, drone)
        d_truck = s["d_truck"] + leg
        epochs = jd.put(s["epochs"], s["n_epochs"], jnp.stack([u, a, b, r]).astype(s["epochs"].dtype))
        done = ~s["unserved"].any()
        return {**s, "t": jnp.where(done, t + dist[r, 0] / vt, t), "d_truck": jnp.where(done, d_truck + dist[r, 0], d_truck),
                "epochs": epochs, "n_epochs": s["n_epochs"] + 1, "cur": jnp.where(done, 0, r).astype(s["cur"].dtype),
                "a": jnp.int32(SKIP), "b": jnp.int32(SKIP), "stage": jnp.int32(STAGE_A), "done": done}

    def _serve(self, s, node, vehicle, when, on):
        return {**s, "unserved": jd.put(s["unserved"], node, False, on),
                "served_by": jd.put(s["served_by"], node - 1, vehicle, on),
                "served_at": jd.put(s["served_at"], node - 1, when, on)}

    def objective(self, data, s):
        back = jnp.where(s["done"], 0.0, data["dist"][s["cur"], 0])
        return s["t"] + back / data["vt"] + DISTANCE_WEIGHT * (s["d_truck"] + back)

    def result(self, data, s):
        sorties = ((s["epochs"][:, 1] != SKIP) & (jnp.arange(s["epochs"].shape[0]) < s["n_epochs"])).sum()
        return {"epochs": s["epochs"], "n_epochs": s["n_epochs"], "served_by": s["served_by"],
                "served_at": s["served_at"], "sorties": sorties}


def jax_select(on, new, old):
    """``new`` where ``on`` else ``old``, leaf by leaf (a branch-free ``if``)."""
    return jax.tree_util.tree_map(lambda x, y: jnp.where(on, x, y), new, old)


PROBLEM = FSTSPJax()


def epochs(solution: Mapping[str, np.ndarray], i: int) -> list[tuple[int, int, int, int]]:
    """Instance ``i``'s epochs ``(u, a, b, r)``, as ``State.epochs`` lists them."""
    rows = solution["epochs"][i][: int(solution["n_epochs"][i])]
    return [tuple(int(x) for x in row) for row in rows]


# The module contract of relic_envs.co.jax_eval: stack(instances), evaluator(policies, *, x64=True) and
# seed_policies() (the twins of relic_envs/seeds/fstsp/paper).
stack, evaluator, seed_policies = jd.entry_points(PROBLEM, seeds="relic_envs.co.fstsp.jax_seeds")
