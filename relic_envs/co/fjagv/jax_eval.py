"""FJAGV in JAX: the functional twin of ``simulator.py`` + ``roles.py`` (paper interface).

The same event rule as :class:`relic_envs.co.fjagv.simulator.State` (A for the lowest
ready unassigned operation, then C for the lowest free AGV while requests are pending,
then B for the lowest free machine with a queue; otherwise jump to the next completion
or delivery), run by :mod:`relic_envs.co._jax_decisions`. Bound: at most one A, one C and
one B decision per operation, ``3 N`` decisions. Processing times are integers, so the
machine backlogs (sums of them) are exact in any summation order; schedules match numpy
bit for bit in float64, the objective up to the summation order of its tardiness sum.

Usage (not a doctest: compiling costs seconds, the parity tests in
``tests/co/test_jax_sched_parity.py`` cover it)::

    insts = relic_envs.splits("fjagv").test["test100"][:2]
    out = evaluator(seed_policies())(stack(insts))  # out.objective (2,), out.repairs (2, 3)
"""

from __future__ import annotations

import numpy as np

from relic_envs.co import _jax_decisions as jd
from relic_envs.co import _jax_events as je
from relic_envs.co._jax_decisions import jnp
from relic_envs.co.fjagv.generator import FJAGVInstance
from relic_envs.co.fjagv.simulator import TARDINESS_WEIGHT, TRAVEL_WEIGHT
from relic_envs.core.jax_select import first_true

ROLE_A, ROLE_B, ROLE_C = 0, 1, 2
NONE = jd.NONE  # the pending role once the construction is complete


class FJAGVJax(je.JaxEventProblem):
    name = "fjagv"
    batched_loop = True  # one loop over the batch, free order (JaxDecisionProblem.batched_loop)

    def shape(self, instance: FJAGVInstance):
        return instance.proc.shape + (int(instance.n_agvs),)

    def arrays(self, instance: FJAGVInstance):
        n, k = instance.n_operations, instance.n_ops_per_job
        ids = np.arange(n)
        return {
            "pt": instance.op_times().astype(np.float64), "tt": instance.travel(),
            "due_op": np.asarray(instance.due, np.float64)[ids // k],
            "first": ids % k == 0, "last": ids % k == k - 1, "job": (ids // k).astype(np.int64),
            "due": np.asarray(instance.due, np.float64), "weight": np.asarray(instance.weight, np.float64),
            "agvs": np.zeros(int(instance.n_agvs)),  # carries the AGV count as a static shape
        }

    def max_decisions(self, data):
        return 3 * data["pt"].shape[0]

    # -- the state -----------------------------------------------------------------------
    def init(self, data):
        n, m = data["pt"].shape
        g, f = data["agvs"].shape[0], data["pt"].dtype
        minus = jnp.full(n, -1.0, f)
        return {
            "t": jnp.zeros((), f), "d_agv": jnp.zeros((), f), "machine": jnp.full(n, -1, jnp.int32),
            # per operation, when it becomes ready: 0 for a job's first, its predecessor's
            # finish once that started (-1 before)
            "ready_at": jnp.where(data["first"], 0.0, -1.0).astype(f), "requested": jnp.zeros(n, bool),
            "agv_of": jnp.full(n, -1, jnp.int32), "delivered": minus, "start": minus, "finish": minus,
            "machine_free_at": jnp.zeros(m, f), "agv_pos": jnp.zeros(g, jnp.int32), "agv_free_at": jnp.zeros(g, f),
            "done": jnp.bool_(False), "role": jnp.int32(NONE), "about": jnp.int32(-1),
            "backlog": jnp.zeros(m, f),  # per machine, processing time assigned and not started
            # per machine, its operations delivered or in transit and not started: those in
            # transit are on the AGVs heading there and not yet arrived (an AGV carries one
            # operation, to its position), so B's queues need no pass over the operations.
            "pending": jnp.zeros(m, jnp.int32),
            # per operation, its predecessor's machine + 1 (0: the depot, for a first
            # operation or an unassigned predecessor), set when A decides it.
            "source": jnp.zeros(n, jnp.int32),
            # per operation, its id - n while it is ready and unassigned, its predecessor's
            # finish while it waits for it, inf otherwise (see ``advance``): the lowest
            # ready operation and the next ready time are one minimum.
            "ready_key": jnp.where(data["first"], jnp.arange(n) - n, jnp.inf).astype(f),
            # per operation, its delivery time while delivered or in transit and not
            # started (inf otherwise): B's queue reads this array and the machine instead
            # of delivered and start.
            "queued_at": jnp.full(n, jnp.inf, f),
            # per operation, its loaded trip (its material's location to its machine), set
            # when A assigns the machine: C's travel times then gather one small row.
            "loaded_trip": jnp.zeros(n, f),
            # per operation, its processing time on the machine A assigned: B's queue (the
            # operations assigned to its machine) reads it instead of the machine's column.
            "proc": jnp.zeros(n, f),
            "open_requests": jnp.int32(0),  # how many operations wait for an AGV (requested)
            "started": jnp.int32(0),  # how many operations B has started
        }

    def _source(self, data, s):
        """``(N,)`` location of each operation's material before its trip (depot 0, else the
        predecessor's machine + 1), kept in the state."""
        return s["source"]

    def _waiting(self, s):
        """``(N,)`` operations delivered and not started (at their assigned machine)."""
        return s["queued_at"] <= s["t"]

    def _in_transit(self, s):
        """``(M, G)`` whether AGV g is carrying an operation to machine m (not yet arrived)."""
        machines = jnp.arange(s["pending"].shape[0])[:, None]
        return (s["agv_pos"][None, :] == machines + 1) & (s["agv_free_at"][None, :] > s["t"])

    def _waiting_counts(self, s):
        """``(M,)`` operations delivered to each machine and not started."""
        return s["pending"] - self._in_transit(s).sum(axis=1)

    def _requests(self, s):
        """``(N,)`` operations waiting for an AGV: assigned away from their material, not yet served."""
        return s["requested"]

    def _find(self, data, s, ready):
        """``(role, about)`` of the pending decision, or ``(NONE, -1)`` (``State._find``), given
        ``ready``, the lowest ready unassigned operation (``N`` where none)."""
        n, m, g = s["machine"].shape[0], s["machine_free_at"].shape[0], s["agv_free_at"].shape[0]
        free_agv = first_true(s["agv_free_at"] <= s["t"])
        has_c = (s["open_requests"] > 0) & (free_agv < g)
        queued = self._waiting_counts(s) > 0  # some operation delivered and waiting at the machine
        b_ok = first_true(queued & (s["machine_free_at"] <= s["t"]))
        role = jnp.where(ready < n, ROLE_A, jnp.where(has_c, ROLE_C, jnp.where(b_ok < m, ROLE_B, NONE)))
        about = jnp.select([role == ROLE_A, role == ROLE_C, role == ROLE_B], [ready, free_agv, b_ok], -1)
        return role.astype(jnp.int32), about.astype(jnp.int32)

    def _next_decision_time(self, data, s, t_a):
        """The earliest time after ``s["t"]`` at which some role has a decision (``inf`` if none),
        nobody deciding meanwhile: the time the numpy ``State`` reaches by jumping from one
        completion or delivery to the next.

        Each role's first chance, each an event time (a machine's or an AGV's free time):
        A, once an unassigned operation's predecessor finishes (``t_a``, a future finish is
        its machine's free time); C, once an AGV is free while requests wait (requests only
        appear at A's decisions); B, once a machine is free and an operation delivered to
        it (a future delivery is its AGV's free time). What can be decided only grows with
        time while nobody decides, so the first of these is where the jumps stop.
        """
        t_c = jnp.where(s["open_requests"] > 0, jnp.min(s["agv_free_at"]), jnp.inf)
        # A machine with operations waiting and busy is free at its free time; one without,
        # once free and its first operation in transit arrives (if free now with some
        # waiting, B decides now and no jump is taken).
        transit = self._in_transit(s)
        arrival = jnp.min(jnp.where(transit, s["agv_free_at"], jnp.inf), axis=1)
        first_delivery = jnp.where(self._waiting_counts(s) > 0, -jnp.inf, arrival)
        t_b = jnp.min(jnp.maximum(s["machine_free_at"], first_delivery))
        return jnp.minimum(t_a, jnp.minimum(t_b, t_c))

    def advance(self, data, s):
        """The next decision (``State._find``), after jumping time if nothing is decidable now:
        in closed form (:meth:`_next_decision_time`), not a loop of jumps, which under
        ``vmap`` ran every jump of the slowest instance for the whole batch.

        ``ready_key`` holds both kinds of operation A waits for: a ready unassigned one as
        its id - N (negative), one whose predecessor has started as that finish (always
        later than now: a finish is set after now and every jump reaches each one it
        passes). Its minimum is the lowest ready operation if negative, else the earliest
        time one becomes ready (``t_a``). A jump happens only when nothing is ready, and
        ends at or before ``t_a``; the operations it makes ready are those finishing
        exactly then, so the lowest ready operation after it is one first index over them.
        """
        n = s["machine"].shape[0]
        least = jnp.min(s["ready_key"])
        ready = jnp.where(least < 0, least + n, n).astype(jnp.int32)  # n where none
        role, _ = self._find(data, s, ready)
        t = self._next_decision_time(data, s, jnp.where(least < 0, jnp.inf, least))
        jump = (role == NONE) & (s["started"] < n) & jnp.isfinite(t)  # operations left to start
        # A jump moves only the clock and the ready operations (nothing is negative then).
        newly = jump & (s["ready_key"] <= t)
        ready = jnp.where(jump, first_true(newly), ready)
        ids = jnp.arange(n, dtype=s["ready_key"].dtype)
        s = {**s, "t": jnp.where(jump, t, s["t"]), "ready_key": jnp.where(newly, ids - n, s["ready_key"])}
        role, about = self._find(data, s, ready)
        return {**s, "role": role, "about": about, "done": role == NONE}

    # -- the decision ----------------------------------------------------------------------
    def _ready_times(self, data, s):
        """``(M,)`` ``State.machine_ready_times``: free time (or now) plus the backlog assigned.

        The backlog is kept in the state (added at A, removed at B) instead of summed over
        the ``(N, M)`` assignment each decision (a quarter of the decision's time); the
        processing times are integers, so the running sums are exact."""
        return jnp.maximum(s["machine_free_at"], s["t"]) + s["backlog"]

    def _trip_times(self, data, s, agv):
        pos = s["agv_pos"][jnp.clip(agv, 0, s["agv_pos"].shape[0] - 1)]
        return data["tt"][pos][self._source(data, s)] + s["loaded_trip"]

    def candidates(self, data, s):
        x = s["about"]
        pt_a = data["pt"][jnp.clip(x, 0, data["pt"].shape[0] - 1)]
        queue = self._waiting(s) & (s["machine"] == x)
        return (
            (pt_a > 0, self._ready_times(data, s) + pt_a),
            (queue, s["proc"]),
            (self._requests(s), self._trip_times(data, s, x)),
        )

    def observe(self, data, s, masks):
        x, f = s["about"], data["pt"].dtype
        pt_a = data["pt"][jnp.clip(x, 0, data["pt"].shape[0] - 1)]
        due_op = data["due_op"]
        views = (
            {"operation_id": "machine_ids", "processing_times": pt_a, "machine_ready_times": self._ready_times(data, s)},
            {"machine_id": "operation_ids", "processing_times": s["proc"], "due_dates": due_op},
            {"agv_id": "request_ids", "travel_times": self._trip_times(data, s, x),
             "ready_times": jnp.maximum(s["ready_at"], 0.0).astype(f)},
        )
        return {r: _obs(masks[k], x, views[k]) for k, r in enumerate("ABC")}

    def apply(self, data, s, choice):
        """Commit ``choice`` of the deciding role.

        Per-operation values are read off the updated arrays where they equal the old
        ones (each update touches another entry than the one read): with a read of the
        old array after the update, XLA kept both alive and copied the loop-carried
        buffer every decision (FJAGV 1.30 -> 0.97 s per batch-1024 evaluation).
        """
        role, x = s["role"], s["about"]
        on_a, on_b, on_c = role == ROLE_A, role == ROLE_B, role == ROLE_C
        op = jnp.where(on_a, x, choice)  # the operation concerned
        n, m = data["pt"].shape
        op_c = jnp.clip(op, 0, n - 1)
        successor = ~data["last"][op_c]  # op + 1 is the same job's next operation
        m_a, m_b = jnp.clip(choice, 0, m - 1), jnp.clip(x, 0, m - 1)
        pt_a = data["pt"][op_c, m_a]  # A's operation on its machine
        finish_b = s["t"] + data["pt"][op_c, m_b]
        # A assigns machine `choice` to operation x, and its successor learns where its
        # material will be; B's start sets its successor's ready time (read only once the
        # successor is ready, which it becomes at that finish).
        machine = jd.put(s["machine"], op, choice, on_a)
        source = jd.put(s["source"], op + 1, choice + 1, on_a & successor)
        ready_at = jd.put(s["ready_at"], op + 1, finish_b, on_b & successor)
        src, dst = source[op_c], machine[op_c] + 1
        same = src == choice + 1  # A: no trip when the material is already there
        # C: AGV x carries request `choice`.
        empty, loaded = data["tt"][s["agv_pos"][jnp.clip(x, 0, s["agv_pos"].shape[0] - 1)], src], data["tt"][src, dst]
        arrive = s["t"] + empty + loaded
        delivered = jd.put(s["delivered"], op, ready_at[op_c], on_a & same)
        delivered = jd.put(delivered, op, arrive, on_c)
        requested = jd.put(jd.put(s["requested"], op, True, on_a & ~same), op, False, on_c)
        machines = jnp.arange(m)
        backlog = jnp.where(on_a & (machines == m_a), s["backlog"] + pt_a, s["backlog"])
        backlog = jnp.where(on_b & (machines == m_b), backlog - data["pt"][op_c, m_b], backlog)
        # A's in-place delivery and C's trip add one to the operation's machine, B's start removes one.
        added = (machines == machine[op_c]) & ((on_a & same) | on_c)
        pending = s["pending"] + added.astype(jnp.int32) - (on_b & (machines == m_b)).astype(jnp.int32)
        queued_at = jd.put(s["queued_at"], op, delivered[op_c], (on_a & same) | on_c)
        queued_at = jd.put(queued_at, op, jnp.inf, on_b)
        return {
            **s, "machine": machine, "source": source, "ready_at": ready_at, "delivered": delivered,
            "requested": requested, "queued_at": queued_at, "backlog": backlog, "pending": pending,
            "agv_of": jd.put(s["agv_of"], op, x, on_c), "agv_free_at": jd.put(s["agv_free_at"], x, arrive, on_c),
            "agv_pos": jd.put(s["agv_pos"], x, dst, on_c), "d_agv": jnp.where(on_c, s["d_agv"] + (empty + loaded), s["d_agv"]),
            "start": jd.put(s["start"], op, s["t"], on_b), "finish": jd.put(s["finish"], op, finish_b, on_b),
            "started": s["started"] + on_b.astype(jnp.int32), "machine_free_at": jd.put(s["machine_free_at"], x, finish_b, on_b),
            "ready_key": jd.put(jd.put(s["ready_key"], op, jnp.inf, on_a), op + 1, finish_b, on_b & successor),
            "loaded_trip": jd.put(s["loaded_trip"], op, data["tt"][src, choice + 1], on_a),
            "proc": jd.put(s["proc"], op, pt_a, on_a),
            "open_requests": s["open_requests"] + (on_a & ~same).astype(jnp.int32) - on_c.astype(jnp.int32),
        }

    # -- the result ------------------------------------------------------------------------
    def objective(self, data, s):
        started = s["start"] >= 0
        cmax = jnp.max(jnp.where(started, s["finish"], 0.0))
        last = data["last"] & started
        tardy = jnp.where(last, data["weight"][data["job"]] * jnp.maximum(s["finish"] - data["due"][data["job"]], 0.0), 0.0)
        return cmax + TARDINESS_WEIGHT * tardy.sum() + TRAVEL_WEIGHT * s["d_agv"]

    def result(self, data, s):
        keys = ("machine", "delivered", "start", "finish", "agv_of", "d_agv")
        return {k: s[k] for k in keys}


def _obs(mask, x, view):
    """One role's observation: its ``Index`` (x or -1), ``Ids`` mask, ``Aligned`` arrays, ``action_mask``."""
    deciding = mask.any()
    (index, ids), *rest = view.items()
    out = {index: jnp.where(deciding, x, -1).astype(jnp.int32), ids: mask.astype(jnp.int8)}
    out.update({name: jd.aligned(mask, values) for name, values in rest})
    out["action_mask"] = jnp.concatenate([(~deciding)[None], mask]).astype(jnp.int8)
    return out


PROBLEM = FJAGVJax()


# The module contract of relic_envs.co.jax_eval: stack(instances), evaluator(policies, *, x64=True) and
# seed_policies() (the twins of relic_envs/seeds/fjagv/paper).
stack, evaluator, seed_policies = jd.entry_points(PROBLEM, seeds="relic_envs.co.fjagv.jax_seeds")
