"""Offline references for MAS-JD and MAS-FS: an iterated greedy search over job orders,
started from every earlier reference (``python -m baselines.mas.offline_ls [--write] [NAME ...]``).

**What it is.** A heuristic, *offline* (clairvoyant) reference: like CP-SAT it knows every
job and release time in advance, which no team of the benchmark does. It is not an
optimum and not a bound: nothing here proves that a better schedule does not exist, so a
team's gap to it says how far the team is from the best schedule this repository found,
no more. Per instance the cached schedule is the best of the search's and of every
earlier reference's (CP-SAT's cached schedule, the MAS-JD list-schedule local search of
issue 38, the seed teams on both interfaces, every classical rule, the classical local
search of ``baselines.mas.local_search``), so it is never worse than any of them;
``source`` says which one it is (``"search"`` for this search's).

**Encodings, and why each contains an optimum.**

- *MAS-JD* (``P3|r_j|sum w_j T_j``): one global job order, decoded by list scheduling on
  the three identical machines: in list order, each job goes to the machine that is free
  first (ties: the lowest index) and starts at ``max(free, r_j)``. Take any optimal
  schedule's jobs in start order: list scheduling starts every job no later, by
  induction on the sorted machine free times, and the objective is regular, so some
  order decodes to an optimum.
- *MAS-FS* (``F3|r_j|sum w_j C_j``, non-permutation): one order per stage, decoded
  semi-actively: stage by stage, each job starts at ``max(its completion at the previous
  stage (its release at stage 1), the stage's previous completion)``. Any set of three
  orders is feasible (every precedence goes from a stage to the next, so there is no
  cycle), and the semi-active schedule of an optimal schedule's three start orders starts
  every operation no later (induction along each order) and is therefore optimal too,
  the objective being regular. The search works mostly in the subspace of *permutation*
  schedules (the same order at every stage), which may not contain an optimum, then
  descends in the full space of three orders, which does.

**Replay.** Every decoded schedule is played through the benchmark's own event simulator
(``baselines.mas.cpsat.replay``: each resource takes the next job of its order as soon as
it is free and the job is in its pool). Every start of these decodings is a release or a
completion, i.e. a decision epoch of the episode, so the replay rebuilds the decoded
schedule exactly (checked to 1e-9 relative); the reported ``objective`` is the episode's.

**Search** (iterated greedy, Ruiz and Stuetzle, "A simple and effective iterated greedy
algorithm for the permutation flowshop scheduling problem", EJOR 177(3), 2007), on the
order (MAS-JD) or the permutation (MAS-FS), deterministic with ``default_rng(SEED)`` per
instance and a budget counted in iterations, not time:

1. *Start*: the best (decoded cost) of the orders read off every earlier reference's
   schedule (start order; MAS-FS: stage-1 and stage-3 start orders) and of simple sorts
   (release order; MAS-JD: EDD; MAS-FS: smallest ``sum_s p_js / w_j`` first).
2. *Descent*: steepest descent in the full insertion neighbourhood (every job to every
   other position, ``N (N - 1)`` moves, all evaluated per step, vectorised over the moves
   with the decoder's prefix states shared), a move taken only when it lowers the cost.
3. *Iterations* (``ITERATIONS``): remove ``DESTROY`` jobs drawn at random, reinsert each
   in turn at its best position of the partial order, descend again (2.); the new local
   optimum replaces the current one when no worse, or with probability
   ``exp(-(new - current) / T)``, ``T = TAU * current / N``. The best order seen is kept.
4. *MAS-FS only*: from the best permutation, steepest descent over the three orders
   separately (every job to every other position in one stage's order; ``3 N (N - 1)``
   moves per step).
"""

from __future__ import annotations

import math
import os
import platform
import time

import numpy as np

from baselines.mas import cpsat
from relic_envs.core.benchmark import ROLES
from relic_envs.core.references import load_results, reference_path, save_results

# the MAS-JD list-schedule local search of issue 38 (``search``): one of the earlier references
MOVES = 20000
WINDOW = 10
SEED = 0
NAME = "mas_jd"
NAMES = ("mas_jd", "mas_fs")
CACHE_NAME = "offline_ls_test.npz"
METHOD = {"mas_jd": "offline list-schedule local search", "mas_fs": "offline flow-shop iterated greedy"}
# the iterated greedy of the module doc, per benchmark
ITERATIONS = {"mas_jd": 600, "mas_fs": 1000}
DESTROY = {"mas_jd": 6, "mas_fs": 8}
TAU = {"mas_jd": 0.1, "mas_fs": 0.02}
FIELDS = ("machine", "start", "objective", "start_objective", "search_objective", "previous", "source",
          "old_objective", "cpsat_objective", "evaluated", "cpu_s")


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



# -- the iterated greedy ----------------------------------------------------------------

_MOVES_INDEX: dict[int, tuple] = {}


def _moves_index(n: int):
    """Every insert move ``(i -> k)`` of an order of length ``n``, sorted by ``min(i, k)``:
    ``(positions (n, M): the old position at each new position of each move, count (n,): the
    moves with min(i, k) <= t, i, k)``. Positions before ``min(i, k)`` are unchanged, so a
    move's decoding starts from the current order's prefix state there."""
    if n not in _MOVES_INDEX:
        i, k = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        keep = i != k
        i, k = i[keep], k[keep]
        lo = np.minimum(i, k)
        order = np.argsort(lo, kind="stable")
        i, k, lo = i[order], k[order], lo[order]
        t, src, dst = np.arange(n)[None, :], i[:, None], k[:, None]
        forward = np.where(t < src, t, np.where(t < dst, t + 1, np.where(t == dst, src, t)))
        backward = np.where(t < dst, t, np.where(t == dst, src, np.where(t <= src, t - 1, t)))
        positions = np.ascontiguousarray(np.where(src < dst, forward, backward).T.astype(np.intp))
        _MOVES_INDEX[n] = (positions, np.searchsorted(lo, np.arange(n), side="right"), i, k)
    return _MOVES_INDEX[n]


def _insert(order: list[int], i: int, k: int) -> list[int]:
    out = list(order)
    out.insert(int(k), out.pop(int(i)))
    return out


class _OrderModel:
    """A decoder of job orders with a prefix state (the last entry the cost so far):
    ``step`` one job on a state tuple, ``vstep`` one job (or one per column) on a
    ``(K, B)`` block of states in place."""

    K = 4

    def prefix(self, order) -> np.ndarray:
        states = np.zeros((len(order) + 1, self.K))
        s = tuple(states[0])
        for t, j in enumerate(order):
            s = self.step(s, j)
            states[t + 1] = s
        return states

    def cost(self, order) -> float:
        s = (0.0,) * self.K
        for j in order:
            s = self.step(s, j)
        return float(s[-1])

    def neighbourhood(self, order):
        """``(cost of every insert move, i, k)``: the whole insertion neighbourhood at once."""
        positions, count, i, k = _moves_index(len(order))
        states = self.prefix(order)
        jobs = np.asarray(order)[positions]
        block = np.empty((self.K, jobs.shape[1]))
        started = 0
        for t in range(len(order)):
            a = count[t]
            if a > started:
                block[:, started:a] = states[t][:, None]
                started = a
            self.vstep(block[:, :a], jobs[t, :a])
        return block[-1], i, k

    def insert_costs(self, order, job) -> np.ndarray:
        """The cost of ``order`` with ``job`` inserted at each position ``0 .. len(order)``."""
        block = np.ascontiguousarray(self.prefix(order).T)
        for t in range(len(order) + 1):
            if t > 0:
                self.vstep(block[:, :t], order[t - 1])
            block[:, t] = self.step(tuple(block[:, t]), job)
        return block[-1].copy()


class _JDList(_OrderModel):
    """MAS-JD list scheduling; the state is the sorted machine free times and the cost (the
    machines are identical, so the cost does not depend on which one of equal free times
    takes the job)."""

    def __init__(self, inst):
        self.r, self.p, self.d, self.w = (np.asarray(a, np.float64).tolist() for a in (inst.release, inst.proc, inst.due, inst.weight))
        self.R, self.P, self.D, self.W = (np.array(x) for x in (self.r, self.p, self.d, self.w))

    def step(self, s, j):
        a, b, c, cost = s
        r = self.r[j]
        e = (a if a > r else r) + self.p[j]
        if e > self.d[j]:
            cost += self.w[j] * (e - self.d[j])
        if e <= b:
            return e, b, c, cost
        if e <= c:
            return b, e, c, cost
        return b, c, e, cost

    def vstep(self, X, J):
        a, b, c, cost = X
        e = np.maximum(a, self.R[J])
        e += self.P[J]
        t = e - self.D[J]
        np.maximum(t, 0.0, out=t)
        t *= self.W[J]
        cost += t
        np.minimum(b, e, out=a)  # the new sorted triple of (b, c, e)
        np.minimum(c, e, out=t)
        np.maximum(c, e, out=c)
        np.maximum(b, t, out=b)


class _FSPermutation(_OrderModel):
    """MAS-FS permutation schedules; the state is each stage's last completion and the cost."""

    def __init__(self, inst):
        p = np.asarray(inst.proc, np.float64)
        self.r = np.asarray(inst.release, np.float64).tolist()
        self.p1, self.p2, self.p3 = (p[:, s].tolist() for s in range(3))
        self.w = np.asarray(inst.weight, np.float64).tolist()
        self.R, self.P1, self.P2, self.P3, self.W = (np.array(x) for x in (self.r, self.p1, self.p2, self.p3, self.w))

    def step(self, s, j):
        c1, c2, c3, cost = s
        r = self.r[j]
        c1 = (c1 if c1 > r else r) + self.p1[j]
        c2 = (c2 if c2 > c1 else c1) + self.p2[j]
        c3 = (c3 if c3 > c2 else c2) + self.p3[j]
        return c1, c2, c3, cost + self.w[j] * c3

    def vstep(self, X, J):
        x1, x2, x3, cost = X
        np.maximum(x1, self.R[J], out=x1)
        x1 += self.P1[J]
        np.maximum(x2, x1, out=x2)
        x2 += self.P2[J]
        np.maximum(x3, x2, out=x3)
        x3 += self.P3[J]
        cost += self.W[J] * x3


class _FSOrders:
    """MAS-FS with one order per stage, decoded semi-actively (module doc)."""

    def __init__(self, inst):
        self.r = np.asarray(inst.release, np.float64)
        self.p = np.asarray(inst.proc, np.float64)
        self.w = np.asarray(inst.weight, np.float64)
        self.n = self.r.shape[0]

    def times(self, orders) -> np.ndarray:
        """``(3, N)`` completion of each job at each stage."""
        C = np.zeros((3, self.n))
        ready = self.r
        for s in range(3):
            c, ps = 0.0, self.p[:, s]
            for j in orders[s]:
                c = max(c, ready[j]) + ps[j]
                C[s, j] = c
            ready = C[s]
        return C

    def cost(self, orders) -> float:
        return float(np.sum(self.w * self.times(orders)[2]))

    def neighbourhood(self, orders, s: int, C: np.ndarray):
        """``(cost of every insert move in stage s's order, i, k)``."""
        n = self.n
        positions, count, i, k = _moves_index(n)
        S = np.asarray(orders[s])
        jobs = S[positions]
        M = jobs.shape[1]
        ready, ps, cols = (self.r if s == 0 else C[s - 1]), self.p[:, s], np.arange(M)
        last = s == 2
        if last:
            done = np.concatenate([[0.0], np.cumsum(self.w[S] * C[2][S])])
            cost = np.empty(M)
        else:
            CT = np.repeat(C[s][:, None], M, axis=1)  # (N, M) completions at stage s per move
        c = np.empty(M)
        started = 0
        for t in range(n):
            a = count[t]
            if a > started:
                c[started:a] = C[s][S[t - 1]] if t > 0 else 0.0
                if last:
                    cost[started:a] = done[t]
                started = a
            J = jobs[t, :a]
            x = c[:a]
            np.maximum(x, ready[J], out=x)
            x += ps[J]
            if last:
                cost[:a] += self.w[J] * x
            else:
                CT[J, cols[:a]] = x
        if last:
            return cost, i, k
        for s2 in range(s + 1, 3):
            p2, c = self.p[:, s2], np.zeros(M)
            if s2 == 2:
                cost = np.zeros(M)
                for j in orders[s2]:
                    np.maximum(c, CT[j], out=c)
                    c += p2[j]
                    cost += self.w[j] * c
            else:
                nxt = np.empty((n, M))
                for j in orders[s2]:
                    np.maximum(c, CT[j], out=c)
                    c += p2[j]
                    nxt[j] = c
                CT = nxt
        return cost, i, k


def _descent(model, order, cost, counter):
    """Steepest descent in the insertion neighbourhood (module doc, step 2)."""
    order = list(order)
    while True:
        costs, i, k = model.neighbourhood(order)
        counter[0] += costs.shape[0]
        q = int(np.argmin(costs))
        if not costs[q] < cost - 1e-9:
            return order, cost
        order, cost = _insert(order, i[q], k[q]), float(costs[q])


def _descent_orders(model: _FSOrders, orders, counter):
    """Steepest descent over the three stage orders separately (module doc, step 4)."""
    orders = [list(o) for o in orders]
    cost = model.cost(orders)
    while True:
        C = model.times(orders)
        best, move = cost - 1e-9, None
        for s in range(3):
            costs, i, k = model.neighbourhood(orders, s, C)
            counter[0] += costs.shape[0]
            q = int(np.argmin(costs))
            if costs[q] < best:
                best, move = float(costs[q]), (s, i[q], k[q])
        if move is None:
            return orders, cost
        s, i, k = move
        orders[s] = _insert(orders[s], i, k)
        cost = best


def iterated_greedy(model, start, *, iterations: int, destroy: int, tau: float, seed: int = SEED):
    """``(best order, its cost, candidate orders evaluated)`` of the iterated greedy (module doc, steps 2-3)."""
    rng = np.random.default_rng(seed)
    counter = [0]
    n = len(start)
    cur, cc = _descent(model, start, model.cost(start), counter)
    best, bc = cur, cc
    for _ in range(iterations):
        order = list(cur)
        removed = [order.pop(int(rng.integers(len(order)))) for _ in range(min(destroy, n - 1))]
        for j in removed:
            costs = model.insert_costs(order, j)
            counter[0] += costs.shape[0]
            order.insert(int(np.argmin(costs)), j)
        order, c = _descent(model, order, model.cost(order), counter)
        if c <= cc or rng.random() < math.exp(-(c - cc) / max(tau * cc / n, 1e-12)):
            cur, cc = order, c
        if c < bc - 1e-9:
            best, bc = order, c
    return best, bc, counter[0]


# -- the earlier references and the starts -----------------------------------------------


def _play(name, instance, team, interface="paper"):
    from relic_envs.core.registry import get_benchmark

    ep = get_benchmark(name).new_episode(instance, interface)
    while not ep.done:
        invalid = ep.step({r: team[r](ep.observe(r)) if ep.acting(r) else -1 for r in ROLES})
        if invalid is not None:  # pragma: no cover - the seed teams and rules are valid on the test splits
            raise RuntimeError(f"{name}: a reference team is invalid: {invalid}")
    return ep


def _stage_orders(start: np.ndarray) -> list[list[int]]:
    """Per operation column of ``start`` (nan = not run), the jobs in start order (ties: id)."""
    n = start.shape[0]
    return [[int(j) for j in np.lexsort((np.arange(n), start[:, s])) if not np.isnan(start[j, s])] for s in range(start.shape[1])]


def previous_references(name: str, instance, index: int, regime: str) -> dict[str, tuple[np.ndarray, np.ndarray, float]]:
    """Every earlier reference's schedule on one test instance: ``label -> (machine, start, objective)``."""
    from baselines.mas import local_search
    from baselines.mas.rules import RULES, rule_team
    from relic_envs.seeds import seed_team

    out = {}

    def add(label, ep):
        out[label] = (ep.machine.copy(), ep.start.copy(), float(ep.objective()))

    cache = cpsat.load_cache(name)
    if cache is not None and regime in cache.results:
        res = cache.results[regime]
        out["cpsat"] = (res["machine"][index].copy(), res["start"][index].copy(), float(res["objective"][index]))
    if name == "mas_jd":
        add("list-ls", search(instance, index=index, regime=regime)[0])
    add("seeds", _play(name, instance, seed_team(name)))
    add("seeds-alt", _play(name, instance, seed_team(name, "alt"), "alt"))
    for rule, table in RULES.items():
        if name in table:
            add(rule, _play(name, instance, rule_team(name, rule)))
    ls = local_search.search(name, instance)
    add("ls", local_search.decode(name, instance, ls.ranks))
    return out


def _simple_orders(name: str, instance) -> list[list[int]]:
    n = instance.n_jobs
    orders = [list(range(n))]  # release order
    if name == "mas_jd":
        orders.append([int(j) for j in np.lexsort((np.arange(n), instance.due))])
    else:
        orders.append([int(j) for j in np.lexsort((np.arange(n), instance.proc.sum(axis=1) / instance.weight))])
    return orders


def sequences(name: str, machine: np.ndarray, start: np.ndarray) -> list[list[int]]:
    """Per resource, the jobs it ran in start order: what ``cpsat.replay`` plays."""
    col = 0 if name == "mas_jd" else None
    seqs = []
    for k in range(len(ROLES)):
        s = col if col is not None else k
        jobs = np.flatnonzero(machine[:, s] == k)
        seqs.append(sorted(jobs.tolist(), key=lambda j: (start[j, s], j)))
    return seqs


def reference(name: str, instance, index: int, regime: str, *, iterations: int | None = None, seed: int = SEED,
              previous: dict | None = None) -> dict:
    """The search on one test instance, and the best of it and ``previous`` (default: every
    earlier reference, :func:`previous_references`). Returns one row of the cache's fields."""
    t0 = time.process_time()
    iterations = ITERATIONS[name] if iterations is None else iterations
    if previous is None:
        previous = previous_references(name, instance, index, regime)
    model = _JDList(instance) if name == "mas_jd" else _FSPermutation(instance)
    starts = _simple_orders(name, instance)
    for _machine, start, _obj in previous.values():
        orders = _stage_orders(start)
        starts += [orders[0]] if name == "mas_jd" else [orders[0], orders[2]]
    starts = [o for o in starts if len(o) == instance.n_jobs]
    costs = [model.cost(o) for o in starts]
    start = starts[int(np.argmin(costs))]
    order, cost, evaluated = iterated_greedy(model, start, iterations=iterations, destroy=DESTROY[name], tau=TAU[name], seed=seed)
    if name == "mas_jd":
        data = (model.r, model.p, model.d, model.w)
        cost, seqs = decode(*data, order)
    else:
        counter = [0]
        seqs, cost = _descent_orders(_FSOrders(instance), [order] * 3, counter)
        evaluated += counter[0]
    ep = cpsat.replay(name, instance, seqs)
    if not math.isclose(ep.objective(), cost, rel_tol=1e-9, abs_tol=1e-9):  # pragma: no cover - module docs
        raise RuntimeError(f"{name}: replay {ep.objective()} differs from the decoded cost {cost}")
    found = float(ep.objective())
    best_label = min(previous, key=lambda lb: previous[lb][2]) if previous else None
    prev = previous[best_label][2] if previous else math.inf
    if found <= prev:
        machine, start_times, objective, source = ep.machine.copy(), ep.start.copy(), found, "search"
    else:
        machine, start_times, objective = previous[best_label]
        source = best_label
    old = previous.get("list-ls" if name == "mas_jd" else "cpsat", (None, None, math.nan))[2]
    return {"machine": machine, "start": start_times, "objective": objective, "start_objective": float(min(costs)),
            "search_objective": found, "previous": prev, "source": source, "old_objective": old,
            "cpsat_objective": previous.get("cpsat", (None, None, math.nan))[2], "evaluated": evaluated,
            "cpu_s": time.process_time() - t0}


# -- the caches --------------------------------------------------------------------------


def cache_path(name: str = NAME):
    """``relic_envs/data/<name>/offline_ls_test.npz``."""
    if name not in NAMES:
        raise ValueError(f"offline references exist for {NAMES}, got {name!r}")
    return reference_path(name, CACHE_NAME)


def machine_note() -> str:
    return (f"{platform.machine()} {platform.processor() or ''}".strip() + f", {os.cpu_count()} cores, load average "
            f"{os.getloadavg()[0]:.1f} at the start (shared), Python {platform.python_version()}, numpy {np.__version__}")


def write_cache(name: str = NAME, iterations: int | None = None, progress: bool = True, path=None):
    """Run :func:`reference` on every canonical test instance of ``name`` and store the rows."""
    import relic_envs

    iterations = ITERATIONS[name] if iterations is None else iterations
    note, results, t0 = machine_note(), {}, time.process_time()
    for regime, instances in relic_envs.splits(name).test.items():
        rows = []
        for i, inst in enumerate(instances):
            rows.append(reference(name, inst, i, regime, iterations=iterations))
            if progress:
                r = rows[-1]
                print(f"{name} {regime} {i}: old {r['old_objective']:.2f}, start {r['start_objective']:.2f} -> "
                      f"search {r['search_objective']:.2f}, kept {r['objective']:.2f} ({r['source']}); "
                      f"{r['cpu_s']:.1f} s CPU", flush=True)
        results[regime] = {f: np.array([r[f] for r in rows]) for f in FIELDS}
    meta = {"benchmark": name, "split": "test", "method": METHOD[name], "design": "iterated greedy (module doc)",
            "moves": iterations, "iterations": iterations, "destroy": DESTROY[name], "tau": TAU[name], "seed": SEED,
            "list_ls_moves": MOVES if name == "mas_jd" else None, "machine": note,
            "cpu_s": round(time.process_time() - t0, 1)}
    save_results(path or cache_path(name), results, meta)
    return results, meta


def load_cache(name: str = NAME):
    """``(results, meta)`` of the cached offline reference of ``name``, or ``None``."""
    return load_results(cache_path(name))


def summary(name: str = NAME) -> str:
    loaded = load_cache(name)
    if loaded is None:
        return f"{name}: no offline reference cache; python -m baselines.mas.offline_ls --write {name}"
    results, meta = loaded
    lines = []
    for regime, res in sorted(results.items(), key=lambda kv: int(kv[0][4:])):
        obj = res["objective"]
        if "old_objective" in res:
            old = res["old_objective"]
            extra = (f"; old reference {old.mean():.2f}, better on {int(np.sum(obj < old - 1e-9))}/{obj.size}; "
                     f"kept from the search on {int(np.sum(res['source'] == 'search'))}/{obj.size}")
        else:
            extra = ""
        method = meta["method"] + (f", {meta['design']}" if "iterated greedy" not in meta["method"] and "design" in meta else "")
        lines.append(f"{name} {regime}: {method} {obj.mean():.2f} ± {obj.std():.2f} (start "
                     f"{res['start_objective'].mean():.2f}{extra}); {meta['moves']} iterations/instance, seed "
                     f"{meta['seed']}, {meta['cpu_s']} s CPU in all")
    return "\n".join(lines)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="offline iterated-greedy references for MAS-JD and MAS-FS")
    ap.add_argument("names", nargs="*", default=list(NAMES))
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--iterations", type=int, default=None, help="iterated-greedy iterations per instance")
    args = ap.parse_args()
    for n in args.names:
        if args.write:
            write_cache(n, args.iterations)
        print(summary(n))
