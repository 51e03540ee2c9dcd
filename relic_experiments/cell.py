"""One cell of a grid: one method on one benchmark, interface and run seed, as an ordinary run directory.

A cell's directory is ``OUT/<method>/<env>-<interface>/seed<k>``. It is a ``relic learn``
run directory (method ``relic``) or a comparator's (``baselines.ahd``), so an interrupted
cell resumes from its checkpoint exactly as a run does. When the search has finished,
the final team is evaluated once on every held-out test size (the protocol of
Appendix D: test data only after selection) and ``result.json`` is written atomically;
a cell with a ``result.json`` is finished and is never run again.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

import relic_envs
from relic_experiments.spec import SearchChoices
from relic_learner.batches import Batch
from relic_learner.evaluate import TeamEvaluator
from relic_learner.llm.ratelimit import RateLimiter
from relic_learner.runlog import atomic_write
from relic_learner.stream import run_client

RESULT = "result.json"
LLM_CACHE = "llm_cache"  # the grid's response cache, under OUT


@dataclasses.dataclass(frozen=True)
class Cell(SearchChoices):
    method: str
    env: str
    interface: str
    seed: int

    @property
    def key(self) -> str:
        return f"{self.method}/{self.env}-{self.interface}/seed{self.seed}"

    def path(self, out: str | Path) -> Path:
        return Path(out) / self.method / f"{self.env}-{self.interface}" / f"seed{self.seed}"


@dataclasses.dataclass(frozen=True)
class CellResult:
    """A finished cell: the final team's mean raw objective per test size, and what the search cost."""

    cell: Cell
    objective: dict[str, float]  # test size -> mean raw objective of the final team
    per_instance: dict[str, list[float]]
    calls: dict[str, int]  # logical LLM calls by purpose
    tokens: int  # prompt + completion tokens the endpoint reported for this cell's calls (0 offline; cache hits cost none)
    seconds: float  # wall time of the search and the test evaluation, this attempt only
    skipped: bool = False  # finished before this invocation
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 0  # HTTP requests, retries included (cache hits are none)
    cache_hits: int = 0

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d.pop("skipped")
        return d

    @classmethod
    def from_json(cls, data: dict[str, Any], *, skipped: bool = False) -> CellResult:
        return cls(Cell(**data["cell"]), data["objective"], data["per_instance"], data["calls"], data["tokens"],
                   data["seconds"], skipped, data.get("prompt_tokens", 0), data.get("completion_tokens", 0),
                   data.get("attempts", 0), data.get("cache_hits", 0))


def _config(cell: Cell):
    """The search config of a new cell (RELIC's or the comparator's)."""
    common = dict(env=cell.env, interface=cell.interface, llm=cell.llm, base_url=cell.base_url,
                  batches=cell.batches, proposals=cell.proposals, seed=cell.seed, workers=1)
    if cell.method == "relic":
        from relic_learner.relic import RelicConfig

        return RelicConfig(ablation=cell.ablation, communication=cell.communication, **common)
    from baselines.ahd import SearchConfig

    return SearchConfig(method=cell.method, **common)


def _search_class(cell: Cell):
    if cell.method == "relic":
        from relic_learner.relic import Relic

        return Relic
    from baselines.ahd import method

    return method(cell.method)


def _search(cell: Cell, path: Path, out: Path, rate_limiter: RateLimiter | None, retry_failed: bool = False):
    """The cell's search, resumed from its checkpoint when there is one.

    The openai backend's response cache is the grid's (``OUT/llm_cache``, shared by every
    cell: a rerun costs no calls however its run directories were lost, failed calls
    included, which are replayed as failures unless ``retry_failed``) and every call
    waits for the grid's ``rate_limiter``.
    """
    config = _config(cell)
    llm = run_client(config, path, cache_dir=out / LLM_CACHE, rate_limiter=rate_limiter,
                     replay_failures=not retry_failed)
    search_class = _search_class(cell)
    if (path / "checkpoint.pkl").exists():
        return search_class.resume(path, llm=llm)
    return search_class(config, path, llm=llm)


def test_objectives(env: str, interface: str, team: dict[str, str]) -> dict[str, list[float]]:
    """The team's raw objective on every instance of every held-out test size."""
    bench = relic_envs.get_benchmark(env)
    out = {}
    with TeamEvaluator(bench, interface=interface, workers=1) as evaluator:
        for size, instances in relic_envs.splits(env).test.items():
            result = evaluator.evaluate(team, Batch(tuple(instances), label=size))
            if not result.ok:  # cannot happen for a team selected on valid training scores, unless it overfits a crash
                out[size] = [float("nan")] * len(instances)
            else:
                out[size] = [float(r.objective) for r in result.results]
    return out


def load_result(cell: Cell, out: str | Path) -> CellResult | None:
    path = cell.path(out) / RESULT
    if not path.exists():
        return None
    return CellResult.from_json(json.loads(path.read_text()), skipped=True)


def run_cell(cell: Cell, out: str | Path, *, rate_limiter: RateLimiter | None = None,
             retry_failed: bool = False) -> CellResult:
    """Run (or resume, or skip) one cell; return its result (``retry_failed``: see :func:`_search`)."""
    done = load_result(cell, out)
    if done is not None:
        return done
    path = cell.path(out)
    path.mkdir(parents=True, exist_ok=True)
    (path / "worker.pid").write_text(str(os.getpid()))  # which process runs the cell (tests kill it)
    start = time.perf_counter()
    search = _search(cell, path, Path(out), rate_limiter, retry_failed)
    team = search.learn()
    per_instance = test_objectives(cell.env, cell.interface, team)
    ledger = search.llm.ledger.snapshot()
    result = CellResult(
        cell, {s: float(sum(v) / len(v)) for s, v in per_instance.items()}, per_instance,
        dict(ledger["calls"]), int(ledger.get("prompt_tokens", 0) + ledger.get("completion_tokens", 0)),
        time.perf_counter() - start, prompt_tokens=int(ledger.get("prompt_tokens", 0)),
        completion_tokens=int(ledger.get("completion_tokens", 0)), attempts=int(ledger.get("attempts", 0)),
        cache_hits=int(ledger.get("cache_hits", 0)),
    )
    atomic_write(path / RESULT, json.dumps(result.to_json(), indent=2).encode())
    return result
