"""Command line of the comparators: ``relic-baselines eval | table | optimum``.

Examples::

    relic-baselines eval --env dgc --team seeds --team dsa-b --team mgm2:tuned
    relic-baselines eval --env shds --team lsga-dsa:paper
    relic-baselines table --env dgc --plot docs/results   # every DCOP row beside CP-SAT's optimum
    relic-baselines optimum --write dgc                   # re-solve the test split with CP-SAT (extra: solvers)
    relic-baselines eval --env hmtsp --team seeds --team nn+2opt+relocate
    relic-baselines table --env hmtsp --env fstsp         # routing: classical rows beside the OR-Tools references
    relic-baselines optimum --write hmtsp --time-limit 60 # re-solve with OR-Tools' routing solver (extra: solvers)
    relic-baselines eval --env fjagv --team spt-atc-nearest --team spt-atc-nearest+ls
    relic-baselines eval --env mrcps --team par-mslk-speed --team ser-lft-speed
    relic-baselines table --env fjagv --env mrcps         # scheduling: classical rows beside CP-SAT's best and bound
    relic-baselines optimum --write fjagv --time-limit 15 --workers 1   # re-solve with CP-SAT (extra: solvers)
    relic-baselines eval --env mas_jd --team atc:tuned --team ls:100  # MAS rule and local search (100 decodes)
    relic-baselines eval --env mapp_pc --team greedy --team ils       # MAPP rows (mapp_ds: --team online)
    relic-baselines table --env mapp_pc --env mapp_ar --env mapp_ds    # MAPP: classical rows beside the references

``eval`` takes every team ``relic-envs eval`` takes (seeds, case-study, initial, program
files) plus the classical DCOP algorithms; it lives here because ``relic_envs`` never
imports this package.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from relic_envs.cli import BUILTIN_TEAMS, add_eval_parser, evaluate_team, run_eval, run_parser, split_instances
from relic_envs.core.registry import get_benchmark, names
from relic_envs.core.rollout import RolloutResult
from relic_envs.errors import InvalidConfig

DCOP_SOLVERS = ("dsa-a", "dsa-b", "dsa-c", "mgm", "mgm2", "maxsum", "lsga-dsa")
DCOPS = ("dgc", "dimes", "sensor_dcsp", "shds")
ROUTING = ("hmtsp", "fstsp")
SCHED = ("fjagv", "mrcps")
MAPP = ("mapp_pc", "mapp_ar", "mapp_ds")


def routing_methods(name: str) -> tuple[str, ...]:
    """The classical rows of a routing benchmark that play as teams (``baselines.co``)."""
    if name == "hmtsp":
        from baselines.co.routing_hmtsp import METHODS
    elif name == "fstsp":
        from baselines.co.routing_fstsp import METHODS
    else:
        return ()
    return METHODS


def sched_module(name: str):
    """The classical rows of a scheduling benchmark (``baselines.co.sched_fjagv`` / ``sched_mrcps``)."""
    if name == "fjagv":
        from baselines.co import sched_fjagv as module
    else:
        from baselines.co import sched_mrcps as module
    return module


def is_sched_method(name: str, team: str) -> bool:
    if name not in SCHED:
        return False
    module = sched_module(name)
    base, _, ls = team.partition("+")
    return base in module.METHODS and ls in ("", "ls")


def evaluate_sched(name: str, team: str, split: str, progress: bool, interface: str) -> list[RolloutResult]:
    """A FJAGV / MRCPS row: played in the env when it is a team; MRCPS serial rows (which the
    non-delay episode cannot express) scored by ``simulator.cost`` (steps 0, info says so)."""
    module = sched_module(name)
    instances = split_instances(name, split)
    if name == "fjagv" or module.is_team(team):
        from relic_envs.core.rollout import rollout

        return rollout(name, module.team(team), instances, interface=interface, progress=progress)
    costs = [module.run(inst, team)[0] for inst in instances]
    return [RolloutResult(c, -c, 0, info={"scored_by": "simulator.cost (serial SGS, not an episode)"}) for c in costs]


def evaluate_mas(name: str, team: str, split: str, progress: bool, interface: str) -> list[RolloutResult]:
    """A MAS row: a dispatch rule of ``baselines.mas.rules`` played as a team, or ``ls`` /
    ``ls:<budget>``, the local search (``baselines.mas.local_search``) scored by the simulator."""
    from relic_envs.core.rollout import rollout

    instances = split_instances(name, split)
    if team.partition(":")[0] != "ls":
        from baselines.mas.rules import rule_team

        return rollout(name, rule_team(name, team), instances, interface=interface, progress=progress)
    from baselines.mas import local_search

    budget = int(team.partition(":")[2] or local_search.BUDGET)
    results = local_search.solve_batch(name, instances, budget=budget)
    return [RolloutResult(r.objective, get_benchmark(name).score(r.objective), 0,
                          info={"scored_by": "DispatchEpisode replay of the best priority lists", "start_rule": r.start_rule})
            for r in results]


def is_mas_method(name: str, team: str) -> bool:
    if name not in ("mas_jd", "mas_st", "mas_fs"):
        return False
    from baselines.mas.rules import RULES

    return team.partition(":")[0] == "ls" or name in RULES.get(team, {})


def evaluate(name: str, team: str, split: str = "test", progress: bool = True, interface: str = "paper") -> list[RolloutResult]:
    """A classical DCOP configuration (``dsa-b``, ``mgm2:tuned``, ``lsga-dsa:paper``, ...)
    on a canonical split, or any team ``relic-envs eval`` knows."""
    if is_sched_method(name, team):  # a classical scheduling row
        return evaluate_sched(name, team, split, progress, interface)
    if is_mas_method(name, team):  # a MAS dispatch rule or the MAS local search
        return evaluate_mas(name, team, split, progress, interface)
    if name in ROUTING and team in routing_methods(name):  # a classical routing row played as a team
        from relic_envs.core.rollout import rollout

        if name == "hmtsp":
            from baselines.co.routing_hmtsp import PlanTeam
        else:
            from baselines.co.routing_fstsp import PlanTeam
        return rollout(name, PlanTeam(team), split_instances(name, split), interface=interface, progress=progress)
    if name in MAPP and team in ("greedy", "ils", "online"):  # a classical MAPP row played as a team
        from baselines.mapp.table import team as mapp_team
        from relic_envs.core.rollout import rollout

        # the same team under either interface: it reads the paper-interface observations
        return rollout(name, mapp_team(name, team), split_instances(name, split), interface="paper", progress=progress)
    if team.partition(":")[0] in ("ippo", "mappo"):  # a trained IPPO/MAPPO checkpoint (baselines.rl)
        from baselines.rl.policy import load as load_rl
        from relic_envs.core.rollout import rollout

        rl_team = load_rl(team.partition(":")[2])
        if rl_team.env != name:
            raise InvalidConfig(f"team {team!r} was trained on {rl_team.env!r}, not {name!r}")
        return rollout(name, rl_team, split_instances(name, split), interface=rl_team.interface, progress=progress)
    if team.partition(":")[0] not in DCOP_SOLVERS:
        return evaluate_team(name, team, split, progress=progress, interface=interface)
    from baselines.dcop.configs import make_solver
    from baselines.dcop.sweep import solve

    if get_benchmark(name).family != "dcop":
        raise InvalidConfig(f"team {team!r} is a DCOP solver; {name!r} is not a DCOP benchmark")
    return solve(name, make_solver(team, name), split_instances(name, split), progress=progress)


def _cmd_eval(args: argparse.Namespace) -> int:
    return run_eval(args, evaluate)


def _cmd_table(args: argparse.Namespace) -> int:
    from baselines.dcop import table

    routing = [n for n in args.env or list(DCOPS) + [n for n in ROUTING if n in names()] if n in ROUTING]
    if routing:
        from baselines.co.routing_table import tables

        print("\n" + tables(routing))
    for name in [n for n in args.env or [] if n in MAPP]:  # MAPP: classical rows beside the cached references
        from baselines.mapp.table import build as mapp_build

        print("\n" + mapp_build(name))
    sched = [n for n in args.env or [] if n in SCHED]
    if sched:
        from baselines.co.sched_table import tables as sched_tables

        print("\n" + sched_tables(sched))
    for name in [n for n in args.env or list(DCOPS) if n in DCOPS]:
        rows = table.build_rows(name, progress=not args.quiet)
        optimum = table.optimum_rows(name)
        print("\n" + table.format_table(name, rows, optimum, table.paper_rows(name)))
        if args.plot:
            path = table.plot(name, rows, optimum, Path(args.plot) / f"dcop_{name}_sweeps.png")
            print(f"  plot: {path}")
    return 0


def _cmd_optimum(args: argparse.Namespace) -> int:
    from baselines.dcop import cpsat

    routing = [n for n in args.write or [] if n in ROUTING] if args.write else [n for n in ROUTING if n in names()]
    if routing:
        from baselines.co import routing as co_routing

        for name in routing:
            if args.write:
                co_routing.write_cache(
                    name, time_limit=args.time_limit, hint=args.hint if name == "hmtsp" else None, progress=not args.quiet
                )
            for hinted in (False, True):
                cache = co_routing.load_cache(name, hinted=hinted)
                if cache is not None:
                    print(co_routing.summary(name, cache))
                elif not hinted:
                    print(f"{name}: no cached OR-Tools reference; {co_routing.INSTALL_HINT} {name}")
    from baselines.co import sched_cpsat

    for name in [n for n in args.write or [] if n in SCHED]:
        sched_cpsat.write_cache(name, time_limit=args.time_limit, workers=args.workers, progress=not args.quiet,
                                **({"hint": args.hint} if args.hint else {}))
        print(f"wrote {sched_cpsat.cache_path(name)}")
    for name in [n for n in args.write or SCHED if n in SCHED]:
        cache = sched_cpsat.load_cache(name)
        print(sched_cpsat.summary(name, cache) if cache else f"{name}: no cached CP-SAT results; {sched_cpsat.INSTALL_HINT} {name}")
    from baselines.mas import cpsat as mas_cpsat

    for name in [n for n in args.write or [] if n in mas_cpsat.MAS]:
        mas_cpsat.write_cache(name, time_limit=args.time_limit, workers=args.workers, hint=args.hint, progress=not args.quiet)
        print(f"wrote {mas_cpsat.cache_path(name)}")
    for name in [n for n in args.write or mas_cpsat.MAS if n in mas_cpsat.MAS]:
        cache = mas_cpsat.load_cache(name)
        print(mas_cpsat.summary(name, cache) if cache else f"{name}: no cached CP-SAT results; {mas_cpsat.INSTALL_HINT} {name}")
    for name in [n for n in args.write or [] if n in DCOPS]:
        cache = cpsat.write_cache(
            name, time_limit=args.time_limit, workers=args.workers, hint=args.hint, progress=not args.quiet
        )
        print(f"wrote {cpsat.cache_path(name)}: {dict(zip(*np.unique(cache.status, return_counts=True)))}")
    for name in [n for n in args.write or cpsat.DCOPS if n in DCOPS]:
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="relic-baselines", description="The comparators of the RELIC suite.")
    sub = parser.add_subparsers(dest="command", required=True)
    team_help = (
        f"{', '.join(BUILTIN_TEAMS + DCOP_SOLVERS)} (DCOP algorithms also as NAME:tuned, NAME:paper, NAME:p=0.3), "
        "the routing rows (hmtsp: e.g. ci+2opt+relocate; fstsp: truck, truck+split), the scheduling rows (fjagv: "
        "<ef|spt>-<spt|edd|mst|atc>-<nearest|fcfs>[+ls]; mrcps: <par|ser>-<lft|mts|edd|mslk>-<speed|cost>, par-...+ls), "
        "a trained checkpoint ippo:DIR or mappo:DIR (python -m baselines.rl train) "
        "or A.py,B.py,C.py (repeatable)"
    )
    add_eval_parser(sub, team_help).set_defaults(func=_cmd_eval)
    tb = sub.add_parser(
        "table", help="DCOP, routing (HMTSP, FSTSP) and scheduling (FJAGV, MRCPS) tables: classical algorithms, paper rows "
        "and the solver references"
    )
    tb.add_argument("--env", action="append", choices=[n for n in DCOPS + ROUTING + SCHED + MAPP if n in names()])
    tb.add_argument("--plot", metavar="DIR", help="also save a cost-per-sweep plot per benchmark in DIR (extra: docs)")
    tb.add_argument("--quiet", action="store_true")
    tb.set_defaults(func=_cmd_table)
    op = sub.add_parser(
        "optimum", help="show (default) or re-solve (--write) the cached CP-SAT (DCOP, MAS, FJAGV, MRCPS) and OR-Tools "
        "routing (HMTSP, FSTSP) references"
    )
    op.add_argument("--write", nargs="+", choices=[*DCOPS, *ROUTING, *SCHED, "mas_jd", "mas_st", "mas_fs"])
    op.add_argument("--time-limit", type=float, default=10.0, help="seconds per instance (default 10; the cached routing references used HMTSP 60, FSTSP 30)")
    op.add_argument("--workers", type=int, default=2, help="CP-SAT threads (default 2; the FJAGV/MRCPS caches used 1)")
    op.add_argument(
        "--hint", help="warm-start from this classical configuration's answer, e.g. lsga-dsa (DCOP), ci+2opt+relocate (HMTSP), "
        "seeds / atc / wspt (MAS), spt-atc-nearest (FJAGV, the default), par-mslk-speed (MRCPS, the default)"
    )
    op.add_argument("--quiet", action="store_true")
    op.set_defaults(func=_cmd_optimum)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_parser(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
