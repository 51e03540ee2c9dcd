"""Command line: ``relic-envs list | eval | table | optimum | splits``.

Examples::

    relic-envs list
    relic-envs eval --env dgc --team seeds --team dsa-b --team mgm2:tuned
    relic-envs eval --env dgc --team my/A.py,my/B.py,my/C.py
    relic-envs eval --env mapp_ar --team seeds --team case-study   # the paper's printed RELIC programs
    relic-envs eval --env mapp_pc --interface alt   # seeds of the alternative interface, per test size
    relic-envs table --env dgc --plot docs/results   # every DCOP row beside CP-SAT's optimum
    relic-envs optimum --write dgc        # re-solve the test split with CP-SAT (extra: solvers)
    relic-envs splits --write dgc         # regenerate canonical splits + manifest
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence

import numpy as np

from relic_envs.core.program import ProgramPolicy
from relic_envs.core.registry import SPECS, get_benchmark, names
from relic_envs.core.rollout import RolloutResult, rollout
from relic_envs.core.splits import splits, update_manifest, write_splits
from relic_envs.errors import InvalidConfig, MissingExtra

BUILTIN_TEAMS = ("seeds", "case-study", "initial", "dsa-a", "dsa-b", "dsa-c", "mgm", "mgm2", "maxsum", "lsga-dsa")
DCOP_SOLVERS = BUILTIN_TEAMS[3:]  # classical DCOP algorithms (baselines.dcop.configs), with ":tuned", ":paper", ...


def split_instances(name: str, split: str) -> list:
    """Instances of a canonical split: ``test`` (all test sizes), a test regime such as
    ``test50``, or ``train1``..``train5``."""
    s = splits(name)
    if split == "test":
        return [i for regime in s.test for i in s.test[regime]]
    if split in s.test:
        return list(s.test[split])
    if split.startswith("train") and split[5:].isdigit() and 1 <= int(split[5:]) <= len(s.train):
        return list(s.train[int(split[5:]) - 1])
    allowed = ["test", *(list(s.test) if len(s.test) > 1 else []), *(f"train{b}" for b in range(1, len(s.train) + 1))]
    raise InvalidConfig(f"split must be one of {allowed}, got {split!r}")


def evaluate_team(
    name: str, team: str, split: str = "test", progress: bool = True, interface: str = "paper"
) -> list[RolloutResult]:
    """Evaluate a named team or ``A.py,B.py,C.py`` files on a canonical split.

    ``seeds`` is the seed programs, ``case-study`` the paper's printed learned programs
    (``relic_envs.case_studies``; only some benchmarks have them), ``dsa-b`` and
    ``lsga-dsa`` the human DCOP baselines, ``initial`` keeps every variable at its
    initial value (the cost of the start).
    """
    instances = split_instances(name, split)
    get_benchmark(name).check_interface(interface)
    if team in ("seeds", "case-study"):
        from relic_envs.case_studies import CASE_STUDIES
        from relic_envs.seeds import SEEDS

        policies = (SEEDS if team == "seeds" else CASE_STUDIES).team(name, interface)
        return rollout(name, policies, instances, progress=progress, interface=interface)
    if team == "initial":
        bench = get_benchmark(name)
        if bench.family != "dcop":
            raise InvalidConfig(f"team 'initial' keeps DCOP values; {name!r} is not a DCOP benchmark")
        return rollout(name, {r: (lambda obs: obs["cur"]) for r in bench.roles}, instances, progress=progress)
    if team.partition(":")[0] in DCOP_SOLVERS:
        from baselines.dcop.configs import make_solver
        from baselines.dcop.sweep import solve

        if get_benchmark(name).family != "dcop":
            raise InvalidConfig(f"team {team!r} is a DCOP solver; {name!r} is not a DCOP benchmark")
        return solve(name, make_solver(team, name), instances, progress=progress)
    paths = team.split(",")
    bench = get_benchmark(name)
    if len(paths) != len(bench.roles):
        raise InvalidConfig(
            f"team must be one of {BUILTIN_TEAMS} or {len(bench.roles)} comma-separated .py files (one per role "
            f"{', '.join(bench.roles)}), got {team!r}"
        )
    signatures = bench.signatures(interface)
    policies = {r: ProgramPolicy.from_file(p, signatures[r]) for r, p in zip(bench.roles, paths)}
    return rollout(name, policies, instances, progress=progress, interface=interface)


def summarize(results: Sequence[RolloutResult]) -> str:
    """``mean ± std`` of the raw objective over valid rollouts, plus invalid count."""
    values = [r.objective for r in results if r.valid]
    invalid = len(results) - len(values)
    if not values:
        return f"all {invalid} rollouts invalid"
    std = statistics.pstdev(values) if len(values) > 1 else 0.0
    text = f"{statistics.fmean(values):.2f} ± {std:.2f}"
    return text + (f" ({invalid} invalid)" if invalid else "")


def _cmd_list(args: argparse.Namespace) -> int:
    print(f"{'name':<12} {'status':<8} {'appendix':<8} {'env id':<20} title")
    for s in SPECS:
        status = "built" if s.implemented else "planned"
        print(f"{s.name:<12} {status:<8} {s.paper_section:<8} {s.env_id:<20} {s.title}")
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    teams = args.team or ["seeds"]
    # The test split of a benchmark with several test sizes (MAPP: 50 and 80) is reported per size.
    test = splits(args.env).test
    parts = list(test) if args.split == "test" and len(test) > 1 else [args.split]
    itf = "" if args.interface == "paper" else f", {args.interface} interface"
    if "case-study" in teams:  # only some benchmarks have one: say so before printing anything
        from relic_envs.case_studies import case_study_team

        case_study_team(args.env, args.interface)
    for part in parts:
        print(f"{args.env} ({part} split{itf}): raw objective, mean ± std over instances")
        for team in teams:
            results = evaluate_team(args.env, team, part, progress=not args.quiet, interface=args.interface)
            print(f"  {team:<12} {summarize(results)}")
            for k, r in enumerate(results):
                if not r.valid:
                    print(f"    instance {k}: invalid, role {r.invalid.role}: {r.invalid.reason} ({r.invalid.detail})")
    return 0


def _cmd_table(args: argparse.Namespace) -> int:
    from baselines.dcop import table

    envs = args.env or [n for n in names() if get_benchmark(n).family == "dcop"]
    for name in envs:
        rows = table.build_rows(name, progress=not args.quiet)
        optimum = table.optimum_rows(name)
        print("\n" + table.format_table(name, rows, optimum, table.paper_rows(name)))
        if args.plot:
            from pathlib import Path

            path = table.plot(name, rows, optimum, Path(args.plot) / f"dcop_{name}_sweeps.png")
            print(f"  plot: {path}")
    return 0


def _cmd_optimum(args: argparse.Namespace) -> int:
    from baselines.dcop import cpsat

    for name in args.write or []:
        cache = cpsat.write_cache(
            name, time_limit=args.time_limit, workers=args.workers, hint=args.hint, progress=not args.quiet
        )
        print(f"wrote {cpsat.cache_path(name)}: {dict(zip(*np.unique(cache.status, return_counts=True)))}")
    for name in args.write or [n for n in cpsat.DCOPS]:
        cache = cpsat.load_cache(name)
        if cache is None:
            print(f"{name}: no cached CP-SAT results; {cpsat.INSTALL_HINT} {name}")
            continue
        counts = {s: int((cache.status == s).sum()) for s in ("optimal", "feasible")}
        print(
            f"{name}: best {cache.objective.mean():.2f}, bound {cache.bound.mean():.2f} (means over 50 test instances); "
            f"{counts['optimal']} optimal, {counts['feasible']} feasible; {cache.meta['time_limit_s']:g}s/instance, "
            f"{cache.meta['workers']} workers, OR-Tools {cache.meta['ortools']}, hint {cache.meta.get('hint')}"
        )
    return 0


def _cmd_splits(args: argparse.Namespace) -> int:
    targets = args.write or []
    for name in targets:
        entries = write_splits(name)
        update_manifest(entries)
        for key, entry in entries.items():
            print(f"wrote {key}: {entry['count']} instances, sha256 {entry['sha256'][:16]}…")
    if not targets:
        for name in names():
            s = splits(name)
            print(f"{name}: train {[len(b) for b in s.train]}, test {{{', '.join(f'{k}: {len(v)}' for k, v in s.test.items())}}}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="relic-envs", description="The RELIC benchmark suite.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the 14 benchmarks and their status").set_defaults(func=_cmd_list)
    ev = sub.add_parser("eval", help="evaluate teams on a split and print mean ± std of the raw objective")
    ev.add_argument("--env", required=True, choices=names())
    ev.add_argument(
        "--team", action="append",
        help=f"{', '.join(BUILTIN_TEAMS)} (DCOP algorithms also as NAME:tuned, NAME:paper, NAME:p=0.3) or A.py,B.py,C.py (repeatable)",
    )
    ev.add_argument("--split", default="test", help="test (default; per size for MAPP), test50/test80 (MAPP) or train1..train5")
    ev.add_argument("--interface", default="paper", choices=("paper", "alt"), help="role interface (alt: MAPP/MAS)")
    ev.add_argument("--quiet", action="store_true", help="no progress bar")
    ev.set_defaults(func=_cmd_eval)
    tb = sub.add_parser("table", help="DCOP tables: classical algorithms, paper rows and the CP-SAT optimum reference")
    tb.add_argument("--env", action="append", choices=[n for n in names() if get_benchmark(n).family == "dcop"])
    tb.add_argument("--plot", metavar="DIR", help="also save a cost-per-sweep plot per benchmark in DIR (extra: docs)")
    tb.add_argument("--quiet", action="store_true")
    tb.set_defaults(func=_cmd_table)
    op = sub.add_parser("optimum", help="show (default) or re-solve (--write) the cached CP-SAT optimum references")
    op.add_argument("--write", nargs="+", choices=["dgc", "dimes", "sensor_dcsp", "shds"])
    op.add_argument("--time-limit", type=float, default=10.0, help="seconds per instance (default 10)")
    op.add_argument("--workers", type=int, default=2, help="CP-SAT threads (default 2)")
    op.add_argument("--hint", help="warm-start CP-SAT from this classical configuration's answer, e.g. lsga-dsa")
    op.add_argument("--quiet", action="store_true")
    op.set_defaults(func=_cmd_optimum)
    sp = sub.add_parser("splits", help="check (default) or regenerate canonical splits")
    sp.add_argument("--write", nargs="+", choices=names(), help="regenerate these benchmarks' split files")
    sp.set_defaults(func=_cmd_splits)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (InvalidConfig, FileNotFoundError, MissingExtra) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
