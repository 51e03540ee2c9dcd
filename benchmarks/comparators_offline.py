"""Every LLM comparator end to end on every benchmark, on the offline backend (no LLM).

For each method of ``baselines.ahd`` and each registered benchmark: a short search
(``--batches`` x ``--proposals`` per role, offline AST-mutation backend), then the final
team and the seed team on the first ``--test`` instances of the benchmark's first test
size, in one table. The offline backend is not a language model, so the scores say that
the machinery runs end to end, not how the methods compare. Prints a table; asserts
nothing.

    python benchmarks/comparators_offline.py                      # all methods, all benchmarks
    python benchmarks/comparators_offline.py --method eoh --env dgc --batches 5 --proposals 10
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

import relic_envs
from baselines.ahd import METHODS, SearchConfig
from relic_envs.seeds import seed_source
from relic_learner.batches import Batch
from relic_learner.evaluate import TeamEvaluator


def _team_scores(name: str, sources: dict[str, str], instances: list) -> float:
    bench = relic_envs.get_benchmark(name)
    with TeamEvaluator(bench, workers=1) as evaluator:
        result = evaluator.evaluate(sources, Batch(tuple(instances)))
    return result.mean_objective if result.ok else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--method", action="append", choices=sorted(METHODS))
    parser.add_argument("--env", action="append", choices=relic_envs.names())
    parser.add_argument("--batches", type=int, default=1)
    parser.add_argument("--proposals", type=int, default=2)
    parser.add_argument("--test", type=int, default=5)
    args = parser.parse_args()
    methods, envs = args.method or sorted(METHODS), args.env or relic_envs.names()
    print(f"offline backend (AST mutation, not an LLM); {args.batches} batch(es) x {args.proposals} proposals per role; "
          f"raw objective on {args.test} test instances")
    print(f"{'method':<9} {'benchmark':<12} {'calls p/a':>9} {'invalid':>7} {'team':>12} {'seeds':>12} {'seconds':>8}")
    for name in envs:
        test = next(iter(relic_envs.splits(name).test.values()))[: args.test]
        seeds = _team_scores(name, {r: seed_source(name, r) for r in relic_envs.get_benchmark(name).roles}, list(test))
        for method in methods:
            with tempfile.TemporaryDirectory() as out:
                start = time.perf_counter()
                search = METHODS[method](SearchConfig(method=method, env=name, batches=args.batches,
                                                      proposals=args.proposals, workers=1), Path(out) / "run")
                team = search.learn()
                seconds = time.perf_counter() - start
                calls = search.llm.ledger.snapshot()["calls"]
                invalid = sum(e["kind"] == "proposal" and e["status"] == "invalid" for e in search.run.events())
            score = _team_scores(name, team, list(test))
            print(f"{method:<9} {name:<12} {calls['proposal']:>4}/{calls['auxiliary']:<4} {invalid:>7} "
                  f"{score:>12.6g} {seeds:>12.6g} {seconds:>8.1f}", flush=True)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
