"""An offline list-schedule local search for MAS-JD: the best-known offline reference
(``python -m baselines.mas.offline_ls [--write] [--moves M]``).

**What it is.** A heuristic, *offline* (clairvoyant) reference: like CP-SAT it knows every
job and release time in advance, which no team of the benchmark does. It is not an
optimum and not a bound: nothing here proves that a better schedule does not exist, so a
team's gap to it says how far the team is from the best schedule known, no more.

**Encoding.** A solution is one global job order (a list). It is decoded by list
scheduling on the three identical machines: in list order, each job goes to the machine
that is free first (ties: the lowest index) and starts at ``max(free, r_j)``. For
``P|r_j|sum w_j T_j`` this space contains an optimal schedule (take any optimal
schedule's jobs in start order: list scheduling starts every job no later, by induction
on the sorted machine free times, and the objective is regular).

**Replay.** The decoded per-machine sequences are played through the benchmark's own
event simulator (``baselines.mas.cpsat.replay``: each machine takes the next job of its
sequence as soon as it is free and the job is released). Every start of a list schedule
is a release or a completion, i.e. a decision epoch of the episode, so the replay
rebuilds the decoded schedule exactly; the reported ``objective`` is the episode's.

**Search.** Start: the best, per instance, of the start-time orders of the tuned ATC
team's schedule, of the CP-SAT cache's schedule and of EDD order. Moves: an insert
(move one job to another list position) or a swap of two positions, with probability
1/2 each; positions within ``WINDOW`` places with probability 3/4, anywhere otherwise.
A move is kept when the decoded cost is no worse (equal moves let it drift across
plateaus). ``moves`` decodes per instance (default ``MOVES``), ``default_rng(SEED)``.
"""

from __future__ import annotations

import math
import time

import numpy as np

from baselines.mas import cpsat
from relic_envs.core.references import load_results, reference_path, save_results

MOVES = 20000
WINDOW = 10
SEED = 0
NAME = "mas_jd"
CACHE_NAME = "offline_ls_test.npz"
FIELDS = ("machine", "start", "objective", "start_objective")


def decode(release, proc, due, weight, order) -> tuple[float, list[list[int]]]:
    """``(cost, per-machine sequences)`` of the list schedule of ``order`` (module docs)."""
    free = [0.0, 0.0, 0.0]
    seqs: list[list[int]] = [[], [], []]
    cost = 0.0
    for j in order:
        k = 0 if free[0] <= free[1] and free[0] <= free[2] else (1 if free[1] <= free[2] else 2)
        start = free[k] if free[k] > release[j] else release[j]
        end = start + proc[j]
        free[k] = end
        seqs[k].append(j)
        if end > due[j]:
            cost += weight[j] * (end - due[j])
    return cost, seqs


def _cost(data, order) -> float:
    release, proc, due, weight = data
    free0 = free1 = free2 = 0.0
    cost = 0.0
    for j in order:
        r = release[j]
        if free0 <= free1 and free0 <= free2:
            end = (free0 if free0 > r else r) + proc[j]
            free0 = end
        elif free1 <= free2:
            end = (free1 if free1 > r else r) + proc[j]
            free1 = end
        else:
            end = (free2 if free2 > r else r) + proc[j]
            free2 = end
        if end > due[j]:
            cost += weight[j] * (end - due[j])
    return cost


def _start_orders(instance, index: int | None, regime: str | None) -> list[list[int]]:
    from baselines.mas.cpsat import _hint_from_team

    n = instance.n_jobs
    orders = []
    ep = _hint_from_team(NAME, instance, "atc:tuned")
    orders.append([int(j) for j in np.lexsort((np.arange(n), ep.start[:, 0]))])
    cache = cpsat.load_cache(NAME)
    if cache is not None and regime in cache.results and index is not None:
        start = cache.results[regime]["start"][index][:, 0]
        orders.append([int(j) for j in np.lexsort((np.arange(n), start))])
    orders.append([int(j) for j in np.lexsort((np.arange(n), instance.due))])
    return orders


def search(instance, *, moves: int = MOVES, seed: int = SEED, index: int | None = None, regime: str | None = None):
    """``(finished episode, start cost)`` of the local search on one MAS-JD instance."""
    data = tuple(np.asarray(a, dtype=np.float64).tolist() for a in (instance.release, instance.proc, instance.due, instance.weight))
    starts = _start_orders(instance, index, regime)
    costs = [_cost(data, o) for o in starts]
    order = list(starts[int(np.argmin(costs))])
    best = min(costs)
    start_cost = best
    rng = np.random.default_rng(seed)
    n = len(order)
    for _ in range(moves - len(starts)):
        i = int(rng.integers(n))
        if rng.random() < 0.75:
            j = int(np.clip(i + rng.integers(-WINDOW, WINDOW + 1), 0, n - 1))
        else:
            j = int(rng.integers(n))
        if i == j:
            continue
        cand = order.copy()
        if rng.random() < 0.5:
            cand.insert(j, cand.pop(i))
        else:
            cand[i], cand[j] = cand[j], cand[i]
        c = _cost(data, cand)
        if c <= best:
            order, best = cand, c
    _, seqs = decode(*data, order)
    ep = cpsat.replay(NAME, instance, seqs)
    if not math.isclose(ep.objective(), best, rel_tol=1e-9, abs_tol=1e-9):  # pragma: no cover - module docs
        raise RuntimeError(f"replay {ep.objective()} differs from the decoded cost {best}")
    return ep, start_cost


def cache_path():
    return reference_path(NAME, CACHE_NAME)


def write_cache(moves: int = MOVES, progress: bool = True):
    """Run the search on every canonical MAS-JD test instance and store the schedules."""
    import relic_envs

    results, t0 = {}, time.process_time()
    for regime, instances in relic_envs.splits(NAME).test.items():
        rows = []
        for i, inst in enumerate(instances):
            ep, start_cost = search(inst, moves=moves, index=i, regime=regime)
            rows.append((ep.machine.copy(), ep.start.copy(), float(ep.objective()), start_cost))
            if progress:
                print(f"{regime} {i}: {start_cost:.2f} -> {rows[-1][2]:.2f}", flush=True)
        results[regime] = {f: np.array([r[k] for r in rows]) for k, f in enumerate(FIELDS)}
    meta = {"benchmark": NAME, "split": "test", "method": "offline list-schedule local search", "moves": moves,
            "window": WINDOW, "seed": SEED, "cpu_s": round(time.process_time() - t0, 1)}
    save_results(cache_path(), results, meta)
    return results, meta


def load_cache():
    return load_results(cache_path())


def summary() -> str:
    loaded = load_cache()
    if loaded is None:
        return f"{NAME}: no offline local-search cache; python -m baselines.mas.offline_ls --write"
    results, meta = loaded
    return "\n".join(
        f"{NAME} {regime}: offline list-schedule LS {res['objective'].mean():.2f} ± {res['objective'].std():.2f} "
        f"(start {res['start_objective'].mean():.2f}); {meta['moves']} moves/instance, seed {meta['seed']}, "
        f"{meta['cpu_s']} s CPU in all"
        for regime, res in sorted(results.items(), key=lambda kv: int(kv[0][4:]))
    )


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="offline list-schedule local search reference for MAS-JD")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--moves", type=int, default=MOVES)
    args = ap.parse_args()
    if args.write:
        write_cache(args.moves)
    print(summary())
