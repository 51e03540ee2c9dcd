"""JAX twins of the paper's seed programs (``relic_envs/seeds/<benchmark>/paper/<role>.py``).

Each function below is a line-for-line ``jax.numpy`` translation of one numpy seed:
same formulas, same constants, same tie-breaking on ``u``. :func:`seed_jax_team`
wraps them as JAX policies ``obs -> int32 values`` for :mod:`relic_envs.dcop.jax_eval`,
so the seed teams run in the compiled batch evaluator with the numpy decisions.

>>> import relic_envs
>>> from relic_envs.dcop import jax_eval
>>> result = jax_eval.evaluate("dgc", seed_jax_team("dgc"), relic_envs.splits("dgc").test_instances()[:2])
>>> bool(result.valid.all())
True
"""

from __future__ import annotations

from collections.abc import Callable

from relic_envs.core.jax_policy import as_policy
from relic_envs.dcop._jax_sweep import first_argmin, jnp


def _pick(mask, u, domain):
    """Among the values where ``mask`` holds, the one with the smallest ``u``."""
    return first_argmin(jnp.where(mask, u[:, :domain], jnp.inf))


# --- DGC -----------------------------------------------------------------------------


def dgc_A(cur, delta, u, t, violation_now, repair_gain):
    """Twin of ``seeds/dgc/paper/A.py`` (conflict repair)."""
    m, domain = delta.shape
    rows = jnp.arange(m)
    best = delta.min(axis=1, keepdims=True)
    target = _pick(delta <= best + 1e-9, u, domain)
    gain = repair_gain[rows, target]
    share = gain / jnp.maximum(violation_now, 1e-9)
    commit = 0.4 + 0.4 * jnp.clip(share, 0.0, 1.0)
    move = (violation_now > 0) & (gain > 0) & (u[:, domain] < commit)
    return jnp.where(move, target, cur)


def dgc_B(cur, delta, u, t, opportunity_gain, flexibility):
    """Twin of ``seeds/dgc/paper/B.py`` (opportunity)."""
    m, domain = delta.shape
    rows = jnp.arange(m)
    target = _pick(opportunity_gain >= opportunity_gain.max(axis=1, keepdims=True) - 1e-9, u, domain)
    gain = opportunity_gain[rows, target]
    commit = 0.75 - 0.15 * (jnp.clip(flexibility, 1, domain) - 1)
    move = (gain > 0) & (u[:, domain] < commit)
    return jnp.where(move, target, cur)


def dgc_C(cur, delta, u, t, peer_value_hist, peer_churn_rate, local_trend):
    """Twin of ``seeds/dgc/paper/C.py`` (stability)."""
    m, domain = delta.shape
    rows = jnp.arange(m)
    crowd = peer_value_hist / jnp.maximum(1.0, peer_value_hist.sum(axis=1, keepdims=True))
    adjusted = delta + 1e-3 * crowd
    target = _pick(adjusted <= adjusted.min(axis=1, keepdims=True) + 1e-12, u, domain)
    gain = delta[rows, cur] - delta[rows, target]
    commit = jnp.clip(0.7 * (1.0 - peer_churn_rate), 0.15, 0.7)
    move = (gain > 0) & (u[:, domain] < commit)
    return jnp.where(move, target, cur)


# --- DiMES ---------------------------------------------------------------------------


def dimes_A(cur, delta, u, t, violation_now, repair_gain):
    """Twin of ``seeds/dimes/paper/A.py`` (constraint risk)."""
    m, domain = delta.shape
    rows = jnp.arange(m)
    score = repair_gain - 1e-3 * delta
    target = _pick(score >= score.max(axis=1, keepdims=True) - 1e-9, u, domain)
    improves = (repair_gain[rows, target] > 0) & (delta[rows, target] < delta[rows, cur])
    move = (violation_now > 0) & improves & (u[:, domain] < 0.6)
    return jnp.where(move, target, cur)


def dimes_B(cur, delta, u, t, opportunity_gain, flexibility):
    """Twin of ``seeds/dimes/paper/B.py`` (cost reduction)."""
    m, domain = delta.shape
    rows = jnp.arange(m)
    target = _pick(opportunity_gain >= opportunity_gain.max(axis=1, keepdims=True) - 1e-9, u, domain)
    gain = opportunity_gain[rows, target]
    commit = 0.4 + 0.4 * jnp.minimum(t, 25) / 25.0
    move = (gain > 0) & (u[:, domain] < commit)
    return jnp.where(move, target, cur)


def dimes_C(cur, delta, u, t, peer_value_hist, peer_churn_rate, local_trend):
    """Twin of ``seeds/dimes/paper/C.py`` (agreement)."""
    m, domain = delta.shape
    rows = jnp.arange(m)
    adjusted = delta - 1e-3 * peer_value_hist
    target = _pick(adjusted <= adjusted.min(axis=1, keepdims=True) + 1e-12, u, domain)
    gain = delta[rows, cur] - delta[rows, target]
    commit = jnp.clip(0.75 * (1.0 - peer_churn_rate), 0.2, 0.75)
    move = (gain > 0) & (u[:, domain] < commit)
    return jnp.where(move, target, cur)


# --- SensorDCSP ----------------------------------------------------------------------


def sensor_dcsp_A(cur, delta, u, t, candidate_target, valid_mask, target_value, target_coverage, incompatibility_cost):
    """Twin of ``seeds/sensor_dcsp/paper/A.py`` (coverage repair)."""
    m, domain = delta.shape
    rows = jnp.arange(m)
    blocked = (incompatibility_cost > 0) | (valid_mask == 0)
    needy = (candidate_target >= 0) & (target_coverage < 3)
    cost = jnp.where(blocked, jnp.inf, delta - 1e-3 * needy)
    cost = cost.at[:, 0].set(delta[:, 0])  # sleeping is always allowed
    target = _pick(cost <= cost.min(axis=1, keepdims=True) + 1e-12, u, domain)
    gain = delta[rows, cur] - delta[rows, target]
    move = (gain > 0) & (u[:, domain] < 0.6)
    return jnp.where(move, target, cur)


def sensor_dcsp_B(cur, delta, u, t, candidate_target, valid_mask, target_value, target_coverage, target_supply):
    """Twin of ``seeds/sensor_dcsp/paper/B.py`` (value and scarcity)."""
    m, domain = delta.shape
    rows = jnp.arange(m)
    scarcity = jnp.where(target_supply > 0, target_value / jnp.maximum(target_supply, 1.0), 0.0)
    cost = jnp.where(valid_mask > 0, delta - 1e-3 * scarcity, jnp.inf)
    target = _pick(cost <= cost.min(axis=1, keepdims=True) + 1e-12, u, domain)
    gain = delta[rows, cur] - delta[rows, target]
    commit = jnp.clip(0.4 + gain / 100.0, 0.4, 0.8)
    move = (gain > 0) & (u[:, domain] < commit)
    return jnp.where(move, target, cur)


def sensor_dcsp_C(
    cur, delta, u, t, candidate_target, valid_mask, target_coverage, coverage_change, incompatibility_cost
):
    """Twin of ``seeds/sensor_dcsp/paper/C.py`` (coordination)."""
    m, domain = delta.shape
    rows = jnp.arange(m)
    cost = jnp.where(valid_mask > 0, delta, jnp.inf)
    target = _pick(cost <= cost.min(axis=1, keepdims=True) + 1e-9, u, domain)
    gain = delta[rows, cur] - delta[rows, target]
    settling = jnp.abs(coverage_change[rows, target]) > 0
    commit = jnp.where(settling, 0.25, 0.6)
    move = (gain > 0) & (u[:, domain] < commit)
    return jnp.where(move, target, cur)


# --- SHDS ----------------------------------------------------------------------------


def shds_A(cur, delta, u, t, duration, power, load_now, capacity):
    """Twin of ``seeds/shds/paper/A.py`` (overload repair)."""
    m, domain = delta.shape
    rows = jnp.arange(m)
    slots = jnp.arange(load_now.shape[0])
    running = (slots[None, :] >= cur[:, None]) & (slots[None, :] < (cur + duration)[:, None])
    overloaded = (running & (load_now > capacity)[None, :]).any(axis=1)
    target = _pick(delta <= delta.min(axis=1, keepdims=True) + 1e-9, u, domain)
    gain = delta[rows, cur] - delta[rows, target]
    commit = jnp.clip(0.15 + 0.1 * power * duration / 6.0, 0.15, 0.45)
    move = overloaded & (gain > 0) & (u[:, domain] < commit)
    return jnp.where(move, target, cur)


def shds_B(cur, delta, u, t, duration, power, pref_start, price, capacity_slack):
    """Twin of ``seeds/shds/paper/B.py`` (price and preference)."""
    m, domain = delta.shape
    rows = jnp.arange(m)
    slots = jnp.arange(price.shape[0])
    starts = jnp.arange(domain)
    window = (slots[None, None, :] >= starts[None, :, None]) & (
        slots[None, None, :] < (starts[None, :, None] + duration[:, None, None])
    )
    fits = ((window * power[:, None, None]) <= jnp.maximum(capacity_slack, 0.0)[None, None, :] + 1e-9).all(axis=2)
    fits = fits.at[rows, cur].set(True)
    cost = jnp.where(fits, delta, jnp.inf)
    target = _pick(cost <= cost.min(axis=1, keepdims=True) + 1e-9, u, domain)
    gain = delta[rows, cur] - delta[rows, target]
    move = (gain > 0) & (u[:, domain] < 0.2)
    return jnp.where(move, target, cur)


def shds_C(cur, delta, u, t, duration, power, load_now, load_change, capacity):
    """Twin of ``seeds/shds/paper/C.py`` (load-trend stabilisation)."""
    m, domain = delta.shape
    rows = jnp.arange(m)
    target = _pick(delta <= delta.min(axis=1, keepdims=True) + 1e-9, u, domain)
    gain = delta[rows, cur] - delta[rows, target]
    swing = jnp.abs(load_change).sum() / jnp.maximum(capacity.sum(), 1e-9)
    commit = jnp.clip(0.25 - swing, 0.05, 0.25)
    move = (gain > 0) & (u[:, domain] < commit)
    return jnp.where(move, target, cur)


_SEEDS: dict[str, dict[str, Callable]] = {
    "dgc": {"A": dgc_A, "B": dgc_B, "C": dgc_C},
    "dimes": {"A": dimes_A, "B": dimes_B, "C": dimes_C},
    "sensor_dcsp": {"A": sensor_dcsp_A, "B": sensor_dcsp_B, "C": sensor_dcsp_C},
    "shds": {"A": shds_A, "B": shds_B, "C": shds_C},
}


def seed_jax_team(name: str) -> dict[str, Callable]:
    """The JAX twins of a DCOP benchmark's seed programs, one policy per role."""
    if name not in _SEEDS:
        raise NotImplementedError(f"no JAX seed twins for {name!r}; available: {sorted(_SEEDS)}")
    return {role: as_policy(fn) for role, fn in _SEEDS[name].items()}
