"""The IPPO/MAPPO results table: each checkpoint's test-split means beside the seed team's, same instances.

    python benchmarks/rl_table.py runs/rl/*            # checkpoint dirs written by `python -m baselines.rl train`
    python benchmarks/rl_table.py --seeds-only dgc     # just (re)compute the seed rows
    python benchmarks/rl_table.py --over-seeds DIR...  # runs of one setting with different --seed: mean ± std
    python benchmarks/rl_table.py --sweep DIR...        # a validation sweep: every run's best validation score, the choice

Trained policies are scored greedily through the functional env (float64: exact parity with the
numpy env); the seed team through ``relic_envs.rollout`` on the same canonical test instances.
Seed means are cached in docs/images/rl/seed_means.json. Raw objectives in the paper's units and
direction (costs: lower is better). Prints a markdown table; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

CACHE = Path(__file__).resolve().parents[1] / "docs" / "images" / "rl" / "seed_means.json"


def seed_means(env: str, interface: str = "paper") -> dict[str, float]:
    from baselines.rl.sweep import seed_team_means

    return seed_team_means(CACHE, env, interface)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="*")
    parser.add_argument("--seeds-only", nargs="*", default=None)
    parser.add_argument("--over-seeds", action="store_true",
                        help="group the runs by (benchmark, interface, algorithm): test means over training seeds")
    parser.add_argument("--sweep", action="store_true",
                        help="group the runs by (benchmark, algorithm): best validation score per (lr, hidden), the best named")
    args = parser.parse_args()
    if args.sweep:
        sweep(args.dirs)
        return
    if args.over_seeds:
        over_seeds(args.dirs)
        return
    if args.seeds_only is not None:
        for env in args.seeds_only:
            print(env, seed_means(env), flush=True)
        return
    from baselines.rl.policy import evaluate_checkpoint

    print("| benchmark | algo | env steps | train wall s | best val. at update | test regime | RL test mean | seeds test mean | direction |")
    print("|---|---|---:|---:|---:|---|---:|---:|---|")
    import relic_envs
    for d in args.dirs:
        meta = json.loads((Path(d) / "config.json").read_text())
        cfg, summ = meta["config"], meta["summary"]
        env = cfg["env"]
        cached = Path(d) / "test_eval.json"  # written by `python -m baselines.rl eval DIR --json DIR/test_eval.json`
        res = json.loads(cached.read_text()) if cached.exists() else evaluate_checkpoint(d)
        seeds = seed_means(env, cfg["interface"])
        direction = "cost, lower is better" if relic_envs.get_benchmark(env).minimize else "higher is better"
        for regime, r in res.items():
            flag = "" if r["complete"] and r["invalid"] == 0 else f" (invalid {r['invalid']})"
            print(f"| {env} | {cfg['algo'].upper()} | {summ['timing']['env_steps']:,} | {summ['timing']['total_wall_s']:.0f} | "
                  f"{summ['best_update']} | {regime} | {r['objective']:.2f}{flag} | {seeds[regime]:.2f} | {direction} |", flush=True)


def over_seeds(dirs: list[str]) -> None:
    """One row per (benchmark, interface, algorithm, test regime): every training seed's test mean,
    their mean and sample standard deviation, beside the seed team's (the same instances)."""
    import relic_envs

    groups: dict[tuple[str, str, str], list[tuple[int, int, dict]]] = {}
    for d in dirs:
        meta = json.loads((Path(d) / "config.json").read_text())
        cfg = meta["config"]
        res = json.loads((Path(d) / "test_eval.json").read_text())
        groups.setdefault((cfg["env"], cfg["interface"], cfg["algo"]), []).append(
            (cfg["seed"], meta["summary"]["timing"]["env_steps"], res))
    print("| benchmark | interface | algo | env steps per run | test regime | per training seed (seed: mean) | "
          "mean ± std over seeds | seeds' program team | direction |")
    print("|---|---|---|---:|---|---|---:|---:|---|")
    for (env, interface, algo), runs in sorted(groups.items()):
        runs.sort()
        seeds = seed_means(env, interface)
        direction = "cost, lower is better" if relic_envs.get_benchmark(env).minimize else "higher is better"
        steps = sorted({s for _, s, _ in runs})
        for regime in runs[0][2]:
            values = [res[regime]["objective"] for _, _, res in runs]
            cells = ", ".join(f"{seed}: {v:.2f}" for (seed, _, _), v in zip(runs, values))
            spread = f"{np.mean(values):.2f} ± {np.std(values, ddof=1):.2f}" if len(values) > 1 else f"{values[0]:.2f}"
            print(f"| {env} | {interface} | {algo.upper()} | {', '.join(f'{s:,}' for s in steps)} | {regime} | {cells} | "
                  f"{spread} | {seeds[regime]:.2f} | {direction} |", flush=True)


def sweep(dirs: list[str]) -> None:
    """Per (benchmark, algorithm): each run's best validation score (training-regime instances,
    higher is better) and the configuration that scores best; no test split is read."""
    from baselines.rl.ppo import Config

    # per run: (lr, hidden, best validation, its update, untrained validation, env steps, run name)
    groups: dict[tuple[str, str], list[tuple[float, int, float, int, float, int, str]]] = {}
    for d in dirs:
        meta = json.loads((Path(d) / "config.json").read_text())
        cfg, summ = meta["config"], meta["summary"]
        lr = Config(cfg["env"], cfg["algo"], lr=cfg["lr"]).learning_rate
        groups.setdefault((cfg["env"], cfg["algo"]), []).append(
            (lr, cfg["hidden"], summ["best_val"], summ["best_update"], summ["init_val"], summ["timing"]["env_steps"],
             Path(d).name))
    for (env, algo), runs in sorted(groups.items()):
        print((env, algo))
        for lr, hidden, best, update, init, steps, _ in sorted(runs):
            print(f"  lr {lr:<8g} hidden {hidden:>3}  best validation {best:>9.3f} at update {update:>3} "
                  f"(untrained {init:.3f}; {steps} env steps)")
        print(f"  chosen: {max(runs, key=lambda r: r[2])[6]}")


if __name__ == "__main__":
    main()
