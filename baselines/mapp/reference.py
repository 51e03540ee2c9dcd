"""Cached best-found references of the MAPP test splits that are not CP-SAT runs.

- ``mapp_ar``: the better of the iterated local search and its long, randomly shaken run
  (``baselines.mapp.plans``, ``ils`` and ``ils-long``: ``ILS_LONG`` = 300 iterations
  without improvement, at most 2000), the best AR plan we have; MAPP-AR has no useful bound (module doc of ``baselines.mapp.cpsat``).
- ``mapp_ds``: the offline full-information reference (``baselines.mapp.dynamic``), which
  knows every future request: an upper *reference* for the online policies, not a bound.

Each is replayed through the benchmark's episode; the cache holds the episode objective,
the wall time and the routes (0-padded) per test instance:
``relic_envs/data/<name>/reference_test.npz``
(``python -m baselines.mapp.reference --write mapp_ar mapp_ds``).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from baselines.mapp import dynamic, plans
from relic_envs.core.benchmark import ROLES
from relic_envs.core.references import load_results, reference_path, save_results

NAMES = ("mapp_ar", "mapp_ds")
LABEL = {"mapp_ar": "best of ILS and a long randomised ILS (best found)", "mapp_ds": "offline full-information reference (upper reference)"}


def cache_path(name: str) -> Path:
    return reference_path(name, "reference_test.npz")


def routes_of(name: str, instance) -> list[list[int]]:
    if name == "mapp_ar":
        model = plans.value_model(name, instance)
        return max((plans.solve(name, instance, m) for m in ("ils", "ils-long")), key=model.value)
    if name == "mapp_ds":
        return dynamic.offline_routes(instance)
    raise ValueError(f"no reference for {name!r}")


def write_cache(name: str, progress: bool = True):
    from relic_envs.core.splits import splits

    results = {}
    for regime, instances in splits(name).test.items():
        obj, wall, all_routes = [], [], []
        for inst in tqdm(instances, desc=f"reference {name} {regime}", disable=not progress):
            t0 = time.perf_counter()
            routes = routes_of(name, inst)
            ep = plans.play(name, inst, routes)
            assert not ep.fallbacks, ep.fallbacks
            obj.append(ep.objective())
            wall.append(time.perf_counter() - t0)
            all_routes.append(routes)
        width = max(1, max(len(r) for rs in all_routes for r in rs))
        packed = np.zeros((len(instances), len(ROLES), width), dtype=np.int64)
        for i, rs in enumerate(all_routes):
            for k, r in enumerate(rs):
                packed[i, k, : len(r)] = r
        results[regime] = {"objective": np.array(obj), "wall_time": np.array(wall), "routes": packed}
    meta = {"benchmark": name, "split": "test", "method": LABEL[name],
            "settings": {"ils_long": plans.ILS_LONG, "power": plans.ILS_POWER.get(name)} if name == "mapp_ar"
            else {"moves": dynamic.OFFLINE_MOVES, "seed": dynamic.OFFLINE_SEED}}
    save_results(cache_path(name), results, meta)
    return load_results(cache_path(name))


def load_cache(name: str):
    return load_results(cache_path(name))


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="best-found references of the MAPP-AR / MAPP-DS test splits")
    ap.add_argument("--write", nargs="+", choices=list(NAMES), default=[])
    args = ap.parse_args()
    for name in args.write:
        write_cache(name)
    for name in args.write or NAMES:
        loaded = load_cache(name)
        if loaded is None:
            print(f"{name}: no cached reference; python -m baselines.mapp.reference --write {name}")
            continue
        results, meta = loaded
        for regime in sorted(results, key=lambda r: int(r[4:])):
            res = results[regime]
            print(f"{name} {regime}: {meta['method']} {res['objective'].mean():.2f} ± {res['objective'].std():.2f}, "
                  f"{res['wall_time'].mean():.1f}s/instance")
