"""Team evaluation: the one trusted scoring routine of the learner and the baselines.

:class:`TeamEvaluator` takes a team of role programs (source text; ``None`` for a
role's fixed reference behaviour), plays it on a :class:`~relic_learner.batches.Batch`
in a pool of sandbox workers, and returns per-instance results with one typed status.
Results are cached by the hash of the team's sources and the batch, so re-scoring a
team on the same mixed batch is free.

Statuses (Appendix C.5, "Failure handling"): ``ok``, or invalid with one reason:
``syntax``, ``signature``, ``forbidden`` (program text), ``exception``, ``timeout``,
``memory``, ``mutation`` (execution), ``protocol`` (a worker sent something that is
not a result: it is replaced, and what it sent is never executed), ``type``,
``dtype``, ``shape``, ``domain``, ``non-finite`` (the benchmark's return contract).
An invalid team has no score.
"""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import math
import os
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from relic_envs.core.benchmark import Benchmark
from relic_envs.core.program import ProgramPolicy, check_source
from relic_envs.core.registry import get_benchmark
from relic_envs.core.rollout import RolloutResult, rollout
from relic_envs.errors import InvalidConfig, ProgramError
from relic_learner.batches import Batch
from relic_learner.intake import Program
from relic_learner.sandbox import Job, Limits, SandboxWorker, compiled_program

Team = Mapping[str, "str | Program | None"]

@dataclasses.dataclass(frozen=True)
class Status:
    """``ok``, or the first failure: its reason, the role at fault and a detail line."""

    ok: bool
    reason: str | None = None
    role: str | None = None
    detail: str = ""

    def __str__(self) -> str:
        return "ok" if self.ok else f"invalid ({self.reason}, role {self.role}): {self.detail}"


OK = Status(True)


@dataclasses.dataclass(frozen=True)
class TeamEvaluation:
    """A team's results on one batch.

    ``mean_score`` is Eq. 3's mean higher-is-better score over the batch, ``None``
    when the status is invalid (an invalid team has no score; the search charges it).
    """

    results: tuple[RolloutResult, ...]
    status: Status
    seconds: float
    cached: bool = False
    calls: Mapping[str, int] = dataclasses.field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status.ok

    @property
    def mean_score(self) -> float | None:
        if not self.ok:
            return None
        return math.fsum(r.score for r in self.results) / len(self.results)

    @property
    def mean_objective(self) -> float | None:
        if not self.ok:
            return None
        return math.fsum(r.objective for r in self.results) / len(self.results)


def _source(program: str | Program | None) -> str | None:
    return program.source if isinstance(program, Program) else program


def _status_of(results: Sequence[RolloutResult]) -> Status:
    for result in results:
        if result.invalid is not None:
            return Status(False, result.invalid.reason, result.invalid.role, result.invalid.detail)
    return OK


DETERMINISM_REPEATS = 2  # repeats of a new text's first instances, each under another layout shift


def _fingerprint(result: RolloutResult) -> str:
    """What must repeat bit for bit: objective, score (``repr`` of a float is exact), steps, failure."""
    invalid = result.invalid
    failure = None if invalid is None else (invalid.role, invalid.reason)
    return repr((result.objective, result.score, result.steps, failure))


# Started referees that closed evaluators left, for the next evaluator of this process.
# A referee costs an interpreter and, per role, a jail and an interpreter to start (about
# a second of CPU each); a run, a test session or a table makes many evaluators, often of
# one benchmark. Reuse is as safe as a referee's next job: the referee and each jail's
# zygote run trusted code only, and every job's programs run in a child forked for that
# job alone (relic_learner.sandbox). Spares belong to the process that started them: a
# forked child forgets them without closing them (they are its parent's).
_SPARES: list[SandboxWorker] = []
_SPARES_LOCK = threading.Lock()
_SPARES_MAX = 4


def _take_referee() -> SandboxWorker:
    """A live spare referee (most recently used first), or a new, not yet started one."""
    with _SPARES_LOCK:
        while _SPARES:
            worker = _SPARES.pop()
            if worker.alive:
                worker.restarts, worker.isolation = 0, {}  # the new evaluator's own counts
                return worker
            worker.close()
    return SandboxWorker()


def _return_referee(worker: SandboxWorker) -> None:
    if not worker.alive:
        worker.close()
        return
    with _SPARES_LOCK:
        _SPARES.append(worker)
        surplus = _SPARES[:-_SPARES_MAX]
        del _SPARES[:-_SPARES_MAX]
    for old in surplus:
        old.close()


def close_spare_referees() -> None:
    """Stop the referees closed evaluators left (also run at interpreter exit)."""
    with _SPARES_LOCK:
        spares = list(_SPARES)
        _SPARES.clear()
    for worker in spares:
        worker.close()


def _forget_spares_in_child() -> None:
    global _SPARES_LOCK
    _SPARES_LOCK = threading.Lock()  # another thread may have held it at the fork
    for worker in _SPARES:
        worker.disown()
    _SPARES.clear()


atexit.register(close_spare_referees)
os.register_at_fork(after_in_child=_forget_spares_in_child)


class TeamEvaluator:
    """Evaluate teams of role programs on batches, sandboxed, pooled and cached.

    Parameters
    ----------
    benchmark:
        Benchmark name or object.
    interface:
        ``"paper"`` or ``"alt"`` (where the benchmark has it).
    workers:
        Sandbox processes in the pool; default: the machine's CPU count. A batch is
        split into contiguous chunks across them; several teams evaluated together
        (:meth:`evaluate_many`) are played whole, side by side, once there are as many
        teams as workers.
    limits:
        :class:`~relic_learner.sandbox.Limits`; default: the family's per-call limit
        (2 s per DCOP call, 0.25 s per CO decision, 1 s for MAPP/MAS), 1 GiB memory.
    sandbox:
        ``False`` runs trusted programs in this process (no limits): for measuring the
        sandbox's overhead and for hand-written seeds, never for LLM output.
    cache_size:
        How many (team, batch) results to keep.
    isolation:
        ``"full"`` (default) or ``"reduced"``: overrides ``limits.isolation``. With
        ``"full"``, a machine that refuses an isolation layer raises
        :class:`~relic_learner.jail.IsolationUnavailable` instead of running a program.
    determinism_instances:
        The determinism check (issue 54): a text's first valid evaluation is played again
        on this many of the batch's first instances (a text is its compiled code: a new
        comment does not make it new), later, in children whose memory layout is
        shifted on purpose (``Job.perturb``); any difference makes the team
        invalid with reason ``nondeterministic``, charged to the first new role (it never
        enters a tree). A text that repeats is not checked again. ``0`` turns it off.

    Use it as a context manager, or call :meth:`close`, to stop the workers.
    """

    def __init__(
        self,
        benchmark: str | Benchmark,
        *,
        interface: str = "paper",
        workers: int | None = None,
        limits: Limits | None = None,
        sandbox: bool = True,
        cache_size: int = 4096,
        isolation: str | None = None,
        determinism_instances: int = 2,
    ):
        self.bench = get_benchmark(benchmark) if isinstance(benchmark, str) else benchmark
        self.bench.check_interface(interface)
        self.interface = interface
        self.signatures = self.bench.signatures(interface)
        self.limits = limits or Limits.for_family(self.bench.family)
        if isolation is not None:
            self.limits = dataclasses.replace(self.limits, isolation=isolation)
        workers = (os.cpu_count() or 1) if workers is None else workers
        if not isinstance(workers, int) or workers < 1:
            raise InvalidConfig(f"workers must be a positive int, got {workers!r}")
        self.n_workers = workers
        self.sandbox = sandbox
        self._cache: OrderedDict[str, TeamEvaluation] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._idle: queue.Queue[SandboxWorker] = queue.Queue()
        self._workers = [_take_referee() for _ in range(workers if sandbox else 0)]
        for worker in self._workers:
            self._idle.put(worker)
        self._threads = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="relic-eval")
        self.evaluations = 0  # evaluations actually run (cache misses)
        self.cache_hits = 0
        if not isinstance(determinism_instances, int) or determinism_instances < 0:
            raise InvalidConfig(f"determinism_instances must be an int >= 0, got {determinism_instances!r}")
        self.determinism_instances = determinism_instances
        self._repeatable: set[str] = set()  # (role, text) digests whose first evaluation repeated
        self._perturbations = 0

    # -- public API ------------------------------------------------------------------
    def evaluate(self, team: Team, batch: Batch) -> TeamEvaluation:
        """Play ``team`` on ``batch``; never raises for anything a program does."""
        return self.evaluate_many([team], batch)[0]

    def evaluate_many(self, teams: Sequence[Team], batch: Batch) -> list[TeamEvaluation]:
        """Evaluate several teams on one batch, spreading all their chunks over the pool."""
        if not isinstance(batch, Batch):
            raise TypeError(f"batch must be a relic_learner.batches.Batch, got {type(batch).__name__}")
        keyed = [(self._team_key(team), self._sources(team)) for team in teams]
        out: dict[int, TeamEvaluation] = {}
        pending: list[tuple[int, str, dict[str, str | None]]] = []
        for index, (key, sources) in enumerate(keyed):
            hit = self._lookup(f"{key}:{batch.digest}")
            if hit is not None:
                out[index] = hit
            elif (rejected := self._reject(sources)) is not None:
                out[index] = TeamEvaluation(tuple(), rejected, 0.0)
            else:
                pending.append((index, key, sources))
        # One future per (team, chunk); chunks of all teams share the pool.
        chunks = self._chunks(len(batch), len(pending))
        started = time.perf_counter()
        futures = {
            (index, c): self._threads.submit(self._run_chunk, sources, batch, lo, hi)
            for index, _, sources in pending
            for c, (lo, hi) in enumerate(chunks)
        }
        # Which texts the determinism check must play again: worked out while the chunks play.
        unchecked = {index: self._unchecked(sources) for index, _, sources in pending}
        for index, _key, _ in pending:
            results: list[RolloutResult] = []
            calls: dict[str, int] = {}
            for c in range(len(chunks)):
                chunk_results, stats = futures[(index, c)].result()
                results.extend(chunk_results)
                for role, n in stats.get("calls", {}).items():
                    calls[role] = calls.get(role, 0) + n
            out[index] = TeamEvaluation(tuple(results), _status_of(results), time.perf_counter() - started, False, calls)
        repeats = {index: self._threads.submit(self._repeat, sources, batch, out[index], unchecked[index])
                   for index, _, sources in pending if unchecked[index] and out[index].ok}
        for index, key, _ in pending:
            if index in repeats:
                out[index] = repeats[index].result()
            self._store(f"{key}:{batch.digest}", out[index])
        return [out[i] for i in range(len(teams))]

    def close(self) -> None:
        """Stop using the workers: each live referee waits, started, for the next evaluator (see :func:`_take_referee`)."""
        self._threads.shutdown(wait=True)
        for worker in self._workers:
            _return_referee(worker)
        self._workers = []

    def __enter__(self) -> TeamEvaluator:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def isolation(self) -> dict[str, bool]:
        """The layers every role worker of this pool held (empty before a program ran)."""
        held: dict[str, bool] = {}
        for worker in self._workers:
            for name, value in worker.isolation.items():
                held[name] = held.get(name, True) and value
        return held

    @property
    def restarts(self) -> int:
        """Worker replacements so far (after kills, crashes and tampering)."""
        return sum(w.restarts for w in self._workers)

    # -- internals -------------------------------------------------------------------
    def _sources(self, team: Team) -> dict[str, str | None]:
        unknown = set(team) - set(self.bench.roles)
        missing = [r for r in self.bench.roles if r not in team]
        if unknown or missing:
            raise InvalidConfig(f"a team maps each of {list(self.bench.roles)} to a program; missing {missing}, unknown {sorted(unknown)}")
        sources = {role: _source(team[role]) for role in self.bench.roles}
        for role, source in sources.items():
            if source is not None and not isinstance(source, str):
                raise InvalidConfig(f"role {role}: a program is source text, a Program or None, got {type(source).__name__}")
        return sources

    def _team_key(self, team: Team) -> str:
        h = hashlib.sha256(f"{self.bench.name}:{self.interface}".encode())
        for role, source in self._sources(team).items():
            h.update(f"\0{role}\0".encode())
            h.update(b"<reference>" if source is None else source.encode())
        return h.hexdigest()

    def _reject(self, sources: Mapping[str, str | None]) -> Status | None:
        """Validate program text here, before any worker sees it."""
        for role, source in sources.items():
            if source is None:
                continue
            try:
                check_source(source, self.signatures[role])
            except ProgramError as exc:
                return Status(False, exc.reason, role, str(exc))
            except Exception as exc:  # noqa: BLE001 - check_source names every failure; never let text stop a run
                return Status(False, "syntax", role, f"the program could not be checked ({type(exc).__name__})")
        return None

    def _chunks(self, n: int, teams: int = 1) -> list[tuple[int, int]]:
        """How one team's batch of ``n`` instances is cut when ``teams`` teams are evaluated together.

        In-process evaluation is one chunk: threads would only contend for the GIL. In the
        sandbox a chunk pays a fresh child per role and one round trip per decision step
        whatever its size, so a team is split only across the workers the other teams
        leave free: with as many teams as workers, each referee plays whole teams.
        """
        workers = self.n_workers if self.sandbox else 1
        k = max(1, min(-(-workers // max(1, teams)), n))
        bounds = [round(i * n / k) for i in range(k + 1)]
        return [(bounds[i], bounds[i + 1]) for i in range(k)]

    def _run_chunk(self, sources: Mapping[str, str | None], batch: Batch, lo: int, hi: int) -> tuple[list[RolloutResult], dict]:
        instances = batch.instances[lo:hi]
        if not self.sandbox:
            return self._run_in_process(sources, instances), {}
        worker = self._idle.get()
        try:
            job = Job(self.bench.name, self.interface, dict(sources), tuple(instances), self.limits.call_s,
                      self.limits.memory_mb, self.limits.isolation)
            return worker.run(job, self.limits.wall_for(len(instances)))
        finally:
            self._idle.put(worker)

    def _text_key(self, role: str, source: str) -> str:
        """The text's identity for the determinism check: its compiled code (comments and
        layout that do not change the code do not make a text new)."""
        code = compiled_program(self.bench.name, self.interface, role, source)
        body = code if isinstance(code, bytes) else source.encode()
        return hashlib.sha256(f"{self.bench.name}:{self.interface}:{role}\0".encode() + body).hexdigest()

    def _unchecked(self, sources: Mapping[str, str | None]) -> list[str]:
        """The roles whose text the determinism check has not seen repeat (none when the check is off)."""
        if not (self.sandbox and self.determinism_instances):
            return []
        return [r for r, src in sources.items() if src is not None and self._text_key(r, src) not in self._repeatable]

    def _repeat(self, sources: Mapping[str, str | None], batch: Batch, evaluation: TeamEvaluation,
                new: list[str]) -> TeamEvaluation:
        """The determinism check of the texts of roles ``new``: ``evaluation``, or it made
        invalid (``nondeterministic``) when a repeat differs."""
        k = min(self.determinism_instances, len(batch))
        # Two repeats, each with its own layout shift: an address-dependent choice can come out the
        # same under one shift by chance (a shift that is a multiple of what the program reduces the
        # address by); under two different shifts both coincidences are needed.
        for _ in range(DETERMINISM_REPEATS):
            with self._lock:
                self._perturbations += 1
                # far apart: neighbouring shifts differ by a few ballast blocks, which a size class may not see
                perturb = 47 * self._perturbations - 46
            worker = self._idle.get()
            try:
                job = Job(self.bench.name, self.interface, dict(sources), tuple(batch.instances[:k]), self.limits.call_s,
                          self.limits.memory_mb, self.limits.isolation, perturb=perturb)
                again, _ = worker.run(job, self.limits.wall_for(k))
            finally:
                self._idle.put(worker)
            for i, (first, second) in enumerate(zip(evaluation.results[:k], again)):
                if _fingerprint(first) != _fingerprint(second):
                    detail = (f"instance {i} scored {_fingerprint(first)} and then {_fingerprint(second)} when played "
                              f"again with another memory layout, later (new text: role {', '.join(new)})")
                    return dataclasses.replace(evaluation, status=Status(False, "nondeterministic", new[0], detail))
        with self._lock:
            self._repeatable.update(self._text_key(r, sources[r]) for r in new)
        return evaluation

    def _run_in_process(self, sources: Mapping[str, str | None], instances: Sequence[Any]) -> list[RolloutResult]:
        team = {}
        for role, source in sources.items():
            team[role] = (
                self.bench.reference_policy(role, self.interface) if source is None
                else ProgramPolicy(source, self.signatures[role])
            )
        return rollout(self.bench, team, instances, interface=self.interface)

    def _lookup(self, key: str) -> TeamEvaluation | None:
        with self._lock:
            hit = self._cache.get(key)
            if hit is None:
                return None
            self._cache.move_to_end(key)
            self.cache_hits += 1
            return dataclasses.replace(hit, cached=True)

    def _store(self, key: str, evaluation: TeamEvaluation) -> None:
        with self._lock:
            self.evaluations += 1
            self._cache[key] = evaluation
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)

