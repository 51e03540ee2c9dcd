"""A finished ``relic learn`` run's final team against the seed team on every training
batch's fixed mixed batch (Eq. 3, the run's own seed), in the sandboxed evaluator.

    python benchmarks/run_vs_seeds.py RUN_DIR
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import relic_envs
from relic_envs.seeds import seed_source
from relic_learner.batches import mixed_batch
from relic_learner.evaluate import TeamEvaluator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run")
    args = parser.parse_args()
    run = Path(args.run)
    config = json.loads((run / "config.json").read_text())
    env, interface = config["env"], config["interface"]
    team = {r: (run / "team" / f"{r}.py").read_text() for r in "ABC"}
    seeds = {r: seed_source(env, r, interface) for r in "ABC"}
    stream = relic_envs.splits(env).train
    with TeamEvaluator(env, interface=interface) as evaluator:
        for b in range(1, config["batches"] + 1):
            batch = mixed_batch(stream, b, config["seed"], horizon=config["replay"], per_batch=config["replay_per_batch"])
            final, seed = evaluator.evaluate_many([team, seeds], batch)
            print(f"batch {b} mixed: final team objective {final.mean_objective:.2f} | seed team {seed.mean_objective:.2f}")


if __name__ == "__main__":
    main()
