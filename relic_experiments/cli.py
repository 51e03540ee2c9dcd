"""``relic-grid``: run an experiment grid and print its tables.

    relic-grid specs                                             # the grid specs shipped with the package
    relic-grid run dcop-offline-small --out runs/grid [--workers 2]
    relic-grid run paper-main --out runs/paper-main --backend ray --address auto
    relic-grid run my-grid.toml --out runs/mine --dry-run         # a spec of your own: a TOML file's path
    relic-grid table runs/dcop-main [--format md|csv|tex] [--classical] [--learned DIR] [--solver] [--paper]
    relic-grid usage runs/dcop-main [--usd-per-mtok-in 0.15 --usd-per-mtok-out 0.60]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from relic_envs.errors import InvalidConfig, RelicError
from relic_experiments.cell import Cell, load_result
from relic_experiments.runner import BACKENDS, run_grid
from relic_experiments.spec import SHIPPED, GridSpec, load_spec, parse_spec, shipped_specs
from relic_experiments.tables import FORMATS, bar_chart


def llm_calls(cell: Cell) -> tuple[int, str]:
    """``(candidate calls, auxiliary calls as text)`` of one cell, from each method's accounting (Appendix D)."""
    roles, b, h = 3, cell.batches, cell.proposals
    candidates = roles * b * h
    if cell.method == "relic":
        if cell.communication == "nopeer":
            return candidates, "0"
        return candidates, f"{2 * roles * b} to {3 * roles * b}"  # reveal + cross-distill, plus D+ <= R B
    aux = {"eoh": 0, "mcts_ahd": 0, "motif": 0, "hifo": roles * b,
           "reevo": roles * max(0, b * h - 4)}[cell.method]  # 4 warm-up proposals per role (baselines.ahd.reevo)
    return candidates, str(aux)


def _dry_run(spec: GridSpec, out: str) -> int:
    measured: dict[tuple[str, str], list[float]] = defaultdict(list)
    for cell in spec.cells():
        if (r := load_result(cell, out)) is not None:
            measured[(cell.method, cell.env)].append(r.seconds)
    print(f"{'cell':<40} {'candidate':>9} {'auxiliary':>10} {'seconds (measured)':>19} status")
    for cell in spec.cells():
        cand, aux = llm_calls(cell)
        times = measured.get((cell.method, cell.env))
        seconds = f"{sum(times) / len(times):.0f}" if times else "not measured"
        status = "done" if load_result(cell, out) is not None else "to run"
        print(f"{cell.key:<40} {cand:>9} {aux:>10} {seconds:>19} {status}")
    print(f"{len(spec.cells())} cells; LLM: {spec.llm}")
    return 0


def _results(out: str):
    path = Path(out) / "grid.json"
    if not path.exists():
        raise InvalidConfig(f"{out} holds no grid (no grid.json): run `relic-grid run SPEC --out {out}` first")
    spec = parse_spec({k: (list(v) if isinstance(v, list) else v) for k, v in json.loads(path.read_text()).items()})
    return [r for c in spec.cells() if (r := load_result(c, out)) is not None], spec


def _references(results, out: str, *, classical: bool, solver: bool, paper: bool, learned: str | None = None) -> list:
    from relic_experiments import references

    envs = list(dict.fromkeys((r.cell.env, r.cell.interface) for r in results))
    refs = []
    if classical:
        refs += references.classical(envs, out)
    if learned is not None:
        refs += references.learned(envs, out, learned)
    if solver:
        refs += references.solver(envs)
    if paper:
        refs += references.paper(envs)
    return refs


def usage_table(results, usd_in: float | None, usd_out: float | None) -> str:
    """Per cell: logical calls, HTTP requests, cache hits, tokens (from the API's usage fields), cost, seconds."""
    priced = usd_in is not None and usd_out is not None
    head = f"{'cell':<40} {'calls':>6} {'requests':>8} {'cached':>6} {'prompt tok':>11} {'compl. tok':>11}"
    head += f" {'USD':>9}" if priced else ""
    lines = [head + f" {'seconds':>8}"]
    totals = np.zeros(6)
    for r in results:
        calls = sum(r.calls.values())
        usd = (r.prompt_tokens * usd_in + r.completion_tokens * usd_out) / 1e6 if priced else 0.0
        row = np.array([calls, r.attempts, r.cache_hits, r.prompt_tokens, r.completion_tokens, usd])
        totals += row
        line = f"{r.cell.key:<40} {calls:>6} {r.attempts:>8} {r.cache_hits:>6} {r.prompt_tokens:>11} {r.completion_tokens:>11}"
        line += f" {usd:>9.4f}" if priced else ""
        lines.append(line + f" {r.seconds:>8.1f}")
    line = f"{'total (' + str(len(results)) + ' cells)':<40} " + " ".join(
        f"{int(v):>{w}}" for v, w in zip(totals[:5], (6, 8, 6, 11, 11)))
    line += f" {totals[5]:>9.4f}" if priced else ""
    lines.append(line + f" {sum(r.seconds for r in results):>8.1f}")
    if not priced:
        lines.append("(give --usd-per-mtok-in and --usd-per-mtok-out for the cost column)")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="relic-grid", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run (or resume) every cell of a grid")
    run.add_argument("spec", help="a TOML file's path or a shipped spec's name (relic-grid specs lists them)")
    run.add_argument("--out", required=True)
    run.add_argument("--backend", choices=BACKENDS, default="local")
    run.add_argument("--workers", type=int, default=1, help="local backend: cells run at once")
    run.add_argument("--address", default=None, help="ray backend: cluster address (default: start a local one)")
    run.add_argument("--dry-run", action="store_true", help="print the cells and what they cost; run nothing")
    run.add_argument("--retry-failed", action="store_true",
                     help="ask again the LLM calls whose failure the response cache recorded (default: replay "
                          "them, so a rerun repeats the first run's results at no cost)")
    run.add_argument("--quiet", action="store_true")
    sub.add_parser("specs", help="the grid specs shipped with the package, with their files")
    table = sub.add_parser("table", help="the paper's table from a grid's finished cells")
    table.add_argument("out")
    table.add_argument("--format", choices=sorted(FORMATS), default="md")
    table.add_argument("--plot", default=None, help="also save a bar chart per column to this PNG file")
    table.add_argument("--classical", action="store_true",
                       help="add each family's classical rows, played on the same test instances (cached in OUT)")
    table.add_argument("--learned", metavar="DIR", default=None,
                       help="add trained IPPO/MAPPO rows from the checkpoints DIR/<env>_<algo> (python -m baselines.rl "
                            "train; the repository's: docs/images/rl/checkpoints), played on the same test instances")
    table.add_argument("--solver", action="store_true", help="add the cached CP-SAT / OR-Tools references")
    table.add_argument("--paper", action="store_true", help="add the paper's own numbers, labelled as theirs")
    usage = sub.add_parser("usage", help="LLM calls, requests, tokens, cost and wall time per finished cell")
    usage.add_argument("out")
    usage.add_argument("--usd-per-mtok-in", type=float, default=None, help="price of a million prompt tokens")
    usage.add_argument("--usd-per-mtok-out", type=float, default=None, help="price of a million completion tokens")
    args = parser.parse_args(argv)
    try:
        if args.command == "specs":
            for name in shipped_specs():
                print(f"{name:<24} {SHIPPED / (name + '.toml')}")
            return 0
        if args.command == "run":
            spec = load_spec(args.spec)
            if args.dry_run:
                return _dry_run(spec, args.out)
            report = run_grid(spec, args.out, backend=args.backend, workers=args.workers, address=args.address,
                              progress=not args.quiet, retry_failed=args.retry_failed)
            print(report.summary())
            return 1 if report.failures else 0
        results, spec = _results(args.out)
        total = len(spec.cells())
        if len(results) < total:
            print(f"note: {total - len(results)} of {total} cells are not finished; the table shows the others",
                  file=sys.stderr)
        if args.command == "usage":
            sys.stdout.write(usage_table(results, args.usd_per_mtok_in, args.usd_per_mtok_out))
            return 0
        refs = _references(results, args.out, classical=args.classical, solver=args.solver, paper=args.paper,
                           learned=args.learned)
        sys.stdout.write(FORMATS[args.format](results, refs))
        if args.plot:
            bar_chart(results, args.plot, refs)
            print(f"bar chart: {args.plot}", file=sys.stderr)
        return 0
    except RelicError as exc:
        print(f"relic-grid: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
