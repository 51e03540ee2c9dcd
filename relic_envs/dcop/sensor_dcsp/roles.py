"""SensorDCSP roles: A coverage repair and incompatibility risk, B target value and
supply scarcity, C coverage dynamics and coordination (Appendix B.4).

Every per-value feature is an ``(m, 4)`` array aligned with ``delta``: entry
``[k, v]`` describes the target that value ``v`` of sensor ``idx[k]`` tracks, and is 0
where the value tracks nothing (sleep, padding).

- ``candidate_target`` (int): the target id of each value, ``-1`` for sleep/padding.
- ``valid_mask`` (bool): True for sleep and for values with a visible target; False
  for padded values (legal, but they track nothing).
- ``target_value``: ``v_t``. ``target_coverage``: ``n_t`` now (this sensor included).
- ``target_supply``: how many sensors of the instance have ``t`` among their values.
- ``incompatibility_cost``: ``100 x`` incompatible sensors tracking ``t`` now.
- ``coverage_change``: ``n_t`` now minus ``n_t`` one sweep earlier (0 at ``t = 0``).
"""

from __future__ import annotations

import numpy as np

from relic_envs.dcop._sweep import DCOPProblem, Feature, SweepContext, per_value
from relic_envs.dcop.sensor_dcsp import generator, simulator

CANDIDATE = Feature("candidate_target", "int64 (m, 4): target id of each value; -1 for sleep (value 0) and padding", per_value, "int", -1, 10**6)
VALID = Feature("valid_mask", "bool (m, 4): True for sleep and visible-target values, False for padded values", per_value, "bool")
VALUE = Feature("target_value", "float64 (m, 4): value v_t of each value's target (0 if none)", per_value, low=0.0)
COVERAGE = Feature("target_coverage", "float64 (m, 4): sensors tracking each value's target now (0 if none)", per_value, low=0.0)
INCOMPATIBILITY = Feature("incompatibility_cost", "float64 (m, 4): 100 x incompatible sensors tracking each value's target now", per_value, low=0.0)
SUPPLY = Feature("target_supply", "float64 (m, 4): sensors that can track each value's target (0 if none)", per_value, low=0.0)
CHANGE = Feature("coverage_change", "float64 (m, 4): change of each value's target coverage over the last sweep", per_value)

ROLE_FEATURES = {
    "A": (CANDIDATE, VALID, VALUE, COVERAGE, INCOMPATIBILITY),
    "B": (CANDIDATE, VALID, VALUE, COVERAGE, SUPPLY),
    "C": (CANDIDATE, VALID, COVERAGE, CHANGE, INCOMPATIBILITY),
}
PURPOSES = {
    "A": "coverage repair and incompatibility risk",
    "B": "target value and supply scarcity",
    "C": "coverage dynamics and coordination",
}


class SensorProblem(DCOPProblem, instance=generator.SensorInstance, simulator=simulator):
    domain = simulator.N_VALUES
    purposes = PURPOSES
    role_features = ROLE_FEATURES

    def worst_cost(self, instance):
        # Every target under-covered and over-covered by all its candidate sensors at
        # once (a loose but safe sum), every incompatible pair on one target.
        excess = np.maximum(0, simulator.supply(instance) - simulator.REQUIRED)
        pairs = instance.incompatible.sum() / 2.0
        return float(np.abs(instance.target_value).sum() + excess.sum() + simulator.INCOMPATIBLE_COST * pairs)

    def features(self, ctx: SweepContext, role: str, idx: np.ndarray):
        inst = ctx.instance
        cand = inst.candidate[idx]
        valid = cand >= 0
        safe = np.where(valid, cand, 0)

        def per_target(values: np.ndarray) -> np.ndarray:
            return np.where(valid, values[safe], 0.0)

        n_now = ctx.cache("coverage", lambda: simulator.coverage(inst, ctx.x))
        mask = valid.copy()
        mask[:, 0] = True
        available = {
            "candidate_target": lambda: cand,
            "valid_mask": lambda: mask,
            "target_value": lambda: per_target(inst.target_value),
            "target_coverage": lambda: per_target(n_now.astype(np.float64)),
            "target_supply": lambda: per_target(simulator.supply(inst).astype(np.float64)),
            "incompatibility_cost": lambda: simulator.INCOMPATIBLE_COST
            * np.where(valid, simulator.incompatible_on_target(inst, ctx.x)[idx[:, None], safe], 0.0),
            "coverage_change": lambda: per_target(
                (n_now - simulator.coverage(inst, ctx.x_prev)).astype(np.float64)
            ),
        }
        return self.pick(role, available)
