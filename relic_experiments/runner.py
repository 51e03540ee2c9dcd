"""Run a grid's cells: a local process pool (default) or Ray tasks on a cluster (extra ``distributed``).

Each cell runs in its own process and resumes from its run directory, so the grid can be
stopped at any point (or lose a machine) and started again: finished cells are skipped,
interrupted ones resume from their last checkpoint. On Ray, a cell is a task with one
declared CPU, retried when its worker dies; its run directory must be on storage every
node sees (a shared filesystem, documented in docs/grid.md): the retry resumes from it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from tqdm.auto import tqdm

from relic_envs.errors import InvalidConfig
from relic_experiments.cell import Cell, CellResult, load_result, run_cell
from relic_experiments.spec import GridSpec
from relic_learner.runlog import atomic_write

BACKENDS = ("local", "ray")
RAY_RETRIES = 3  # a cell whose worker dies is retried this many times (it resumes from its checkpoint)


@dataclasses.dataclass
class GridReport:
    results: list[CellResult]
    failures: list[tuple[str, str]]  # (cell key, error)

    def summary(self) -> str:
        ran = sum(not r.skipped for r in self.results)
        lines = [f"{len(self.results)} cells finished ({ran} run now, {len(self.results) - ran} already done), "
                 f"{len(self.failures)} failed"]
        lines += [f"  FAILED {key}: {error}" for key, error in self.failures]
        return "\n".join(lines)


def _attempt(cell: Cell, out: str, rate_limiter=None) -> CellResult:
    return run_cell(cell, out, rate_limiter=rate_limiter)


def write_spec(spec: GridSpec, out: str | Path) -> None:
    Path(out).mkdir(parents=True, exist_ok=True)
    atomic_write(Path(out) / "grid.json", json.dumps(dataclasses.asdict(spec), indent=2).encode())


def run_grid(spec: GridSpec, out: str | Path, *, backend: str = "local", workers: int = 1,
             address: str | None = None, progress: bool = True,
             cells: Sequence[Cell] | None = None) -> GridReport:
    """Run every unfinished cell of ``spec`` under ``out``; never raises for a failing cell."""
    if backend not in BACKENDS:
        raise InvalidConfig(f"backend must be one of {BACKENDS}, got {backend!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidConfig(f"workers must be a positive int, got {workers!r}")
    write_spec(spec, out)
    cells = list(spec.cells() if cells is None else cells)
    done = {c.key: r for c in cells if (r := load_result(c, out)) is not None}
    todo = [c for c in cells if c.key not in done]
    limiter = spec.rate_limiter(out)
    bar = tqdm(total=len(cells), initial=len(done), desc=spec.name, disable=not progress)
    results, failures = list(done.values()), []

    def record(cell: Cell, get: Callable[[], CellResult]) -> None:
        try:
            results.append(get())
        except Exception as exc:  # a failing cell is reported, the grid goes on
            failures.append((cell.key, f"{type(exc).__name__}: {exc}"))
        bar.update(1)

    if backend == "local":
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(_attempt, c, str(out), limiter): c for c in todo}
            for future in as_completed(futures):
                record(futures[future], future.result)
    else:
        _run_on_ray(todo, str(out), address, record, limiter)
    bar.close()
    order = {c.key: k for k, c in enumerate(cells)}
    results.sort(key=lambda r: order[r.cell.key])
    return GridReport(results, failures)


def _run_on_ray(cells: list[Cell], out: str, address: str | None, record, limiter) -> None:
    try:
        import ray
    except ImportError:
        raise InvalidConfig("the ray backend needs Ray: pip install 'relic-envs[distributed]'") from None
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(num_cpus=1, max_retries=RAY_RETRIES)(_attempt)
    refs = {remote.remote(c, out, limiter): c for c in cells}
    pending = list(refs)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        record(refs[ready[0]], lambda ref=ready[0]: ray.get(ref))
