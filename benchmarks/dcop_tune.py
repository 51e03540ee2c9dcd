"""Choose each classical DCOP algorithm's parameter on the TRAINING split only.

    python benchmarks/dcop_tune.py [--env dgc ...] [--algorithm dsa-b ...]

For every benchmark and algorithm of ``baselines.dcop.configs.GRIDS`` it runs every
grid value for 50 sweeps on the training instances (the five batches of ten, all
regimes), takes the mean final cost, and picks the value of least mean (ties: the
earlier grid value). The test split is never read. Results, with every grid value's
training mean, go to ``baselines/dcop/tuned.json`` (merged into what is there).

MGM-2 evaluates every joint move of every offer with the benchmark's full landscape
(``domain`` landscapes per offer), which is slow where the landscape is large: on
DiMES and SHDS it is tuned on the first two instances of each training batch (10
instances), which the JSON records as ``instances``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import relic_envs
from baselines.dcop.configs import DEFAULTS, GRIDS, TUNED_PATH, make_solver
from baselines.dcop.sweep import run_sweeps

DCOPS = ("dgc", "dimes", "sensor_dcsp", "shds")
SUBSET = {("mgm2", "dimes"): 2, ("mgm2", "shds"): 2}  # instances per training batch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--env", action="append", choices=DCOPS)
    parser.add_argument("--algorithm", action="append", choices=sorted(GRIDS))
    args = parser.parse_args()
    tuned = json.loads(TUNED_PATH.read_text()) if TUNED_PATH.exists() else {}
    for name in args.env or DCOPS:
        batches = relic_envs.splits(name).train
        for algorithm in args.algorithm or GRIDS:
            if algorithm == "maxsum" and name != "dgc":
                continue  # Max-Sum needs a pairwise cost: DGC only (baselines/dcop/maxsum.py)
            per_batch = SUBSET.get((algorithm, name), len(batches[0]))
            instances = [inst for batch in batches for inst in batch[:per_batch]]
            param = DEFAULTS[algorithm][0]
            means = {}
            start = time.perf_counter()
            for value in GRIDS[algorithm]:
                solver = make_solver(f"{algorithm}:{param}={value}", name)
                means[value] = float(np.mean([t.final for t in run_sweeps(name, solver, instances)]))
            chosen = min(GRIDS[algorithm], key=lambda v: means[v])
            tuned.setdefault(name, {})[algorithm] = {
                "param": param,
                "chosen": chosen,
                "default": DEFAULTS[algorithm][1][param],
                "train_mean": {str(v): round(m, 4) for v, m in means.items()},
                "instances": f"train1..train5, first {per_batch} of each ({len(instances)})",
            }
            print(f"{name:<12} {algorithm:<7} {param}={chosen:<5} train means {means} ({time.perf_counter() - start:.0f}s)", flush=True)
            TUNED_PATH.write_text(json.dumps(tuned, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
