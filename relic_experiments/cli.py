"""``relic-grid``: run an experiment grid and print its tables.

    relic-grid run grids/dcop-main.toml --out runs/dcop-main [--workers 2]
    relic-grid run grids/dcop-main.toml --out runs/dcop-main --backend ray --address auto
    relic-grid run grids/dcop-main.toml --out runs/dcop-main --dry-run
    relic-grid table runs/dcop-main [--format md|csv|tex]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from relic_envs.errors import InvalidConfig, RelicError
from relic_experiments.cell import Cell, load_result
from relic_experiments.runner import BACKENDS, run_grid
from relic_experiments.spec import GridSpec, load_spec, parse_spec
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="relic-grid", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run (or resume) every cell of a grid")
    run.add_argument("spec")
    run.add_argument("--out", required=True)
    run.add_argument("--backend", choices=BACKENDS, default="local")
    run.add_argument("--workers", type=int, default=1, help="local backend: cells run at once")
    run.add_argument("--address", default=None, help="ray backend: cluster address (default: start a local one)")
    run.add_argument("--dry-run", action="store_true", help="print the cells and what they cost; run nothing")
    run.add_argument("--quiet", action="store_true")
    table = sub.add_parser("table", help="the paper's table from a grid's finished cells")
    table.add_argument("out")
    table.add_argument("--format", choices=sorted(FORMATS), default="md")
    table.add_argument("--plot", default=None, help="also save a bar chart per column to this PNG file")
    args = parser.parse_args(argv)
    try:
        if args.command == "run":
            spec = load_spec(args.spec)
            if args.dry_run:
                return _dry_run(spec, args.out)
            report = run_grid(spec, args.out, backend=args.backend, workers=args.workers, address=args.address,
                              progress=not args.quiet)
            print(report.summary())
            return 1 if report.failures else 0
        results, spec = _results(args.out)
        total = len(spec.cells())
        if len(results) < total:
            print(f"note: {total - len(results)} of {total} cells are not finished; the table shows the others",
                  file=sys.stderr)
        sys.stdout.write(FORMATS[args.format](results))
        if args.plot:
            bar_chart(results, args.plot)
            print(f"bar chart: {args.plot}", file=sys.stderr)
        return 0
    except RelicError as exc:
        print(f"relic-grid: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
