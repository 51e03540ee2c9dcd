"""Hand-worked checks of the three routing objectives (relic.tex, Appendix B.1).

Each test builds a tiny instance by hand, plays fixed moves through the shared
episode, and compares the reward with the paper's formula evaluated in the comments.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import relic_envs
from relic_envs.mapp.ar.generator import ARInstance
from relic_envs.mapp.ds import simulator as ds_sim
from relic_envs.mapp.ds.generator import DSInstance, Stream
from relic_envs.mapp.pc.generator import PCInstance

#     y
#   0.8 |  2
#   0.6 |  1
#   0.5 |  0 ------ 3        0 = depot (0.5, 0.5)
#       +----------------x
#          0.5     0.8
COORDS = np.array([[0.5, 0.5], [0.5, 0.6], [0.5, 0.8], [0.8, 0.5]])


def _play(name, instance, moves):
    ep = relic_envs.get_benchmark(name).new_episode(instance)
    trace = []
    for step in moves:
        ep.step(dict(zip("ABC", step)))
        trace.append(ep.objective())
    return ep, trace


def test_pc_prize_counted_once_with_simultaneous_arrivals():
    inst = PCInstance(coords=COORDS, budget=1.0, prizes=np.array([0.0, 1.0, 2.0, 3.0]))
    ep, trace = _play(
        "mapp_pc",
        inst,
        [
            (1, 1, 3),  # A and B land on 1 together: q1 = 1 once; C takes q3 = 3      -> 4
            (2, 3, 0),  # A: 0.2 + 0.3 <= 0.9, takes q2 = 2; B reaches 3 (no prize left); C home -> 6
            (0, 2, 0),  # B at 3 has 1 - 0.1 - 0.316 = 0.584 < l32 + l20 = 0.424 + 0.3: mapped home
        ],
    )
    assert trace == pytest.approx([4.0, 6.0, 6.0])
    assert ep.done and ep.routes == [[0, 1, 2, 0], [0, 1, 3, 0], [0, 3, 0]]
    assert ep.fallbacks == [(2, "B", "budget")]
    l13 = math.hypot(0.3, 0.1)
    assert ep.route_lengths() == pytest.approx([0.1 + 0.2 + 0.3, 0.1 + l13 + 0.3, 0.6])


def test_pc_agent_cannot_revisit_its_own_node():
    inst = PCInstance(coords=COORDS, budget=2.0, prizes=np.array([0.0, 1.0, 2.0, 3.0]))
    ep, _ = _play("mapp_pc", inst, [(1, 0, 0), (2, 0, 0), (1, 0, 0)])  # A back to 1: refused, home
    assert ep.routes[0] == [0, 1, 2, 0] and ep.fallbacks == [(2, "A", "revisit")]


def test_ar_sequential_multiplicative_updates_and_repeated_scans():
    # sigma = 0.1; nodes 1 and 2 are 0.2 apart: rho_12 = exp(-0.04 / 0.02) = e^-2,
    # node 1 and 3: l = 0.316, rho_13 = exp(-0.1 / 0.02) = e^-5.
    inst = ARInstance(coords=COORDS, budget=2.0, sigma=0.1)
    ep, trace = _play("mapp_ar", inst, [(1, 1, 0), (2, 0, 0)])
    r12, r13 = math.exp(-2.0), math.exp(-5.0)
    # Step 1: A scans 1 (u1 = 0, u2 = 1 - r12, u3 = 1 - r13), then B scans 1 again:
    # u2 = (1 - r12)^2, u3 = (1 - r13)^2.  R = U0 - U = 3 - u2 - u3.
    assert trace[0] == pytest.approx(3.0 - (1 - r12) ** 2 - (1 - r13) ** 2)
    # Step 2: A scans 2: u2 = 0, u3 *= (1 - rho_23), l23 = 0.424, rho_23 = exp(-0.18 / 0.02) = e^-9.
    assert trace[1] == pytest.approx(3.0 - (1 - r13) ** 2 * (1 - math.exp(-9.0)))
    # A single scan of node 1 would have removed less than the repeated one.
    single = 3.0 - (1 - r12) - (1 - r13)
    assert trace[0] > single


def test_ds_highest_value_active_request_served_in_rollout_order(monkeypatch):
    #   row tau, node:   value, expiry (= tau + ttl)
    #   (0, 1): 2.0, 3      (1, 1): 5.0, 4      (0, 2): 4.0, 0   (expires before anyone lands)
    fire = np.zeros((4, 3), dtype=bool)
    value = np.zeros((4, 3))
    expiry = np.tile(np.arange(4)[:, None], (1, 3)) + 3
    for (tau, node), (v, e) in {(0, 1): (2.0, 3), (1, 1): (5.0, 4), (0, 2): (4.0, 0)}.items():
        fire[tau, node], value[tau, node], expiry[tau, node] = True, v, e
    monkeypatch.setattr(ds_sim, "stream", lambda inst: Stream(fire=fire, value=value, expiry=expiry))
    inst = DSInstance(
        coords=COORDS[:3], budget=3.0, rates=np.array([0.0, 0.1, 0.1]), value_rates=np.ones(3), mean_rate=0.1, seed=0
    )
    bench = relic_envs.get_benchmark("mapp_ds")
    ep = bench.new_episode(inst)
    # At epoch 0 the roles see node 1's best active request (2.0, ttl 3 - 0) and node 2's (4.0, ttl 0).
    kwargs = bench.signatures()["A"].to_kwargs(ep.observe("A"))
    assert kwargs["request_dict"] == {1: (2.0, 3), 2: (4.0, 0)}
    ep.step({"A": 1, "B": 1, "C": 2})
    # Landing at t = 1: A takes node 1's best active request (5.0, arrived at 1), B the next (2.0);
    # C finds node 2's request expired at 0.  R = 5 + 2.
    assert ep.objective() == pytest.approx(7.0)
    ep.step({"A": 2, "B": 0, "C": 1})  # DS allows coming back; nothing left to serve
    assert ep.objective() == pytest.approx(7.0)
    ep.step({"A": 1, "B": 0, "C": 1})  # C asks to stay where it is: mapped home
    assert ep.fallbacks == [(2, "C", "stay")] and ep.routes[2] == [0, 2, 1, 0]
