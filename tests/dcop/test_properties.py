"""Property tests of the four DCOP objectives on generator-drawn instances.

For random instances (every regime of the real generator) and random assignments:

(a) ``simulator.cost`` equals a naive recomputation written here with plain Python
    loops straight from the paper's formulas (relic.tex, Appendix B.4), using none of
    the simulators' helpers;
(b) the landscape is exact: ``landscape[i, v] - landscape[i, x_i]`` equals
    ``cost(x with x_i = v) - cost(x)`` for random ``(i, v)``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relic_envs import get_benchmark
from relic_envs.dcop.dgc import simulator as dgc_sim
from relic_envs.dcop.dimes import simulator as dimes_sim
from relic_envs.dcop.sensor_dcsp import simulator as sensor_sim
from relic_envs.dcop.shds import simulator as shds_sim

SETTINGS = settings(max_examples=30, deadline=None)
SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


# --------------------------------------------------------------------------- naive costs


def naive_dgc(inst, x) -> float:
    """sum_{(i,j) in E} w_ij 1{x_i = x_j}."""
    total = 0.0
    for (i, j), w in zip(inst.edges.tolist(), inst.weights.tolist(), strict=True):
        if x[i] == x[j]:
            total += w
    return total


def naive_dimes(inst, x) -> float:
    """100 * off-majority + 10 * sum_p max(0, tau - |gap|) + sum_i a[i, x_i]."""
    xs = [int(v) for v in x]
    n = len(xs)
    meetings: dict[int, list[int]] = {}
    for i in range(n):
        meetings.setdefault(int(inst.meeting[i]), []).append(i)
    off = 0
    for members in meetings.values():
        counts = [0] * 20
        for i in members:
            counts[xs[i]] += 1
        q = max(range(20), key=lambda h: (counts[h], -h))  # majority slot, lowest index on ties
        off += sum(1 for i in members if xs[i] != q)
    travel = 0.0
    for p in range(n // 2):
        a, b = 2 * p, 2 * p + 1
        tau = float(inst.travel[int(inst.location[a]), int(inst.location[b])])
        travel += max(0.0, tau - abs(xs[a] - xs[b]))
    pref = sum(float(inst.pref[i, xs[i]]) for i in range(n))
    return 100.0 * off + 10.0 * travel + pref


def naive_sensor(inst, x) -> float:
    """sum_t v_t 1{n_t<3} + sum_t max(0, n_t-3) + 100 sum_{s<s', same target} I_ss'."""
    n_sensors = len(x)
    g = [int(inst.candidate[s, int(x[s])]) for s in range(n_sensors)]
    n_targets = len(inst.target_value)
    cov = [0] * n_targets
    for t in g:
        if t != -1:
            cov[t] += 1
    total = 0.0
    for t in range(n_targets):
        if cov[t] < 3:
            total += float(inst.target_value[t])
        total += max(0, cov[t] - 3)
    inc = inst.incompatible.tolist()
    for s in range(n_sensors):
        if g[s] == -1:
            continue
        for s2 in range(s + 1, n_sensors):
            if g[s2] == g[s] and inc[s][s2]:
                total += 100.0
    return total


def naive_shds(inst, x) -> float:
    """sum_h theta_h L_h + 5 sum_i |x_i - pref_i| + 200 sum_h max(0, L_h - kappa_h)."""
    load = [0.0] * 24
    for i in range(len(x)):
        start, d, p = int(x[i]), int(inst.duration[i]), float(inst.power[i])
        for h in range(24):
            if start <= h < start + d:
                load[h] += p
    energy = sum(float(inst.price[h]) * load[h] for h in range(24))
    pref = sum(abs(int(x[i]) - int(inst.pref_start[i])) for i in range(len(x)))
    overload = sum(max(0.0, load[h] - float(inst.capacity[h])) for h in range(24))
    return energy + 5.0 * pref + 200.0 * overload


CASES = {
    "dgc": (dgc_sim, naive_dgc),
    "dimes": (dimes_sim, naive_dimes),
    "sensor_dcsp": (sensor_sim, naive_sensor),
    "shds": (shds_sim, naive_shds),
}


# --------------------------------------------------------------------------- draws


@st.composite
def instance_and_assignment(draw, name: str):
    bench = get_benchmark(name)
    regime = draw(st.sampled_from(list(bench.regimes())))
    inst = bench.generate(regime, np.random.default_rng(draw(SEEDS)))
    domain = int(bench.problem.domain)
    # Values drawn from a prefix 0..k-1 of the domain: small k concentrates the
    # assignment (DiMES majorities, SHDS overload, SensorDCSP excess coverage).
    k = draw(st.sampled_from(sorted({1, 2, min(4, domain), domain})))
    rng = np.random.default_rng(draw(SEEDS))
    x = rng.integers(0, k, size=inst.x0.size).astype(np.int64)
    if draw(st.booleans()):
        x = inst.x0.astype(np.int64).copy()
    return inst, x, rng, domain


def _check(name: str, data) -> None:
    sim, naive = CASES[name]
    inst, x, rng, domain = data
    base = sim.cost(inst, x)
    # (a) cost equals the paper's formula, recomputed naively.
    assert base == pytest.approx(naive(inst, x), rel=1e-9, abs=1e-6)
    # (b) landscape differences are exact global-cost differences.
    delta = sim.landscape(inst, x)
    assert delta.shape == (x.size, domain)
    for _ in range(8):
        i = int(rng.integers(x.size))
        v = int(rng.integers(domain))
        y = x.copy()
        y[i] = v
        moved = sim.cost(inst, y)
        assert delta[i, v] - delta[i, x[i]] == pytest.approx(moved - base, rel=1e-9, abs=1e-6), (i, v)
    # The moved assignment also satisfies (a).
    assert moved == pytest.approx(naive(inst, y), rel=1e-9, abs=1e-6)


@SETTINGS
@given(instance_and_assignment("dgc"))
def test_dgc_properties(data):
    _check("dgc", data)


@SETTINGS
@given(instance_and_assignment("dimes"))
def test_dimes_properties(data):
    _check("dimes", data)


@SETTINGS
@given(instance_and_assignment("sensor_dcsp"))
def test_sensor_dcsp_properties(data):
    _check("sensor_dcsp", data)


@SETTINGS
@given(instance_and_assignment("shds"))
def test_shds_properties(data):
    _check("shds", data)
