"""The RL sweep: IPPO and MAPPO on every benchmark at equal budgets, several training seeds,
test splits scored once; resumable, so the table fills in over sessions.

    python -m baselines.rl sweep --out runs/rl-sweep                 # every benchmark, both algos, seeds 0-2
    python -m baselines.rl sweep --out runs/rl-sweep --env dgc --max-runs 2
    python -m baselines.rl table runs/rl-sweep                       # mean ± std over seeds, with the seeds

**A run** is one (benchmark, algorithm, seed): :func:`baselines.rl.ppo.train` on the training
regimes for the sweep's env-step budget, the checkpoint chosen on validation instances only
(drawn from the training regimes), then the held-out test splits scored once, greedily,
into ``test.json``. ``test.json`` is the run's finished mark: it is written last and
atomically, so a run cut off anywhere is simply run again from the start next time (a run
is the unit of resumption; PPO's own state is not checkpointed).

**Equal budgets.** The sweep's settings (budget, seeds, network and PPO settings) are
written to ``sweep.json`` when the folder is first used; a later call with other settings
is refused rather than mixing budgets in one table. The default budget is
:data:`DEFAULT_STEPS` env steps per run for every benchmark (one joint step of one
instance is one env step).
"""

from __future__ import annotations

import dataclasses
import json
import os
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import relic_envs
from relic_envs.errors import InvalidConfig

ALGOS = ("ippo", "mappo")
SEEDS = (0, 1, 2)
DEFAULT_STEPS = 1_000_000  # env steps per run on the CPU (issue 53: at least 1e6, the same in a family)
# What a sweep fixes for all its runs (Config fields); the rest stay at Config's defaults.
SETTINGS = ("total_steps", "n_envs", "n_steps", "hidden", "pool", "n_val", "chunk", "interface")


@dataclasses.dataclass(frozen=True)
class Run:
    env: str
    algo: str
    seed: int

    @property
    def name(self) -> str:
        return f"{self.env}_{self.algo}_s{self.seed}"


def plan(envs: Iterable[str], algos: Iterable[str] = ALGOS, seeds: Iterable[int] = SEEDS) -> list[Run]:
    """Every run of the sweep, seeds innermost so each (benchmark, algorithm) row fills in seed by seed."""
    envs, algos, seeds = list(envs), list(algos), list(seeds)
    unknown = [e for e in envs if e not in relic_envs.names()]
    if unknown:
        raise InvalidConfig(f"unknown benchmark {unknown[0]!r}; known: {', '.join(relic_envs.names())}")
    bad = [a for a in algos if a not in ALGOS]
    if bad:
        raise InvalidConfig(f"unknown algorithm {bad[0]!r}; use {' or '.join(ALGOS)}")
    return [Run(e, a, s) for e in envs for a in algos for s in seeds]


def _settings(out: Path, settings: dict[str, Any]) -> dict[str, Any]:
    """The sweep's settings: written on first use, and every later call must match them."""
    path = out / "sweep.json"
    if path.exists():
        fixed = json.loads(path.read_text())
        differ = {k: (fixed.get(k), v) for k, v in settings.items() if fixed.get(k) != v}
        if differ:
            name, (was, now) = next(iter(differ.items()))
            raise InvalidConfig(f"{out} is a sweep with {name}={was!r}, not {now!r}: one table holds one budget "
                                "(use another --out)")
        return fixed
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=1, sort_keys=True) + "\n")
    return settings


def finished(out: Path, run: Run) -> dict | None:
    """A run's test scores (``test.json``), or ``None`` while it has not finished."""
    path = out / run.name / "test.json"
    return json.loads(path.read_text()) if path.exists() else None


def sweep(out: str | Path, runs: Sequence[Run], *, max_runs: int | None = None, max_wall_s: float | None = None,
          log: Callable[[str], None] = print, **settings: Any) -> list[Run]:
    """Train and test every run of ``runs`` not finished in ``out``; return the runs done by this call.

    ``settings`` are :data:`SETTINGS` (``total_steps`` defaults to :data:`DEFAULT_STEPS`).
    ``max_runs`` / ``max_wall_s`` stop the call before it starts another run (a run is never cut
    by them), so a session can fill in part of the table.
    """
    from baselines.rl.policy import evaluate_checkpoint
    from baselines.rl.ppo import Config, train

    defaults = Config(env="dgc")
    fixed = {k: settings.get(k, DEFAULT_STEPS if k == "total_steps" else getattr(defaults, k)) for k in SETTINGS}
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise InvalidConfig(f"unknown sweep setting {unknown[0]!r}; allowed: {', '.join(SETTINGS)}")
    out = Path(out)
    fixed = _settings(out, fixed)
    start, done = time.perf_counter(), []
    todo = [r for r in runs if finished(out, r) is None]
    log(f"sweep {out}: {len(runs) - len(todo)} of {len(runs)} runs finished, {len(todo)} to run "
        f"({fixed['total_steps']:,} env steps each)")
    for run in todo:
        if max_runs is not None and len(done) >= max_runs:
            break
        if max_wall_s is not None and time.perf_counter() - start > max_wall_s:
            log(f"sweep: {max_wall_s:.0f} s passed; {len(todo) - len(done)} runs left for the next call")
            break
        log(f"sweep: {run.name}")
        folder = out / run.name
        kw = {k: v for k, v in fixed.items() if k != "total_steps"}
        _, result = train(run.env, run.algo, fixed["total_steps"], out=folder, log=lambda *a: None,
                          seed=run.seed, **kw)
        test = evaluate_checkpoint(folder)  # once: the checkpoint was chosen on validation instances only
        record = {"run": dataclasses.asdict(run), "test": test, "best_val": result["best_val"],
                  "best_update": result["best_update"], "init_val": result["init_val"], "timing": result["timing"]}
        tmp = folder / "test.json.tmp"
        tmp.write_text(json.dumps(record, indent=1, default=float) + "\n")
        os.replace(tmp, folder / "test.json")
        done.append(run)
        log(f"  {run.name}: " + ", ".join(f"{r} {v['objective']:.4g}" for r, v in test.items())
            + f" ({result['timing']['steps_per_s']:,.0f} env steps/s, {result['timing']['wall_s']:.0f} s)")
    return done


def rows(out: str | Path) -> list[dict[str, Any]]:
    """Per (benchmark, algorithm, test split): the finished seeds' mean objectives and their mean ± std."""
    out = Path(out)
    if not (out / "sweep.json").exists():
        raise InvalidConfig(f"{out} holds no sweep (no sweep.json): run `python -m baselines.rl sweep --out {out}`")
    found: dict[tuple[str, str], dict[int, dict]] = {}
    for path in sorted(out.glob("*/test.json")):
        record = json.loads(path.read_text())
        run = Run(**record["run"])
        found.setdefault((run.env, run.algo), {})[run.seed] = record["test"]
    table = []
    for (env, algo), by_seed in found.items():
        for split in next(iter(by_seed.values())):
            values = {seed: test[split]["objective"] for seed, test in sorted(by_seed.items())}
            spread = statistics.pstdev(values.values()) if len(values) > 1 else 0.0
            table.append({"env": env, "algo": algo, "split": split, "mean": statistics.fmean(values.values()),
                          "std": spread, "seeds": values})
    return table


def seed_team_means(cache: str | Path, env: str, interface: str = "paper") -> dict[str, float]:
    """The seed programs' mean objective per test split, on the canonical test instances (the ones
    every run is scored on); computed once per (benchmark, interface) and kept in the JSON file
    ``cache`` (a sweep keeps its own, ``OUT/seeds.json``)."""
    import numpy as np

    from relic_envs.seeds import seed_team

    path, key = Path(cache), f"{env}/{interface}"
    stored = json.loads(path.read_text()) if path.exists() else {}
    if key not in stored:
        stored[key] = {regime: float(np.mean([r.objective for r in relic_envs.rollout(
                           env, seed_team(env, interface), insts, interface=interface) if r.valid]))
                       for regime, insts in relic_envs.splits(env).test.items()}
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, path)
    return stored[key]


def format_table(out: str | Path) -> str:
    """The sweep as Markdown: mean ± std over training seeds, beside each seed's figure and the seed
    programs' figure on the same instances (the classical rows and references: the results pages)."""
    settings = json.loads((Path(out) / "sweep.json").read_text())
    lines = [f"RL sweep {out}: {settings['total_steps']:,} env steps per run; raw test objective "
             "(each seed: the mean over the split's instances; ± is over seeds)", "",
             "| benchmark | algo | split | mean ± std over seeds | seeds | seed programs |", "|---|---|---|---|---|---|"]
    for r in rows(out):
        direction = "min" if relic_envs.get_benchmark(r["env"]).minimize else "max"
        seeds = ", ".join(f"s{k}: {v:.4g}" for k, v in r["seeds"].items())
        team = seed_team_means(Path(out) / "seeds.json", r["env"], settings.get("interface", "paper"))[r["split"]]
        lines.append(f"| {r['env']} ({direction}) | {r['algo'].upper()} | {r['split']} | "
                     f"{r['mean']:.4g} ± {r['std']:.3g} (n={len(r['seeds'])}) | {seeds} | {team:.4g} |")
    return "\n".join(lines) + "\n"
