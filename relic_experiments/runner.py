"""Run a grid's cells: a local process pool (default) or Ray tasks on a cluster (extra ``distributed``).

Each cell runs in its own process and resumes from its run directory, so the grid can be
stopped at any point (or lose a machine) and started again: finished cells are skipped,
interrupted ones resume from their last checkpoint. On Ray, a cell is a task with one
declared CPU, retried when its worker dies; its run directory must be on storage every
node sees (a shared filesystem, documented in docs/grid.md): the retry resumes from it.

On a cluster that was started before the driver's shell had the endpoint's credentials,
the workers' environment lacks them: the driver puts the OpenAI variables it has
(:data:`CREDENTIALS`) in Ray's object store once and each task sets them in its worker's
environment for the cell's duration only. Not through ``runtime_env={"env_vars": ...}``:
Ray's runtime-environment agent writes those values verbatim into
``runtime_env_agent.log`` on every node (Ray 2.60, measured), and a key must not sit in a
file. Nor through a file of the run. Programs never see them either way (role workers
start from a whitelisted environment, :mod:`relic_learner.sandbox`). ``OUT`` is resolved in the driver, so a relative ``--out`` means the
driver's working directory wherever the workers were started.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
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
#: What the openai SDK reads from the environment; the driver's values travel to Ray workers.
CREDENTIALS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")


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


def _attempt(cell: Cell, out: str, rate_limiter=None, retry_failed: bool = False,
             env_vars: dict[str, str] | None = None) -> CellResult:
    with _environment(env_vars or {}):
        return run_cell(cell, out, rate_limiter=rate_limiter, retry_failed=retry_failed)


@contextlib.contextmanager
def _environment(env_vars: dict[str, str]):
    """``env_vars`` set in this process while the block runs, the previous values back afterwards."""
    before = {name: os.environ.get(name) for name in env_vars}
    os.environ.update(env_vars)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def credentials(spec: GridSpec) -> dict[str, str]:
    """The driver's OpenAI variables a grid's cells need (none offline); raises if the key is missing.

    Checked before any cell starts: without a key every cell would fail, one by one.
    """
    if spec.llm == "offline":
        return {}
    found = {name: os.environ[name] for name in CREDENTIALS if os.environ.get(name, "").strip()}
    if "OPENAI_API_KEY" not in found:
        raise InvalidConfig(f"llm {spec.llm!r} needs OPENAI_API_KEY in the driver's environment "
                            "(export it before `relic-grid run`; any value for an endpoint that ignores keys)")
    return found


def write_spec(spec: GridSpec, out: str | Path) -> None:
    Path(out).mkdir(parents=True, exist_ok=True)
    atomic_write(Path(out) / "grid.json", json.dumps(dataclasses.asdict(spec), indent=2).encode())


def run_grid(spec: GridSpec, out: str | Path, *, backend: str = "local", workers: int = 1,
             address: str | None = None, progress: bool = True,
             cells: Sequence[Cell] | None = None, retry_failed: bool = False) -> GridReport:
    """Run every unfinished cell of ``spec`` under ``out``; never raises for a failing cell.

    ``retry_failed``: ask again the LLM calls whose failure the grid's response cache
    recorded (by default a rerun replays them, so it repeats the first run's results at
    no cost; asking again may change them).
    """
    if backend not in BACKENDS:
        raise InvalidConfig(f"backend must be one of {BACKENDS}, got {backend!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidConfig(f"workers must be a positive int, got {workers!r}")
    env_vars = credentials(spec)
    out = Path(out).expanduser().resolve()  # the driver's cwd, not the one each worker was started in
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
            futures = {pool.submit(_attempt, c, str(out), limiter, retry_failed): c for c in todo}
            for future in as_completed(futures):
                record(futures[future], future.result)
    else:
        _run_on_ray(todo, str(out), address, record, limiter, retry_failed, env_vars)
    bar.close()
    order = {c.key: k for k, c in enumerate(cells)}
    results.sort(key=lambda r: order[r.cell.key])
    return GridReport(results, failures)


def _run_on_ray(cells: list[Cell], out: str, address: str | None, record, limiter, retry_failed: bool,
                env_vars: dict[str, str]) -> None:
    try:
        import ray
    except ImportError:
        raise InvalidConfig("the ray backend needs Ray: pip install 'relic-envs[distributed]'") from None
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(num_cpus=1, max_retries=RAY_RETRIES)(_attempt)
    secrets = ray.put(env_vars)  # one object every task reads; never a file, never a runtime_env (see above)
    refs = {remote.remote(c, out, limiter, retry_failed, secrets): c for c in cells}
    pending = list(refs)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        record(refs[ready[0]], lambda ref=ready[0]: ray.get(ref))
