"""``relic``: run the RELIC search, re-evaluate a frozen team, inspect a run.

    relic learn --env dgc --llm offline --out runs/dgc-offline
    relic learn --env mapp_pc --llm openai:gpt-4o-mini --out runs/pc [--base-url URL]
    relic learn --out runs/pc --resume
    relic learn --env dgc --method eoh --out runs/dgc-eoh     # a comparator (baselines.ahd)
    relic eval runs/pc --split test
    relic show runs/pc

Comparators are found through the ``relic_learner.methods`` entry-point group (the
``baselines`` distribution registers EoH-ind., ReEvo-ind., MCTS-AHD-ind., HiFo-ind. and
the MOTIF control there), so this package never imports them by name.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from tqdm.auto import tqdm

import relic_envs
from relic_envs.cli import benchmark_arg
from relic_envs.core.rollout import repair_text
from relic_envs.errors import InvalidConfig, MissingExtra, RelicError
from relic_envs.seeds import seed_source
from relic_learner import report
from relic_learner.batches import Batch
from relic_learner.evaluate import TeamEvaluator
from relic_learner.llm.factory import check_spec
from relic_learner.principles import PublicTree
from relic_learner.relic import ABLATIONS, COMMUNICATION, Relic, RelicConfig, operator_table
from relic_learner.runlog import RunDir
from relic_learner.stream import StreamLoop


def _progress(config: RelicConfig):
    bars: dict = {}

    def on_step(state) -> None:
        key = (state.b, state.phase)
        if state.phase == "propose" and key not in bars:
            for bar in bars.values():
                bar.close()
            bars.clear()
            bars[key] = tqdm(total=config.proposals * 3, desc=f"batch {state.b}/{config.batches}", leave=True)
        bar = bars.get(key)
        if bar is not None:
            bar.n = state.role_index * config.proposals + state.h
            bar.set_postfix_str(f"role {'ABC'[min(state.role_index, 2)]}, score {state.incumbent_score:.4g}")
            bar.refresh()
        if state.phase != "propose":
            for b in bars.values():
                b.n = b.total
                b.close()
            bars.clear()

    return on_step


METHOD_GROUP = "relic_learner.methods"


def methods() -> dict[str, object]:
    """Search methods registered by other packages: name -> entry point (loaded on use)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=METHOD_GROUP)}


def _method_class(name: str):
    registered = methods()
    name = name.replace("-", "_")  # the paper writes MCTS-AHD; the registry's names are identifiers
    if name not in registered:
        raise InvalidConfig(f"unknown --method {name!r}; available: relic, {', '.join(sorted(registered))}")
    return registered[name].load()


def _run_method(args: argparse.Namespace) -> int:
    """A comparator's run: the same run directory, checkpoint, resume and outputs as ``relic learn``."""
    out = Path(args.out)
    if args.resume:
        config = json.loads((out / "config.json").read_text())
        _check_llm_ready(config["llm"])
        search = _method_class(config["method"]).resume(out)
        if not args.quiet:
            print(_describe(search), file=sys.stderr)
    else:
        if args.ablation != "none" or args.communication != "full" or args.mitigation:
            raise InvalidConfig("--ablation, --communication and --mitigation are RELIC's; a comparator has none")
        if not args.env:
            raise InvalidConfig("--env is required (or --resume with --out RUN)")
        cls = _method_class(args.method)
        _check_llm_ready(args.llm)
        isolation = _isolation(args)

        def make() -> StreamLoop:
            return cls.create(out, env=args.env, interface=args.interface, llm=args.llm, base_url=args.base_url,
                              temperature=args.temperature, batches=args.batches, proposals=args.proposals,
                              replay=args.replay, seed=args.seed, workers=args.workers, isolation=isolation,
                              request_timeout_s=args.request_timeout, schedule=args.schedule)

        search = _start(out, args.overwrite, make, announce=not args.quiet)
    return _finish(search, out)


def _finish(search: StreamLoop, out: Path) -> int:
    """Run the search to its end and say what came of it; exit 1 when every LLM call failed."""
    search.learn()
    print(f"training: final mixed-batch score {search.state.incumbent_score:.6g} (a score: higher is better; "
          f"`relic eval {out}` gives the test objective); team in {out / 'team'}")
    lines, every_call_failed = report.llm_call_lines(search.llm.ledger.snapshot())
    print("\n".join(lines), file=sys.stderr if every_call_failed else sys.stdout)
    return 1 if every_call_failed else 0


def _describe(search: StreamLoop) -> str:
    name = getattr(search, "name", "RELIC")
    return f"{name} on {search.config.env} ({search.config.interface}) with {search.llm.describe()}"


def _check_llm_ready(spec: str) -> None:
    """What the backend of ``--llm`` needs, checked before a file is touched: the form, the package, the key."""
    check_spec(spec, name="--llm")
    if not spec.startswith("openai:"):
        return
    try:
        import openai  # noqa: F401  (only whether it is there)
    except ImportError:
        raise MissingExtra("openai", "learner") from None
    if not os.environ.get("OPENAI_API_KEY", "").strip():
        raise InvalidConfig(f"--llm {spec} reads its API key from the environment variable OPENAI_API_KEY, which is "
                            "not set (an endpoint that ignores keys takes any value: OPENAI_API_KEY=none)")


def _isolation(args: argparse.Namespace) -> str:
    """``"reduced"`` only when the user said so; every run says which layers hold."""
    from relic_learner import jail

    mode = "reduced" if getattr(args, "allow_reduced_isolation", False) else "full"
    if not getattr(args, "quiet", False):
        print(f"sandbox isolation ({mode}): {jail.describe(jail.probe())}", file=sys.stderr)
    return mode


def _start(out: Path, overwrite: bool, make: Callable[[], StreamLoop], *, announce: bool) -> StreamLoop:
    """A new run in ``out``, taken up to its first checkpoint; if anything fails before that,
    ``out`` is left as it was.

    A run already in ``out`` needs ``--overwrite``; it is moved aside (a sibling folder named
    in the message, if the process dies before the new run's first checkpoint) and removed
    only once the new run has checkpointed its first step, so a bad setting, a missing key or
    a sandbox that cannot start never costs the old run.
    """
    if (out / "checkpoint.pkl").exists() and not overwrite:
        raise InvalidConfig(f"{out} already holds a run; use --resume, --overwrite or another --out")
    aside = None
    if (out / "checkpoint.pkl").exists():
        aside = out.with_name(f"{out.name}.replaced-{os.getpid()}")
        out.rename(aside)
        if announce:
            print(f"the run in {out} waits in {aside} until the new run's first step is checkpointed", file=sys.stderr)
    existed = out.exists()
    before = set(out.iterdir()) if existed else set()
    search = None
    try:
        search = make()
        if announce:
            print(_describe(search), file=sys.stderr)
        search.step()
    except BaseException:
        if search is not None:
            search.close()
        _undo(out, existed, before)
        if aside is not None:
            aside.rename(out)
        raise
    if aside is not None:
        shutil.rmtree(aside)
    return search


def _undo(out: Path, existed: bool, before: set[Path]) -> None:
    """Remove what a failed start created in ``out`` (the folder itself if it was new)."""
    if not existed:
        shutil.rmtree(out, ignore_errors=True)
        return
    for path in set(out.iterdir()) - before:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def _run_method_of(out: str) -> str:
    path = Path(out, "config.json")
    return json.loads(path.read_text()).get("method", "relic") if path.exists() else "relic"


def _cmd_learn(args: argparse.Namespace) -> int:
    if args.resume and not Path(args.out, "checkpoint.pkl").exists():
        raise InvalidConfig(f"--resume: {args.out} holds no run to resume (no checkpoint.pkl)")
    method = _run_method_of(args.out) if args.resume else args.method.replace("-", "_")
    if method != "relic":
        return _run_method(args)
    out = Path(args.out)
    if args.resume:
        _check_llm_ready(json.loads((out / "config.json").read_text())["llm"])
        relic = Relic.resume(out)
        if not args.quiet:
            relic.on_step = _progress(relic.config)
            print(_describe(relic), file=sys.stderr)
        return _finish(relic, out)
    if not args.env:
        raise InvalidConfig("--env is required (or --resume with --out RUN)")
    if args.schedule != "paper":
        raise InvalidConfig("--schedule is a comparator's (e.g. --method reevo); RELIC has one schedule")
    _check_llm_ready(args.llm)
    config = RelicConfig(
        env=args.env, interface=args.interface, llm=args.llm, base_url=args.base_url,
        temperature=args.temperature, batches=args.batches, proposals=args.proposals, replay=args.replay,
        seed=args.seed, ablation=args.ablation, communication=args.communication, mitigation=args.mitigation,
        workers=args.workers, isolation=_isolation(args), request_timeout_s=args.request_timeout,
    )

    def make() -> StreamLoop:
        return Relic(config, out, on_step=None if args.quiet else _progress(config))

    return _finish(_start(out, args.overwrite, make, announce=not args.quiet), out)


def _load_team(run: Path) -> dict[str, str]:
    team_dir = run / "team"
    if not team_dir.is_dir():
        raise FileNotFoundError(f"{run} has no final team (team/A.py ...): is the run finished?")
    return {r: (team_dir / f"{r}.py").read_text() for r in "ABC"}


def _summary(results: Sequence) -> str:
    bad = [r for r in results if not r.valid]
    if bad:
        return f"invalid on {len(bad)} of {len(results)} instances ({bad[0].invalid.reason})"
    values = [r.objective for r in results]
    std = statistics.pstdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.4f} ± {std:.4f} (n={len(values)})"


def _cmd_eval(args: argparse.Namespace) -> int:
    run = Path(args.run)
    if not (run / "config.json").exists():
        raise FileNotFoundError(f"{run} holds no run (no config.json)")
    config = json.loads((run / "config.json").read_text())
    env, interface = config["env"], config["interface"]
    splits = relic_envs.splits(env)
    known = ["test", *splits.test]
    if args.split not in known:
        raise InvalidConfig(f"unknown --split {args.split!r} for {env}: use {' or '.join(dict.fromkeys(known))}")
    team = _load_team(run)
    seeds = {r: seed_source(env, r, interface) for r in "ABC"}
    direction = "lower is better" if relic_envs.get_benchmark(env).minimize else "higher is better"
    print(f"{config.get('method', 'relic')} run on {env} ({interface}), llm {config['llm']}: raw objective, {direction}")
    if config["llm"] == "offline":
        print("  (the offline backend mutates programs on the AST; it is not a language model)")
    with TeamEvaluator(env, interface=interface, workers=args.workers, isolation=_isolation(args)) as evaluator:
        for regime, instances in splits.test.items():
            if args.split not in ("test", regime):
                continue
            batch = Batch(tuple(instances), label=regime)
            learned, seed = evaluator.evaluate_many([team, seeds], batch)
            print(f"{env} {regime}: learned {_summary(learned.results)} | seeds {_summary(seed.results)}")
            for who, evaluation in (("learned", learned), ("seeds", seed)):
                if (repaired := repair_text(evaluation.results)) is not None:
                    print(f"  {who}: {repaired}")
    reference = _cpsat_reference(env)
    if reference and args.split == "test":
        print(reference)
    return 0


def _cpsat_reference(env: str) -> str | None:
    """The shipped CP-SAT reference on the same test instances, where one is shipped with the splits."""
    from relic_envs.core.references import load_fields, reference_path

    loaded = load_fields(reference_path(env, "cpsat_test.npz"))
    if loaded is None or "test.objective" in loaded[0] or "objective" not in loaded[0]:  # DCOP's one split only
        return None
    best, bound = loaded[0]["objective"], loaded[0]["bound"]
    return (f"{env} test: CP-SAT best {best.mean():.4f} (n={len(best)}), proven bound {bound.mean():.4f} "
            "(an offline reference: `relic-baselines table --env " + env + "` prints the classical rows)")


def _cmd_show(args: argparse.Namespace) -> int:
    if not Path(args.run, "checkpoint.pkl").exists():
        raise FileNotFoundError(f"{args.run} holds no run (no checkpoint.pkl)")
    run = RunDir(args.run)
    state = run.load_checkpoint()
    if not hasattr(state, "public"):  # a comparator's run
        return _show_method(args.run, run, state)
    config = json.loads(run.config_path.read_text())
    bench = relic_envs.get_benchmark(config["env"])
    print(f"run {args.run}: {config['env']} ({config['interface']}), batch {state.b}, phase {state.phase}; "
          f"objective {'lower' if bench.minimize else 'higher'} is better, scores higher is better")
    proposals = run.proposals()
    print("\n".join(report.best_team(state, proposals)))
    print("\n".join(report.principles_used(state, proposals)))
    print("learning curve (mixed-batch scores; the seed team on the same instances):")
    print("\n".join("  " + line for line in report.curve_lines(state.curve)))
    public: PublicTree = state.public
    print(f"public tree: {len(public.live())} live principles ({len(public.nodes) - 1} created)")
    for node in sorted(public.live(), key=lambda n: (-n.E, n.id))[:10]:
        print(f"  #{node.id} [{node.type}] by {node.contributor}, N={node.N}, E={node.E:.3g}: {node.text[:100]}")
    print(operator_table(proposals))
    print(f"LLM calls: {json.dumps(state.ledger.get('calls', {}))}")
    print("\n".join(report.boundary_lines(run.events(), state.ledger)))
    return 0


def _show_method(path: str, run: RunDir, state) -> int:
    config = json.loads(run.config_path.read_text())
    print(f"{config['method']} run {path}: batch {state.b}, phase {state.phase}, score {state.incumbent_score}")
    for role, candidate in state.incumbent.items():
        print(f"  role {role}: program {candidate.id} ({candidate.operator}, batch {candidate.batch}, "
              f"score {candidate.score:.6g}): {' '.join(candidate.thought.split())[:100]}")
    proposals = run.proposals()
    ops = sorted({p["operator"] for p in proposals})
    print("| Operator | Proposals | Valid | Improved the incumbent |")
    print("|---|---|---|---|")
    for op in ops:
        mine = [p for p in proposals if p["operator"] == op]
        print(f"| {op} | {len(mine)} | {sum(p['status'] == 'ok' for p in mine)} | "
              f"{sum(bool(p.get('incumbent')) for p in mine)} |")
    print(f"LLM calls: {json.dumps(state.ledger.get('calls', {}))}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="relic", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    learn = sub.add_parser("learn", help="run the RELIC search (or a comparator, --method) on a benchmark")
    learn.add_argument("--env", type=benchmark_arg, metavar="NAME", help="one of " + ", ".join(relic_envs.names()))
    learn.add_argument("--method", default="relic",
                       help="relic (default) or a registered comparator: " + ", ".join(sorted(methods())))
    learn.add_argument("--interface", default="paper", choices=["paper", "alt"])
    learn.add_argument("--llm", default="offline", help="offline | openai:MODEL (key from OPENAI_API_KEY)")
    learn.add_argument(
        "--base-url", default=None,
        help="an OpenAI-compatible endpoint (one that ignores keys still needs OPENAI_API_KEY set to any value)",
    )
    learn.add_argument("--temperature", type=float, default=1.0, help="sampling temperature in [0, 2] (default 1)")
    learn.add_argument("--request-timeout", type=float, default=60.0, metavar="SECONDS",
                       help="per-attempt HTTP timeout of the openai backend (default 60; a timed-out attempt is retried)")
    learn.add_argument("--batches", type=int, default=5)
    learn.add_argument("--proposals", type=int, default=10)
    learn.add_argument("--replay", type=int, default=2)
    learn.add_argument("--seed", type=int, default=0)
    learn.add_argument("--ablation", default="none", choices=ABLATIONS)
    learn.add_argument("--communication", default="full", choices=COMMUNICATION)
    learn.add_argument("--mitigation", action="store_true")
    learn.add_argument("--schedule", default="paper", choices=["paper", "reference"],
                       help="a comparator's call schedule: the paper's (default) or its authors' where they "
                            "differ (ReEvo: 102 auxiliary calls instead of the paper's 138)")
    learn.add_argument("--workers", type=int, default=None)
    learn.add_argument("--allow-reduced-isolation", action="store_true",
                       help="run programs even where the kernel refuses an isolation layer (docs/learner.md)")
    learn.add_argument("--out", required=True)
    learn.add_argument("--resume", action="store_true", help="continue the run in --out from its checkpoint")
    learn.add_argument("--overwrite", action="store_true", help="replace a run already in --out")
    learn.add_argument("--quiet", action="store_true")
    learn.set_defaults(func=_cmd_learn)
    ev = sub.add_parser("eval", help="re-evaluate a run's final team (no LLM)")
    ev.add_argument("run")
    ev.add_argument("--split", default="test",
                    help="test (every test size, default) or one size: test50 or test80 (MAPP, MAS), test100 or "
                         "test200 (CO); the DCOP benchmarks have one test split, test")
    ev.add_argument("--workers", type=int, default=None)
    ev.add_argument("--allow-reduced-isolation", action="store_true",
                    help="run programs even where the kernel refuses an isolation layer (docs/learner.md)")
    ev.add_argument("--quiet", action="store_true")
    ev.set_defaults(func=_cmd_eval)
    show = sub.add_parser("show", help="incumbents, public tree and operator statistics of a run")
    show.add_argument("run")
    show.set_defaults(func=_cmd_show)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    quiet = getattr(args, "quiet", False)  # --quiet: errors only (the offline backend's banner too)
    logging.basicConfig(level=logging.ERROR if quiet else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except (RelicError, FileNotFoundError) as exc:  # bad configuration or run directory: say it in one line
        print(f"relic {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
