"""``python -m baselines.rl train NAME --algo ippo|mappo --steps N --out DIR`` / ``python -m baselines.rl eval DIR``."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def _cmd_train(args) -> int:
    from baselines.rl.policy import save
    from baselines.rl.ppo import Config, Trainer

    cfg = Config(env=args.name, algo=args.algo, interface=args.interface, total_steps=args.steps,
                 n_envs=args.n_envs, n_steps=args.n_steps, hidden=args.hidden, lr=args.lr, seed=args.seed,
                 chunk=args.chunk, pool=args.pool, n_val=args.n_val, max_wall_s=args.max_wall)
    start = time.perf_counter()
    trainer = Trainer(cfg, log=print if not args.quiet else (lambda *a: None))
    result = trainer.train()
    summary = {"best_val": result["best_val"], "best_update": result["best_update"], "init_val": result["init_val"],
               "timing": {**result["timing"], "total_wall_s": time.perf_counter() - start},
               "history": result["history"]}
    out = save(args.out, result["best"], cfg, trainer.dims, summary)
    print(f"saved {out} (best validation score {result['best_val']:.4g} at update {result['best_update']}, "
          f"untrained {result['init_val']:.4g}; {result['timing']['env_steps']} env steps, "
          f"{summary['timing']['total_wall_s']:.0f} s wall, {result['timing']['steps_per_s']:,.0f} env steps/s training)")
    if args.plot:
        from baselines.rl.plot import plot_history
        plot_history([out], args.plot)
        print(f"curve: {args.plot}")
    return 0


def _cmd_eval(args) -> int:
    from baselines.rl.policy import evaluate_checkpoint

    res = evaluate_checkpoint(args.dir)
    meta = json.loads((Path(args.dir) / "config.json").read_text())
    name, algo = meta["config"]["env"], meta["config"]["algo"]
    for regime, r in res.items():
        flag = "" if r["complete"] and r["invalid"] == 0 else f"  (invalid {r['invalid']}, complete {r['complete']})"
        print(f"{name} {algo} {regime}: test mean objective {r['objective']:.4f} ± {r['objective_std']:.2f} "
              f"(score {r['score']:.4f}, {r['n']} instances){flag}")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0


def _cmd_sweep(args) -> int:
    import relic_envs
    from baselines.rl.sweep import plan, sweep

    runs = plan(args.env or relic_envs.names(), args.algo, args.seeds)
    settings = {"total_steps": args.steps, "n_envs": args.n_envs, "n_steps": args.n_steps, "hidden": args.hidden,
                "pool": args.pool, "n_val": args.n_val, "chunk": args.chunk, "interface": args.interface}
    sweep(args.out, runs, max_runs=args.max_runs, max_wall_s=args.max_wall, log=print if not args.quiet else
          (lambda *a: None), **settings)
    return 0


def _cmd_table(args) -> int:
    from baselines.rl.sweep import format_table

    sys.stdout.write(format_table(args.out))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m baselines.rl", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train", help="train IPPO or MAPPO on a benchmark's training regimes")
    t.add_argument("name")
    t.add_argument("--algo", choices=["ippo", "mappo"], default="ippo")
    t.add_argument("--steps", type=int, default=200_000, help="env steps (joint steps of one instance)")
    t.add_argument("--out", required=True)
    t.add_argument("--interface", default="paper")
    t.add_argument("--n-envs", type=int, default=32)
    t.add_argument("--n-steps", type=int, default=64)
    t.add_argument("--hidden", type=int, default=32)
    t.add_argument("--lr", type=float, default=None)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--chunk", type=int, default=10, help="updates between validation points")
    t.add_argument("--pool", type=int, default=200, help="training instances")
    t.add_argument("--n-val", type=int, default=20, help="validation instances")
    t.add_argument("--max-wall", type=float, default=None, help="stop after the chunk that passes this many seconds")
    t.add_argument("--plot", default=None, help="learning-curve PNG")
    t.add_argument("--quiet", action="store_true")
    t.set_defaults(func=_cmd_train)
    e = sub.add_parser("eval", help="greedy test-split means of a checkpoint")
    e.add_argument("dir")
    e.add_argument("--json", default=None)
    e.set_defaults(func=_cmd_eval)
    from baselines.rl.sweep import ALGOS, DEFAULT_STEPS, SEEDS

    w = sub.add_parser("sweep", help="IPPO/MAPPO on many benchmarks at one budget and several seeds; skips "
                                     "finished runs (baselines/rl/sweep.py)")
    w.add_argument("--out", required=True)
    w.add_argument("--env", nargs="+", default=None, help="benchmarks (default: all 14)")
    w.add_argument("--algo", nargs="+", default=list(ALGOS), choices=ALGOS)
    w.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    w.add_argument("--steps", type=int, default=DEFAULT_STEPS, help=f"env steps per run (default {DEFAULT_STEPS:,})")
    w.add_argument("--interface", default="paper")
    w.add_argument("--n-envs", type=int, default=32)
    w.add_argument("--n-steps", type=int, default=64)
    w.add_argument("--hidden", type=int, default=32)
    w.add_argument("--chunk", type=int, default=10)
    w.add_argument("--pool", type=int, default=200)
    w.add_argument("--n-val", type=int, default=20)
    w.add_argument("--max-runs", type=int, default=None, help="stop after this many runs (the rest: next call)")
    w.add_argument("--max-wall", type=float, default=None, help="start no run after this many seconds")
    w.add_argument("--quiet", action="store_true")
    w.set_defaults(func=_cmd_sweep)
    tb = sub.add_parser("table", help="a sweep's table: mean ± std over seeds beside each seed")
    tb.add_argument("out")
    tb.set_defaults(func=_cmd_table)
    return p


def main(argv=None) -> int:
    from baselines.rl import require_jax
    from relic_envs.errors import RelicError

    args = build_parser().parse_args(argv)
    try:
        require_jax()
        return args.func(args)
    except RelicError as exc:  # a missing extra, a bad setting: one line
        print(f"python -m baselines.rl {args.cmd}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
