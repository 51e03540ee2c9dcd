"""Hand-worked checks of the four DCOP objectives (relic.tex, Appendix B.4).

Each test builds a tiny instance by hand, picks an assignment and compares
``simulator.cost`` with the paper's formula evaluated term by term in the comments.
It also checks a few entries of ``simulator.landscape`` (the sum of every cost term
that involves one variable, as a function of that variable's value, everything else
fixed), and that landscape differences equal global cost differences.
"""

from __future__ import annotations

import numpy as np
import pytest

from relic_envs.dcop.dgc import simulator as dgc_sim
from relic_envs.dcop.dgc.generator import DGCInstance
from relic_envs.dcop.dimes import simulator as dimes_sim
from relic_envs.dcop.dimes.generator import DiMESInstance
from relic_envs.dcop.sensor_dcsp import simulator as sensor_sim
from relic_envs.dcop.sensor_dcsp.generator import SensorInstance
from relic_envs.dcop.shds import simulator as shds_sim
from relic_envs.dcop.shds.generator import SHDSInstance


def _i64(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


def _moved(x: np.ndarray, i: int, v: int) -> np.ndarray:
    y = x.copy()
    y[i] = v
    return y


# --------------------------------------------------------------------------- DGC
#
#   C_DGC(x) = sum_{(i,j) in E} w_ij * 1{x_i == x_j}


def _dgc_instance() -> DGCInstance:
    # A 4-cycle 0-1-2-3-0 with weights 5, 7, 11, 13, plus one zero-weight padding
    # self-loop (3, 3) like the training split uses.
    edges = _i64([[0, 1], [1, 2], [2, 3], [0, 3], [3, 3]])
    weights = _i64([5, 7, 11, 13, 0])
    x0 = _i64([0, 0, 0, 0])
    return DGCInstance(edges=edges, weights=weights, x0=x0, owner=np.array([0, 1, 2, 0], dtype=np.int8), seed=1)


def test_dgc_cost_by_hand():
    inst = _dgc_instance()
    x = _i64([0, 0, 1, 1])
    # edge (0,1) w=5 : colours 0,0 same -> 5
    # edge (1,2) w=7 : colours 0,1 diff -> 0
    # edge (2,3) w=11: colours 1,1 same -> 11
    # edge (0,3) w=13: colours 0,1 diff -> 0
    # edge (3,3) w=0 : padding self-loop -> 0
    # total = 5 + 11 = 16
    assert dgc_sim.cost(inst, x) == pytest.approx(16.0)

    # All one colour: every real edge conflicts -> 5 + 7 + 11 + 13 = 36.
    assert dgc_sim.cost(inst, _i64([2, 2, 2, 2])) == pytest.approx(36.0)
    # A proper colouring of the 4-cycle costs 0.
    assert dgc_sim.cost(inst, _i64([0, 1, 0, 1])) == pytest.approx(0.0)


def test_dgc_landscape_by_hand():
    inst = _dgc_instance()
    x = _i64([0, 0, 1, 1])
    delta = dgc_sim.landscape(inst, x)
    assert delta.shape == (4, 3)
    # Vertex 0: neighbours 1 (w=5, colour 0) and 3 (w=13, colour 1).
    #   colour 0 -> conflicts with 1 -> 5
    #   colour 1 -> conflicts with 3 -> 13
    #   colour 2 -> no conflict      -> 0
    np.testing.assert_allclose(delta[0], [5.0, 13.0, 0.0])
    # Vertex 3: neighbours 2 (w=11, colour 1) and 0 (w=13, colour 0); the w=0 loop adds 0.
    np.testing.assert_allclose(delta[3], [13.0, 11.0, 0.0])
    # Exactness: recolouring vertex 0 from 0 to 2 removes the 5 of edge (0,1): 16 -> 11.
    assert dgc_sim.cost(inst, _moved(x, 0, 2)) == pytest.approx(11.0)
    assert delta[0, 2] - delta[0, 0] == pytest.approx(11.0 - 16.0)


# --------------------------------------------------------------------------- DiMES
#
#   C = 100 * sum_i 1{x_i != q_m(i)(x)}
#     + 10  * sum_p max(0, tau_{m(2p), m(2p+1)} - |x_2p - x_2p+1|)
#     + sum_i a[i, x_i]
#   q_m = majority slot of meeting m (lowest slot breaks ties).

# Travel between the 4 locations (symmetric, 0 on the diagonal).
_TRAVEL = _i64([[0, 6, 8, 7], [6, 0, 9, 10], [8, 9, 0, 6], [7, 10, 6, 0]])


def _dimes_pref(n: int) -> np.ndarray:
    # a[i, h] = i + h / 10, so every preference entry is easy to read off.
    return np.arange(n, dtype=np.float64)[:, None] + np.arange(dimes_sim.N_SLOTS, dtype=np.float64)[None, :] / 10.0


def _dimes_instance() -> DiMESInstance:
    # 3 people, 6 attendance variables, 2 meetings; every person attends both.
    #   person 0: vars 0 (meeting 0), 1 (meeting 1)
    #   person 1: vars 2 (meeting 0), 3 (meeting 1)
    #   person 2: vars 4 (meeting 0), 5 (meeting 1)
    # meeting 0 is at location 0, meeting 1 at location 2: tau = travel[0, 2] = 8.
    meeting = _i64([0, 1, 0, 1, 0, 1])
    location = _i64([0, 2, 0, 2, 0, 2])
    return DiMESInstance(
        meeting=meeting,
        location=location,
        travel=_TRAVEL,
        pref=_dimes_pref(6),
        x0=_i64([0] * 6),
        owner=np.array([0, 1, 2, 0, 1, 2], dtype=np.int8),
        seed=7,
    )


def test_dimes_cost_by_hand():
    inst = _dimes_instance()
    x = _i64([3, 9, 3, 5, 4, 9])
    # Off-majority term:
    #   meeting 0 = vars {0, 2, 4} at slots {3, 3, 4}: majority q=3, var 4 off -> 1
    #   meeting 1 = vars {1, 3, 5} at slots {9, 5, 9}: majority q=9, var 3 off -> 1
    #   100 * (1 + 1) = 200
    # Travel term (tau = 8 for every person):
    #   person 0: |3 - 9| = 6 -> max(0, 8 - 6) = 2
    #   person 1: |3 - 5| = 2 -> max(0, 8 - 2) = 6
    #   person 2: |4 - 9| = 5 -> max(0, 8 - 5) = 3
    #   10 * (2 + 6 + 3) = 110
    # Preference term a[i, x_i] = i + x_i / 10:
    #   0.3 + 1.9 + 2.3 + 3.5 + 4.4 + 5.9 = 18.3
    # total = 200 + 110 + 18.3 = 328.3
    assert dimes_sim.cost(inst, x) == pytest.approx(328.3)


def test_dimes_cost_ties_and_no_travel():
    # 4 people, 8 variables, 2 meetings of 4, both meetings at location 1 -> tau = 0.
    meeting = _i64([0, 1, 0, 1, 0, 1, 0, 1])
    inst = DiMESInstance(
        meeting=meeting,
        location=_i64([1] * 8),
        travel=_TRAVEL,
        pref=np.zeros((8, dimes_sim.N_SLOTS)),
        x0=_i64([0] * 8),
        owner=np.zeros(8, dtype=np.int8),
        seed=0,
    )
    x = _i64([2, 7, 2, 7, 5, 1, 5, 0])
    # meeting 0 = vars {0,2,4,6} at {2,2,5,5}: tie 2-2, q=2 (lowest), off = 2
    # meeting 1 = vars {1,3,5,7} at {7,7,1,0}: q=7, off = 2
    # off term = 100 * 4 = 400; travel: tau = travel[1,1] = 0 -> max(0, 0 - gap) = 0
    # preferences all 0 -> total 400
    assert dimes_sim.cost(inst, x) == pytest.approx(400.0)


def test_dimes_landscape_by_hand():
    inst = _dimes_instance()
    x = _i64([3, 9, 3, 5, 4, 9])
    delta = dimes_sim.landscape(inst, x)
    assert delta.shape == (6, dimes_sim.N_SLOTS)
    # Variable 4 (person 2, meeting 0; the other attendees of meeting 0 sit at 3 and 3;
    # its partner var 5 sits at 9, tau = 8). Local cost at slot v =
    #   100 * off(meeting 0 with x_4 = v) + 10 * max(0, 8 - |v - 9|) + (4 + v/10)
    #   v=3 : off 0 -> 0;   |3-9|=6  -> 10*2 = 20; pref 4.3 -> 24.3
    #   v=4 : off 1 -> 100; |4-9|=5  -> 10*3 = 30; pref 4.4 -> 134.4  (current)
    #   v=9 : off 1 -> 100; |9-9|=0  -> 10*8 = 80; pref 4.9 -> 184.9
    #   v=0 : off 1 -> 100; |0-9|=9  -> 0;         pref 4.0 -> 104.0
    #   v=15: off 1 -> 100; |15-9|=6 -> 10*2 = 20; pref 5.5 -> 125.5
    expected = {3: 24.3, 4: 134.4, 9: 184.9, 0: 104.0, 15: 125.5}
    for v, want in expected.items():
        assert delta[4, v] == pytest.approx(want), v
    # The violation landscape drops the preference part.
    viol = dimes_sim.violation(inst, x)
    assert viol[4, 3] == pytest.approx(20.0)
    assert viol[4, 4] == pytest.approx(130.0)
    # Exactness: moving var 4 from 4 to 3 gives 100*1 + 10*(2+6+2) + 18.2 = 218.2.
    assert dimes_sim.cost(inst, _moved(x, 4, 3)) == pytest.approx(218.2)
    assert delta[4, 3] - delta[4, 4] == pytest.approx(218.2 - 328.3)


# --------------------------------------------------------------------------- SensorDCSP
#
#   C = sum_t v_t 1{n_t < 3} + sum_t max(0, n_t - 3) + 100 * sum_{s<s', g_s = g_s' != -1} I_ss'


def _sensor_instance() -> SensorInstance:
    # 5 sensors, 3 targets with values v = (50, 20, 80).
    # candidate[s, value] = target tracked (value 0 sleeps, -1 = padded / nothing):
    #   s0: 1->t0, 2->t1, 3->pad
    #   s1: 1->t0, 2->t2, 3->pad
    #   s2: 1->t0, 2->t1, 3->t2
    #   s3: 1->t0, 2->pad, 3->pad
    #   s4: 1->t1, 2->t0, 3->t2
    candidate = _i64(
        [
            [-1, 0, 1, -1],
            [-1, 0, 2, -1],
            [-1, 0, 1, 2],
            [-1, 0, -1, -1],
            [-1, 1, 0, 2],
        ]
    )
    # Incompatible pairs: (0,2), (1,4), (2,4).
    incompatible = np.zeros((5, 5), dtype=bool)
    for a, b in [(0, 2), (1, 4), (2, 4)]:
        incompatible[a, b] = incompatible[b, a] = True
    return SensorInstance(
        candidate=candidate,
        target_value=np.array([50.0, 20.0, 80.0]),
        incompatible=incompatible,
        x0=_i64([0] * 5),
        owner=np.array([0, 1, 2, 0, 1], dtype=np.int8),
        seed=3,
    )


def test_sensor_cost_by_hand():
    inst = _sensor_instance()
    x = _i64([1, 1, 1, 1, 1])
    # tracked g = (t0, t0, t0, t0, t1); coverage n = (4, 1, 0)
    # coverage terms:
    #   t0: n=4 >= 3 -> 0;  excess max(0, 4-3) = 1 -> 1
    #   t1: n=1 <  3 -> 20; excess 0            -> 20
    #   t2: n=0 <  3 -> 80; excess 0            -> 80
    # incompatibility: (0,2) both on t0 -> 1; (1,4) t0 vs t1 -> 0; (2,4) t0 vs t1 -> 0
    #   100 * 1 = 100
    # total = 1 + 20 + 80 + 100 = 201
    assert sensor_sim.cost(inst, x) == pytest.approx(201.0)


def test_sensor_cost_sleep_and_padding():
    inst = _sensor_instance()
    x = _i64([2, 0, 3, 2, 3])
    # g = (t1, sleep, t2, pad -> nothing, t2); coverage n = (0, 1, 2)
    #   t0: n=0 -> 50; t1: n=1 -> 20; t2: n=2 -> 80; no excess -> 150
    # incompatibility: (2,4) both on t2 -> 1 -> 100; (0,2) t1 vs t2; (1,4) s1 sleeps
    # total = 150 + 100 = 250
    assert sensor_sim.cost(inst, x) == pytest.approx(250.0)


def test_sensor_landscape_by_hand():
    inst = _sensor_instance()
    x = _i64([1, 1, 1, 1, 1])
    delta = sensor_sim.landscape(inst, x)
    assert delta.shape == (5, 4)
    # Sensor 4 (candidates t1, t0, t2; currently on t1). Without it: n = (4, 0, 0).
    # Local cost = coverage terms of t0, t1, t2 + 100 * incompatible sensors on its target.
    #   v=0 sleep: t1 n=0 -> 20; t0 n=4 -> 1; t2 n=0 -> 80; clash 0           -> 101
    #   v=1 (t1) : t1 n=1 -> 20; t0 n=4 -> 1; t2 -> 80; on t1: nobody          -> 101
    #   v=2 (t0) : t1 n=0 -> 20; t0 n=5 -> 2; t2 -> 80; on t0: s1, s2 -> 200  -> 302
    #   v=3 (t2) : t1 -> 20; t0 -> 1; t2 n=1 -> 80; on t2: nobody              -> 101
    np.testing.assert_allclose(delta[4], [101.0, 101.0, 302.0, 101.0])
    # Sensor 3 (candidate t0 only; values 2, 3 padded). Without it: n_t0 = 3.
    #   v=0 sleep: t0 n=3 -> 0;  v=1: t0 n=4 -> excess 1 (s3 is compatible with all) -> 1
    #   v=2, v=3 padded: track nothing -> same as sleep -> 0
    np.testing.assert_allclose(delta[3], [0.0, 1.0, 0.0, 0.0])
    # Exactness: sensor 4 to t0 gives n = (5, 0, 0):
    #   coverage 2 + 20 + 80 = 102; clashes on t0: (0,2), (1,4), (2,4) -> 300; total 402
    assert sensor_sim.cost(inst, _moved(x, 4, 2)) == pytest.approx(402.0)
    assert delta[4, 2] - delta[4, 1] == pytest.approx(402.0 - 201.0)


# --------------------------------------------------------------------------- SHDS
#
#   L_h = sum_i p_i 1{x_i <= h < x_i + d_i}
#   C = sum_h theta_h L_h + 5 sum_i |x_i - pref_i| + 200 sum_h max(0, L_h - kappa_h)


def _shds_instance() -> SHDSInstance:
    # price theta_h = 1 + 0.1 h; capacity 3.0 everywhere except slot 1, where it is 1.5.
    price = 1.0 + 0.1 * np.arange(24, dtype=np.float64)
    capacity = np.full(24, 3.0)
    capacity[1] = 1.5
    #   device 0: d=3, p=2.0, pref 0
    #   device 1: d=2, p=1.5, pref 5
    #   device 2: d=1, p=1.0, pref 10
    return SHDSInstance(
        duration=_i64([3, 2, 1]),
        power=np.array([2.0, 1.5, 1.0]),
        pref_start=_i64([0, 5, 10]),
        home=_i64([0, 0, 1]),
        price=price,
        capacity=capacity,
        x0=_i64([0, 0, 0]),
        owner=np.array([0, 1, 2], dtype=np.int8),
        seed=11,
    )


def test_shds_cost_by_hand():
    inst = _shds_instance()
    x = _i64([1, 2, 10])
    # device 0 runs slots 1,2,3 at 2.0; device 1 slots 2,3 at 1.5; device 2 slot 10 at 1.0
    # L_1 = 2.0, L_2 = 3.5, L_3 = 3.5, L_10 = 1.0, every other slot 0
    # energy: 1.1*2.0 + 1.2*3.5 + 1.3*3.5 + 2.0*1.0 = 2.2 + 4.2 + 4.55 + 2.0 = 12.95
    # preference: 5 * (|1-0| + |2-5| + |10-10|) = 5 * 4 = 20
    # overload: slot 1: 2.0 - 1.5 = 0.5; slot 2: 3.5 - 3 = 0.5; slot 3: 0.5 -> 1.5
    #   200 * 1.5 = 300
    # total = 12.95 + 20 + 300 = 332.95
    assert shds_sim.cost(inst, x) == pytest.approx(332.95)
    np.testing.assert_allclose(shds_sim.load(inst, x)[:4], [0.0, 2.0, 3.5, 3.5])


def test_shds_landscape_by_hand():
    inst = _shds_instance()
    x = _i64([1, 2, 10])
    delta = shds_sim.landscape(inst, x)
    assert delta.shape == (3, 18)
    # Device 1 (d=2, p=1.5, pref 5). Others' load: L_1 = L_2 = L_3 = 2.0, L_10 = 1.0,
    # which alone already overloads slot 1 by 0.5. Local cost at start v =
    #   1.5 (theta_v + theta_v+1) + 5 |v - 5| + 200 * total overload with device 1 at v
    #   v=2 : 1.5*(1.2+1.3)=3.75; 15; overload 0.5+0.5+0.5=1.5 -> 300 -> 318.75 (current)
    #   v=0 : 1.5*(1.0+1.1)=3.15; 25; slot 1 3.5-1.5=2.0     -> 400 -> 428.15
    #   v=5 : 1.5*(1.5+1.6)=4.65;  0; slot 1 0.5              -> 100 -> 104.65
    #   v=9 : 1.5*(1.9+2.0)=5.85; 20; slot 10 2.5<=3, slot 1  -> 100 -> 125.85
    #   v=17: 1.5*(2.7+2.8)=8.25; 60; slot 1 0.5              -> 100 -> 168.25
    expected = {2: 318.75, 0: 428.15, 5: 104.65, 9: 125.85, 17: 168.25}
    for v, want in expected.items():
        assert delta[1, v] == pytest.approx(want), v
    # The violation landscape is the overload part only.
    viol = shds_sim.violation(inst, x)
    assert viol[1, 0] == pytest.approx(400.0)
    assert viol[1, 5] == pytest.approx(100.0)
    # Exactness: device 1 at 5 -> L_1..3 = 2, L_5 = L_6 = 1.5, L_10 = 1
    #   energy 2.2 + 2.4 + 2.6 + 2.25 + 2.4 + 2.0 = 13.85; pref 5*1 = 5; overload 100 -> 118.85
    assert shds_sim.cost(inst, _moved(x, 1, 5)) == pytest.approx(118.85)
    assert delta[1, 5] - delta[1, 2] == pytest.approx(118.85 - 332.95)
