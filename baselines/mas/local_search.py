"""Local search over dispatch priority lists for MAS-JD, MAS-ST and MAS-FS, the strongest
classical row (``python -m baselines.mas.local_search``).

**Encoding.** A solution is one priority list per resource (a ``(3, N)`` rank array,
smaller = earlier). It is decoded by the benchmark's own event simulator
(``DispatchEpisode``) as a non-delay dispatcher: at every decision epoch each acting
resource, in the simulator's order A, B, C, takes the job of its pool with the smallest
rank that no earlier resource took this epoch; in MAS-ST it ignores tasks it could no
longer finish by their deadline (they earn nothing and only delay the worker), and
idles when none is left. Every candidate's score is the episode's objective, so the
reported number is the simulator's and the schedule replays (``decode``).

**Start.** The best rule of ``baselines.mas.rules`` on the instance (every rule defined
for the benchmark is played; the best objective wins). Each resource's list is the
order in which the rule's schedule started the jobs' operations at that resource's stage
(ties: id). For MAS-JD and MAS-FS this list decodes to exactly the rule's schedule
(a non-delay rule started at ``t`` the pool jobs it preferred; the others start later,
so they rank later), so there the search never reports worse than its start. In
MAS-ST decoding also skips the hopeless tasks and a skipped task can change which
worker takes what later, so the decoded start usually, but not provably, matches or
beats the rule (it matched it exactly on all 40 MAS-ST test instances).

**Moves.** First-improvement random descent with a fixed seed: pick a resource, then a
swap of two list positions or an insert (move one job to another position), positions
drawn within a window of ``WINDOW`` list places (far moves rarely matter in a
release-ordered schedule); a candidate is kept when its objective is no worse (equal
moves let it drift across plateaus). The evaluation budget is ``budget`` decodes per
instance (default ``BUDGET``), the start's decode included.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from relic_envs.core.benchmark import ROLES
from relic_envs.core.instance import Instance
from relic_envs.core.registry import get_benchmark

BUDGET = 100
WINDOW = 8
SEED = 0


@dataclasses.dataclass(frozen=True)
class LSResult:
    ranks: np.ndarray  # (3, N) int64 the best priority lists (rank of each job per resource)
    objective: float  # the simulator's objective of decode(ranks)
    start_rule: str  # the rule the search started from
    start_objective: float  # that rule's own episode objective
    evaluations: int


def decode(name: str, instance: Instance, ranks: np.ndarray):
    """Play the priority lists ``ranks`` through the simulator; the finished episode."""
    bench = get_benchmark(name)
    ep = bench.new_episode(instance)
    skip_late = name == "mas_st"
    while not ep.done:
        taken: set[int] = set()
        actions = {}
        for k, role in enumerate(ROLES):
            actions[role] = -1
            if not ep.acting(role):
                continue
            pool = np.flatnonzero(ep._pools[k])
            if skip_late:
                stage = bench.problem.stage(k)
                pool = pool[ep.t + ep.durations[k, pool, stage] <= instance.deadline[pool]]
            pool = [j for j in pool[np.argsort(ranks[k, pool], kind="stable")] if j not in taken]
            if pool:
                actions[role] = int(pool[0])
                taken.add(int(pool[0]))
        invalid = ep.step(actions)
        if invalid is not None:  # pragma: no cover - the decoder only answers pool jobs and never stalls
            raise RuntimeError(f"priority-list decode voided: {invalid}")
    return ep


def ranks_from_episode(name: str, ep) -> np.ndarray:
    """Per resource, the rank of each job in the start order of its operation at that
    resource's stage (jobs never started there rank last, by id)."""
    problem = get_benchmark(name).problem
    n = ep.instance.n_jobs
    ranks = np.empty((len(ROLES), n), dtype=np.int64)
    for k in range(len(ROLES)):
        start = np.nan_to_num(ep.start[:, problem.stage(k)], nan=np.inf)
        order = np.lexsort((np.arange(n), start))
        ranks[k, order] = np.arange(n)
    return ranks


def best_rule(name: str, instance: Instance):
    """``(rule, episode)`` of the best rule of ``baselines.mas.rules`` on ``instance``."""
    from baselines.mas.cpsat import _hint_from_team
    from baselines.mas.rules import RULES

    bench = get_benchmark(name)
    sign = 1.0 if bench.minimize else -1.0
    played = [(rule, _hint_from_team(name, instance, rule)) for rule, table in RULES.items() if name in table]
    return min(played, key=lambda x: sign * x[1].objective())


def _neighbour(ranks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A swap or an insert in one resource's list, within ``WINDOW`` places."""
    out = ranks.copy()
    k = int(rng.integers(len(ROLES)))
    n = ranks.shape[1]
    order = np.argsort(out[k])
    a = int(rng.integers(n))
    b = int(np.clip(a + rng.integers(-WINDOW, WINDOW + 1), 0, n - 1))
    if a == b:
        b = (a + 1) % n
    if rng.random() < 0.5:
        order[a], order[b] = order[b], order[a]
    else:
        order = np.insert(np.delete(order, a), b, order[a])
    out[k, order] = np.arange(n)
    return out


def search(name: str, instance: Instance, budget: int = BUDGET, seed: int = SEED) -> LSResult:
    """Improve the best rule's schedule on ``instance`` within ``budget`` decodes."""
    if budget < 1:
        raise ValueError(f"budget must be >= 1 decode, got {budget}")
    bench = get_benchmark(name)
    sign = 1.0 if bench.minimize else -1.0
    rule, ep = best_rule(name, instance)
    ranks = ranks_from_episode(name, ep)
    best = decode(name, instance, ranks).objective()
    rng = np.random.default_rng(seed)
    for _ in range(budget - 1):
        cand = _neighbour(ranks, rng)
        value = decode(name, instance, cand).objective()
        if sign * value <= sign * best:
            ranks, best = cand, value
    return LSResult(ranks, float(best), rule, float(ep.objective()), budget)


def solve_batch(name: str, instances: Sequence[Instance], budget: int = BUDGET, seed: int = SEED) -> list[LSResult]:
    """The whole-batch solver: :func:`search` on every instance (same seed each)."""
    return [search(name, inst, budget, seed) for inst in instances]


def measure(names=("mas_jd", "mas_st", "mas_fs"), budget: int = BUDGET) -> list[tuple[str, str, str, float, float]]:
    """``(benchmark, "ls", regime, mean, std)`` on the canonical test splits."""
    import relic_envs

    rows = []
    for name in names:
        for regime, instances in relic_envs.splits(name).test.items():
            results = solve_batch(name, instances, budget)
            values = np.array([r.objective for r in results])
            starts = np.array([r.start_objective for r in results])
            rows.append((name, "ls", regime, float(values.mean()), float(values.std())))
            print(f"{name:7s} ls      {regime:7s} {values.mean():10.2f} ± {values.std():8.2f}  (start: best rule "
                  f"{starts.mean():.2f}; budget {budget})", flush=True)
    return rows


if __name__ == "__main__":  # python -m baselines.mas.local_search [--budget B] [benchmark ...]
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=["mas_jd", "mas_st", "mas_fs"])
    parser.add_argument("--budget", type=int, default=BUDGET, help=f"decodes per instance (default {BUDGET})")
    args = parser.parse_args()
    measure(tuple(args.names), args.budget)
