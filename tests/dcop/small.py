"""Small instances of the four DCOPs from their own generators (for fast tests)."""

from __future__ import annotations

import numpy as np

from relic_envs.dcop.dgc import generator as dgc_gen
from relic_envs.dcop.dimes import generator as dimes_gen
from relic_envs.dcop.sensor_dcsp import generator as sensor_gen
from relic_envs.dcop.shds import generator as shds_gen

DCOPS = ("dgc", "dimes", "sensor_dcsp", "shds")

# Small: a few dozen variables, for properties over many sweeps.
SMALL = {
    "dgc": lambda rng: dgc_gen.generate(dgc_gen.DGCRegime(4.0, None, n_vars=30), rng),
    "dimes": lambda rng: dimes_gen.generate(dimes_gen.DiMESRegime(4, n_people=12), rng),
    "sensor_dcsp": lambda rng: sensor_gen.generate(sensor_gen.SensorRegime(2.1, n_sensors=30, n_targets=5), rng),
    "shds": lambda rng: shds_gen.generate(shds_gen.SHDSRegime(1.1, n_devices=15), rng),
}

# Tiny: few enough assignments to enumerate.
TINY = {
    "dgc": lambda rng: dgc_gen.generate(dgc_gen.DGCRegime(3.0, None, n_vars=8), rng),  # 3^8
    "dimes": lambda rng: dimes_gen.generate(dimes_gen.DiMESRegime(2, n_people=2), rng),  # 20^4
    "sensor_dcsp": lambda rng: sensor_gen.generate(sensor_gen.SensorRegime(1.6, n_sensors=7, n_targets=2), rng),  # 4^7
    "shds": lambda rng: shds_gen.generate(shds_gen.SHDSRegime(0.9, n_devices=3), rng),  # 18^3
}


def small(name: str, seed: int):
    return SMALL[name](np.random.default_rng(seed))


def tiny(name: str, seed: int):
    return TINY[name](np.random.default_rng(seed))


def brute_force(problem, instance) -> float:
    """The least cost over every assignment: all but the last variable enumerated, the
    last one set to its best value by the (exact) landscape."""
    n, d = problem.n_vars(instance), problem.domain
    best = np.inf
    grids = np.stack(np.meshgrid(*[np.arange(d)] * (n - 1), indexing="ij"), axis=-1).reshape(-1, n - 1)
    for head in grids:
        x = np.append(head, 0).astype(np.int64)
        delta = problem.landscape(instance, x)
        best = min(best, problem.cost(instance, x) - delta[-1, 0] + delta[-1].min())
    return float(best)
