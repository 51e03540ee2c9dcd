"""JAX twins of the scheduling seed programs (``relic_envs/seeds/mas_*/paper/<role>.py``).

Each function is a ``jax.numpy`` translation of one numpy seed: same formulas, same
constants, same tie-breaking. The seeds scan the pool in ascending id order and keep a
job only when its key is strictly better, so "first maximum (minimum) over the pool, if
it beats the initial best" is :func:`_first_best` (:func:`_first_min`). Pools arrive as
the env encodes them (``{"mask": int8 (N,), "value": (N, width)}``, all ``N`` rows):
every formula is evaluated on all rows and masked. :func:`seed_jax_team` wraps them as
JAX policies ``obs -> int32 job id or -1`` for :mod:`relic_envs.mas.jax_eval`. Paper
interface only.

Exact ties are common (generated times sit on grids, values on small integers), so the
twins must round like numpy. XLA's algebraic simplifier rewrites ``a / (b / c)`` into
``(a * c) / b`` and ``a / s`` (a scalar ``s``) into ``a * (1 / s)``, which round
differently; :func:`_held` hides such operands behind ``lax.optimization_barrier``.
Remaining caveat: Python's ``math.exp`` and ``sum`` and XLA's ``exp`` and ``sum`` may
differ in the last bit, so MAS-JD A can differ where two scores tie to within that bit.

A twin answers the env's observation as its numpy seed does (here eagerly, no compile):

>>> import relic_envs
>>> from relic_envs.seeds import seed_team
>>> episode = relic_envs.get_benchmark("mas_fs").new_episode(relic_envs.splits("mas_fs").test["test50"][0])
>>> obs = episode.observe("A")
>>> int(seed_jax_team("mas_fs")["A"](obs)) == seed_team("mas_fs")["A"](obs)
True
"""

from __future__ import annotations

from collections.abc import Callable

from relic_envs.core.jax_policy import as_policy
from relic_envs.core.jax_select import first_argmax, first_argmin
from relic_envs.mas._jax_dispatch import IDLE, jax, jnp


def _held(x, like=None):
    """``x`` (broadcast to ``like``'s shape) behind an optimization barrier, so XLA divides by it
    as numpy does (module docs) instead of reassociating or multiplying by a reciprocal."""
    return jax.lax.optimization_barrier(x if like is None else jnp.broadcast_to(x, like.shape))


def _first_best(candidate, score, initial):
    """The first job (ascending id) with the largest score among ``candidate`` jobs, if that
    score is strictly above ``initial``; else -1 (idle)."""
    s = jnp.where(candidate, score, -jnp.inf)
    j = first_argmax(s)
    return jnp.where(candidate.any() & (s[j] > initial), j, IDLE)


def _first_min(candidate, key, initial=jnp.inf):
    """The first job with the smallest key among ``candidate`` jobs, if strictly below ``initial``; else -1."""
    v = jnp.where(candidate, key, jnp.inf)
    j = first_argmin(v)
    return jnp.where(candidate.any() & (v[j] < initial), j, IDLE)


def _pool(d):
    return d["mask"] > 0, d["value"]


# --- MAS-JD --------------------------------------------------------------------------
def jd_A(my_busy_until, t_now, job_pool, p_mine):
    """Twin of ``seeds/mas_jd/paper/A.py`` (apparent tardiness cost, look-ahead 2)."""
    pool, rows = _pool(job_pool)
    p, d, w = rows[:, 0], rows[:, 1], rows[:, 2]
    p_bar = jnp.sum(jnp.where(pool, p, 0.0)) / jnp.maximum(pool.sum(), 1)
    slack = jnp.maximum(d - p - t_now, 0.0)
    score = (w / p) * jnp.exp(-slack / _held(2.0 * p_bar, slack))
    return _first_best(pool, score, -1.0)


def jd_B(my_busy_until, teammate_busy_until, job_pool, t_now):
    """Twin of ``seeds/mas_jd/paper/B.py`` (weighted modified due date; long jobs to idle teammates)."""
    pool, rows = _pool(job_pool)
    p, d, w = rows[:, 0], rows[:, 1], rows[:, 2]
    free_mates = jnp.sum(teammate_busy_until <= t_now)
    key = jnp.maximum(p, d - t_now) / jnp.maximum(w, 1e-9)
    key = jnp.where((free_mates > 0) & (pool.sum() > 1), key * (1.0 + 0.1 * p), key)
    return _first_min(pool, key)


def jd_C(busy_vector, job_ids, job_features, t_now):
    """Twin of ``seeds/mas_jd/paper/C.py`` (weighted least slack; late jobs heaviest first)."""
    pool, rows = job_ids > 0, job_features["value"]
    p, d, w = rows[:, 0], rows[:, 1], rows[:, 2]
    slack = d - p - t_now
    key = jnp.where(slack > 0, slack / jnp.maximum(w, 1e-9), slack * w)
    return _first_min(pool, key)  # np.argmin over the pool (keys are finite)


# --- MAS-ST --------------------------------------------------------------------------
def _st_eff(skills, rows):
    cat = rows[:, 0].astype(jnp.int32)
    return cat, _held(rows[:, 1] / jnp.maximum(skills[cat], 0.05))  # held: the seeds divide values by it


def st_A(my_skills, my_busy_until, task_pool, t_now):
    """Twin of ``seeds/mas_st/paper/A.py`` (value density among the tasks finishable on time)."""
    pool, rows = _pool(task_pool)
    _, eff = _st_eff(my_skills, rows)
    on_time = pool & ~(t_now + eff > rows[:, 3])
    return _first_best(on_time, rows[:, 2] / eff, 0.0)


def st_B(my_state, teammate_states, task_pool, t_now):
    """Twin of ``seeds/mas_st/paper/B.py`` (value density, halved per better-suited teammate about to be free)."""
    pool, rows = _pool(task_pool)
    skills = my_state["skills"]
    cat, eff = _st_eff(skills, rows)
    on_time = pool & ~(t_now + eff > rows[:, 3])
    score = rows[:, 2] / eff
    for m in range(2):  # teammates in role order; halving is exact, so the order does not matter anyway
        soon = teammate_states["busy_until"][m] <= t_now + 0.5 * eff
        better = teammate_states["skills"][m][cat] > skills[cat] + 0.1
        score = jnp.where(soon & better, score * 0.5, score)
    return _first_best(on_time, score, 0.0)


def st_C(skill_matrix, busy_vector, task_features, t_now):
    """Twin of ``seeds/mas_st/paper/C.py`` (earliest deadline among tasks C finishes on time, ties by value)."""
    pool, rows = _pool(task_features)
    cat = rows[:, 1].astype(jnp.int32)
    p, v, d = rows[:, 2], rows[:, 3], rows[:, 4]
    eff = p / jnp.maximum(skill_matrix[2, cat], 0.05)
    ok = pool & (t_now + eff <= d)
    return _first_min(ok, d - 0.01 * v)


# --- MAS-FS --------------------------------------------------------------------------
def _wspt(my_buffer):
    pool, rows = _pool(my_buffer)
    return _first_best(pool, rows[:, 1] / jnp.maximum(rows[:, 0], 1e-9), -1.0)


def fs_A(my_buffer, my_busy_until, t_now, dummy):
    """Twin of ``seeds/mas_fs/paper/A.py`` (WSPT at stage 1)."""
    return _wspt(my_buffer)


def fs_B(my_buffer, upstream_busy, downstream_buf_size, my_busy_until):
    """Twin of ``seeds/mas_fs/paper/B.py`` (WSPT; SPT when stage 3 has nothing waiting)."""
    pool, rows = _pool(my_buffer)
    p, w = rows[:, 0], rows[:, 1]
    return _first_min(pool, jnp.where(downstream_buf_size == 0, p, p / jnp.maximum(w, 1e-9)))


def fs_C(my_buffer, pipeline_state, job_table, t_now):
    """Twin of ``seeds/mas_fs/paper/C.py`` (WSPT at the last stage)."""
    return _wspt(my_buffer)


_SEEDS: dict[str, dict[str, Callable]] = {
    "mas_jd": {"A": jd_A, "B": jd_B, "C": jd_C},
    "mas_st": {"A": st_A, "B": st_B, "C": st_C},
    "mas_fs": {"A": fs_A, "B": fs_B, "C": fs_C},
}


def seed_jax_team(name: str) -> dict[str, Callable]:
    """The JAX twins of a scheduling benchmark's paper-interface seed programs, one policy per role."""
    if name not in _SEEDS:
        raise NotImplementedError(f"no scheduling JAX seed twins for {name!r}; available: {sorted(_SEEDS)}")
    return {role: as_policy(fn) for role, fn in _SEEDS[name].items()}
