"""MRCPS in JAX: the functional twin of ``simulator.py`` + ``roles.py`` (paper interface).

The same three nested decisions as :class:`relic_envs.co.mrcps.simulator.State` (A a
project, B a schedulable task of it, C a free qualified worker; when nothing is
schedulable, jump to the next completion), run by :mod:`relic_envs.co._jax_decisions`.
Bound: exactly three decisions per task, ``3 N``. Which tasks have every predecessor
complete changes only when time jumps (a task started now completes later), so it is
kept in the state and recomputed at jumps only. Schedules match numpy bit for bit in
float64, the objective up to the summation order of its labor and tardiness sums.

Usage (not a doctest: compiling costs seconds, the parity tests in
``tests/co/test_jax_sched_parity.py`` cover it)::

    insts = relic_envs.splits("mrcps").test["test100"][:2]
    out = evaluator(seed_policies())(stack(insts))  # out.objective (2,), out.repairs (2, 3)
"""

from __future__ import annotations

import numpy as np

from relic_envs.co import _jax_decisions as jd
from relic_envs.co import _jax_events as je
from relic_envs.co._jax_decisions import jax, jnp
from relic_envs.co.mrcps.generator import MRCPSInstance
from relic_envs.co.mrcps.simulator import EVENT_RTOL, LABOR_WEIGHT, MAKESPAN_WEIGHT, speed

STAGE_A, STAGE_B, STAGE_C = 0, 1, 2


class MRCPSJax(je.JaxEventProblem):
    name = "mrcps"
    cyclic = True  # project (A), task (B), worker (C), from the first decision on
    # A's project has a schedulable task, and a schedulable task a free qualified worker:
    # only C's commitment can leave nothing to decide at the current time.
    advances_after = (False, False, True)

    def shape(self, instance: MRCPSInstance):
        return (instance.n_tasks, instance.n_projects) + tuple(instance.level.shape)

    def arrays(self, instance: MRCPSInstance):
        return {
            "project": instance.project.astype(np.int64), "duration": instance.duration.astype(np.float64),
            "skill": instance.skill.astype(np.int64), "pred_bits": pred_bits(np.asarray(instance.pred, bool)),
            "level": instance.level.astype(np.float64), "cost": np.asarray(instance.cost, np.float64),
            "due": np.asarray(instance.due, np.float64), "weight": np.asarray(instance.weight, np.float64),
            "successors": instance.successors().astype(np.float64),
            "qualified": instance.level[:, instance.skill] > 0,  # (W, N): worker w can do task i
        }

    def max_decisions(self, data):
        return 3 * data["project"].shape[0]

    # -- the state -----------------------------------------------------------------------
    def init(self, data):
        n, f = data["project"].shape[0], data["duration"].dtype
        minus = jnp.full(n, -1.0, f)
        return {
            "t": jnp.zeros((), f), "worker": jnp.full(n, -1, jnp.int32), "start": minus, "finish": minus,
            "span": jnp.zeros(n, f), "free_at": jnp.zeros(data["cost"].shape[0], f),
            "project": jnp.int32(-1), "task": jnp.int32(-1), "role": jnp.int32(STAGE_A), "done": jnp.bool_(False),
            "preds_done": ~(data["pred_bits"] != 0).any(axis=1),
        }

    def _schedulable(self, data, s):
        """``(N,)`` ``State.schedulable``: not started, predecessors complete, a free qualified worker."""
        free = s["free_at"] <= s["t"]
        staffed = (data["qualified"] & free[:, None]).any(axis=0)  # a reduction per task, no gather
        return (s["worker"] < 0) & s["preds_done"] & staffed

    def _jump(self, data, s):
        running = (s["worker"] >= 0) & (s["finish"] > s["t"])
        m = jnp.min(jnp.where(running, s["finish"], jnp.inf))
        # one event for completions within the window of simulator.next_event
        window = running & (s["finish"] <= m + EVENT_RTOL * jnp.maximum(1.0, jnp.abs(m)))
        t = jnp.where(running.any(), jnp.max(jnp.where(window, s["finish"], -jnp.inf)), m)
        completed = (s["worker"] >= 0) & (s["finish"] <= t)
        pending = (data["pred_bits"] & ~_as_bits(completed, data["pred_bits"].dtype)[None, :]) != 0
        return {**s, "t": t, "preds_done": ~pending.any(axis=1)}

    def advance(self, data, s):
        def waiting(s):
            return ~(s["worker"] >= 0).all() & ~self._schedulable(data, s).any()

        s = jax.lax.while_loop(waiting, lambda s: self._jump(data, s), s)
        return {**s, "done": (s["worker"] >= 0).all()}

    # -- the decision ----------------------------------------------------------------------
    def _effective(self, data, task):
        """``(W,)`` effective durations of ``task`` per worker (inf where unqualified)."""
        lv = self._levels(data, task)
        return jnp.where(lv > 0, data["duration"][task] / speed(lv), jnp.inf)

    def _levels(self, data, task):
        return data["level"][:, data["skill"][jnp.maximum(task, 0)]]

    def candidates(self, data, s):
        sched = self._schedulable(data, s)
        n_projects = data["due"].shape[0]
        projects = ((data["project"][:, None] == jnp.arange(n_projects)) & sched[:, None]).any(axis=0)
        tasks = sched & (data["project"] == s["project"])
        workers = (s["free_at"] <= s["t"]) & (self._levels(data, s["task"]) > 0)
        return (
            (projects, data["due"]),
            (tasks, data["duration"]),
            (workers, self._effective(data, jnp.maximum(s["task"], 0))),
        )

    def observe(self, data, s, masks):
        a, b, c = masks
        remaining = ((data["project"][:, None] == jnp.arange(data["due"].shape[0])) & (s["worker"] < 0)[:, None]).sum(0)
        f = data["duration"].dtype
        obs = {
            "A": {"project_ids": a.astype(jnp.int8), "due_dates": jd.aligned(a, data["due"]),
                  "remaining_task_counts": jd.aligned(a, remaining.astype(f)), "t_now": s["t"]},
            "B": {"project_id": jnp.where(b.any(), s["project"], -1), "task_ids": b.astype(jnp.int8),
                  "durations": jd.aligned(b, data["duration"]), "successor_counts": jd.aligned(b, data["successors"])},
            "C": {"task_id": jnp.where(c.any(), s["task"], -1), "worker_ids": c.astype(jnp.int8),
                  "skill_levels": jd.aligned(c, self._levels(data, s["task"])), "worker_costs": jd.aligned(c, data["cost"])},
        }
        for r, mask in zip("ABC", masks):
            obs[r]["action_mask"] = jnp.concatenate([(~mask.any())[None], mask]).astype(jnp.int8)
        return obs

    def apply(self, data, s, choice):
        stage = s["role"]
        on_c = stage == STAGE_C
        i = jnp.maximum(s["task"], 0)
        w = jnp.clip(choice, 0, s["free_at"].shape[0] - 1)
        span = self._effective(data, i)[w]
        finish = s["t"] + span
        # One-hot selects (``put``), not ``x.at[i].set(where(on_c, v, x[i]))``: with that read
        # of the old entry XLA copied five loop-carried (1024, N) buffers every cycle (0.294 ->
        # 0.25 s per batch-1024 evaluation).
        return {
            **s, "worker": jd.put(s["worker"], i, choice, on_c), "start": jd.put(s["start"], i, s["t"], on_c),
            "span": jd.put(s["span"], i, span, on_c), "finish": jd.put(s["finish"], i, finish, on_c),
            "free_at": jd.put(s["free_at"], w, finish, on_c),
            "project": jnp.where(stage == STAGE_A, choice, jnp.where(on_c, -1, s["project"])).astype(jnp.int32),
            "task": jnp.where(stage == STAGE_B, choice, jnp.where(on_c, -1, s["task"])).astype(jnp.int32),
            "role": ((stage + 1) % 3).astype(jnp.int32),
        }

    # -- the result ------------------------------------------------------------------------
    def objective(self, data, s):
        started = s["worker"] >= 0
        of_p = (data["project"][:, None] == jnp.arange(data["due"].shape[0])) & started[:, None]
        c_p = jnp.max(jnp.where(of_p, s["finish"][:, None], 0.0), axis=0)
        labor = jnp.where(started, data["cost"][jnp.maximum(s["worker"], 0)] * s["span"], 0.0).sum()
        tardy = (data["weight"] * jnp.maximum(c_p - data["due"], 0.0)).sum()
        return MAKESPAN_WEIGHT * c_p.max() + tardy + LABOR_WEIGHT * labor

    def result(self, data, s):
        return {k: s[k] for k in ("worker", "start", "finish", "span")}


def pred_bits(pred: np.ndarray) -> np.ndarray:
    """``(N, ceil(N / 32))`` uint32: bit ``j % 32`` of word ``j // 32`` of row ``i`` is ``pred[i, j]``.

    "Every predecessor complete" is then a few word ANDs per task at each time jump,
    not a pass over the whole ``(N, N)`` matrix (which cost most of an MRCPS decision).
    """
    n = pred.shape[0]
    words = -(-n // 32)
    padded = np.zeros((n, words * 32), bool)
    padded[:, : pred.shape[1]] = pred
    weights = np.left_shift(np.uint64(1), np.arange(32, dtype=np.uint64))
    return (padded.reshape(n, words, 32) * weights).sum(axis=2).astype(np.uint32)


def _as_bits(flags, dtype):
    """``(ceil(N / 32),)``: ``flags`` packed as :func:`pred_bits` packs a row. The words add
    distinct powers of two, so the sum is the bitwise OR in any integer type."""
    words = -(-flags.shape[0] // 32)
    padded = jnp.zeros(words * 32, dtype).at[: flags.shape[0]].set(flags.astype(dtype))
    shifts = jnp.arange(32, dtype=dtype)
    return jnp.sum(padded.reshape(words, 32) << shifts, axis=1, dtype=dtype)


PROBLEM = MRCPSJax()


# The module contract of relic_envs.co.jax_eval: stack(instances), evaluator(policies, *, x64=True) and
# seed_policies() (the twins of relic_envs/seeds/mrcps/paper).
stack, evaluator, seed_policies = jd.entry_points(PROBLEM, seeds="relic_envs.co.mrcps.jax_seeds")
