"""Command line: ``relic-envs list | eval | splits``.

Examples::

    relic-envs list
    relic-envs eval --env dgc --team seeds --team initial
    relic-envs eval --env dgc --team my/A.py,my/B.py,my/C.py
    relic-envs eval --env mapp_ar --team seeds --team case-study   # the paper's printed RELIC programs
    relic-envs eval --env mapp_pc --interface alt   # seeds of the alternative interface, per test size
    relic-envs splits --write dgc --out /tmp/splits   # regenerate a split, compared with the shipped one

The comparators (classical DCOP algorithms, result tables, CP-SAT optima) live one
layer up, in ``relic-baselines`` (:mod:`baselines.cli`): this package never imports
``baselines`` or ``relic_learner``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from relic_envs.core.program import ProgramPolicy
from relic_envs.core.registry import SPECS, get_benchmark, names
from relic_envs.core.rollout import RolloutResult, repair_text, rollout
from relic_envs.core.splits import DATA_DIR, read_manifest, splits, update_manifest, write_splits
from relic_envs.errors import InvalidConfig, MissingExtra, UnknownBenchmark

BUILTIN_TEAMS = ("seeds", "case-study", "initial")
BASELINES_HINT = "classical algorithms (dsa-b, mgm, lsga-dsa, ...) are teams of the baselines layer: relic-baselines eval"


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
    raise InvalidConfig(f"unknown --split {split!r} for {name}: use {' or '.join(allowed)}")


def benchmark_arg(name: str) -> str:
    """An argparse ``type`` for ``--env``: a registered name, else one line naming the closest
    (``DGC`` and ``MAPP-PC``, the paper's spellings, get their registered names)."""
    if name in names():
        return name
    raise argparse.ArgumentTypeError(str(UnknownBenchmark(name, names())))


def evaluate_team(
    name: str, team: str, split: str = "test", progress: bool = True, interface: str = "paper"
) -> list[RolloutResult]:
    """Evaluate a named team or ``A.py,B.py,C.py`` files on a canonical split.

    ``seeds`` is the seed programs, ``case-study`` the paper's printed learned programs
    (``relic_envs.case_studies``; only some benchmarks have them), ``initial`` keeps
    every variable at its initial value (the cost of the start). The classical
    algorithms are teams of ``relic-baselines eval``.
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
    paths = team.split(",")
    bench = get_benchmark(name)
    if len(paths) != len(bench.roles):
        raise InvalidConfig(
            f"team must be one of {BUILTIN_TEAMS} or {len(bench.roles)} comma-separated .py files (one per role "
            f"{', '.join(bench.roles)}), got {team!r}; {BASELINES_HINT}"
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


Evaluate = Callable[..., list[RolloutResult]]


def _cmd_eval(args: argparse.Namespace) -> int:
    return run_eval(args, evaluate_team)


def run_eval(args: argparse.Namespace, evaluate: Evaluate) -> int:
    """The ``eval`` command with a team resolver (``baselines.cli`` adds its algorithms)."""
    teams = args.team or ["seeds"]
    # The test split of a benchmark with several test sizes (MAPP: 50 and 80) is reported per size.
    test = splits(args.env).test
    parts = list(test) if args.split == "test" and len(test) > 1 else [args.split]
    itf = "" if args.interface == "paper" else f", {args.interface} interface"
    if "case-study" in teams:  # only some benchmarks have one: say so before printing anything
        from relic_envs.case_studies import case_study_team

        case_study_team(args.env, args.interface)
    for part in parts:
        split_instances(args.env, part)  # an unknown split is an error before anything is printed
    for part in parts:
        print(f"{args.env} ({part} split{itf}): raw objective, mean ± std over instances")
        for team in teams:
            results = evaluate(args.env, team, part, progress=not args.quiet, interface=args.interface)
            print(f"  {team:<12} {summarize(results)}")
            if (repaired := repair_text(results)) is not None:
                print(f"  {'':<12} {repaired}")
            for k, r in enumerate(results):
                if not r.valid:
                    print(f"    instance {k}: invalid, role {r.invalid.role}: {r.invalid.reason} ({r.invalid.detail})")
    return 0


def _in_checkout() -> bool:
    """Whether the package runs from a source checkout (where the canonical files are edited)."""
    return (Path(__file__).resolve().parents[1] / ".git").exists()


def _cmd_splits(args: argparse.Namespace) -> int:
    targets = args.write or []
    if targets and args.out is None and not _in_checkout():
        raise InvalidConfig("--write would rewrite the split files inside the installed package; give --out DIR "
                            "to regenerate them there (each file is then compared with the shipped one)")
    folder = DATA_DIR if args.out is None else Path(args.out)
    shipped = read_manifest()["files"]
    for name in targets:
        entries = write_splits(name, folder)
        update_manifest(entries, folder / "manifest.json")
        for key, entry in entries.items():
            same = "same as shipped" if shipped.get(key, {}).get("sha256") == entry["sha256"] else "DIFFERS from shipped"
            print(f"wrote {folder / key}: {entry['count']} instances, sha256 {entry['sha256'][:16]}… ({same})")
    if not targets:
        for name in names():
            s = splits(name)
            print(f"{name}: train {[len(b) for b in s.train]}, test {{{', '.join(f'{k}: {len(v)}' for k, v in s.test.items())}}}")
    return 0


def add_eval_parser(sub: argparse._SubParsersAction, team_help: str) -> argparse.ArgumentParser:
    """The ``eval`` sub-command's arguments (shared with ``relic-baselines eval``)."""
    ev = sub.add_parser("eval", help="evaluate teams on a split and print mean ± std of the raw objective")
    ev.add_argument("--env", required=True, type=benchmark_arg, metavar="NAME", help="one of " + ", ".join(names()))
    ev.add_argument("--team", action="append", help=team_help)
    ev.add_argument("--split", default="test", help="test (default; per size for MAPP), test50/test80 (MAPP) or train1..train5")
    ev.add_argument("--interface", default="paper", choices=("paper", "alt"), help="role interface (alt: MAPP/MAS)")
    ev.add_argument("--quiet", action="store_true", help="no progress bar")
    return ev


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="relic-envs", description="The RELIC benchmark suite.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the 14 benchmarks and their status").set_defaults(func=_cmd_list)
    add_eval_parser(sub, f"{', '.join(BUILTIN_TEAMS)} or A.py,B.py,C.py (repeatable)").set_defaults(func=_cmd_eval)
    sp = sub.add_parser("splits", help="check (default) or regenerate canonical splits")
    sp.add_argument("--write", nargs="+", choices=names(), help="regenerate these benchmarks' split files")
    sp.add_argument("--out", default=None, metavar="DIR",
                    help="with --write: the folder to write to (required outside a source checkout; the shipped "
                         "files are never touched then)")
    sp.set_defaults(func=_cmd_splits)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_parser(build_parser(), argv)


def run_parser(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    """Parse, run, and turn the suite's input errors into one line on stderr and exit 2."""
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (InvalidConfig, FileNotFoundError, MissingExtra) as exc:
        print(f"{parser.prog} {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
