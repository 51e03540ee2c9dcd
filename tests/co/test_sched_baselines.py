"""Classical scheduling comparators and CP-SAT references (baselines/co/sched_*): rows that
play in the env reproduce their own objective there, the local searches, the serial scheme's
feasibility, CP-SAT against brute force on tiny instances, and the caches."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import relic_envs
from baselines.co import sched_fjagv as F
from baselines.co import sched_mrcps as M
from relic_envs.co.fjagv import simulator as fsim
from relic_envs.co.fjagv.generator import FJAGVInstance
from relic_envs.co.mrcps import simulator as msim
from relic_envs.co.mrcps.generator import MRCPSInstance


@pytest.fixture(scope="module")
def fjagv_train():
    return relic_envs.splits("fjagv").train[0][:2]


@pytest.fixture(scope="module")
def mrcps_train():
    return relic_envs.splits("mrcps").train[0][:2]


# -- rows as teams of the env -----------------------------------------------------------
@pytest.mark.parametrize("method", ["ef-atc-nearest", "spt-mst-fcfs"])
def test_fjagv_team_reproduces_its_objective_in_the_env(fjagv_train, method):
    results = relic_envs.rollout("fjagv", F.team(method), fjagv_train)
    for inst, res in zip(fjagv_train, results):
        assert res.valid and not any(res.info["repairs"].values())
        assert res.objective == pytest.approx(F.run(inst, method)[0], abs=1e-9)


@pytest.mark.parametrize("method", ["par-lft-speed", "par-mts-cost"])
def test_mrcps_team_reproduces_its_objective_in_the_env(mrcps_train, method):
    results = relic_envs.rollout("mrcps", M.team(method), mrcps_train)
    for inst, res in zip(mrcps_train, results):
        assert res.valid and not any(res.info["repairs"].values())
        assert res.objective == pytest.approx(M.run(inst, method)[0], abs=1e-9)


def test_rules_differ_and_names_are_checked(fjagv_train):
    inst = fjagv_train[0]
    costs = {m: F.run(inst, m)[0] for m in ("ef-spt-nearest", "ef-edd-nearest", "ef-atc-nearest")}
    assert len(set(costs.values())) == 3  # the sequencing rule matters
    with pytest.raises(relic_envs.errors.InvalidConfig):
        F.team("ef-fifo-nearest")
    with pytest.raises(relic_envs.errors.InvalidConfig):
        M.team("ser-lft-speed")  # serial schedules do not play in the env


def test_fjagv_lower_bound_holds_against_every_rule(fjagv_train):
    from baselines.co.sched_cpsat import fjagv_lower_bound

    for inst in fjagv_train:
        assert 0 < fjagv_lower_bound(inst) <= min(F.run(inst, m)[0] for m in F.METHODS[::3])


def test_fjagv_atc_picks_by_hand():
    """One machine, two delivered operations at t = 0: ATC takes the urgent heavy job."""
    proc = np.array([[[10]], [[4]]])  # job 0: 10, job 1: 4, one operation each, one machine
    inst = FJAGVInstance(proc=proc, due=np.array([12.0, 100.0]), weight=np.array([5, 1]),
                         locations=np.zeros((2, 2)), n_agvs=2)
    state = fsim.State(inst)
    while state.role != fsim.ROLE_B:
        state.apply(state.decision().fallback)
    d = state.decision()
    assert d.ids.tolist() == [0, 1]
    # ATC: job 0 (5/10) exp(-max(12-0-10, 0)/(2*7)) = 0.433 > job 1 (1/4) exp(-96/14) = 0.0003
    assert F.chooser(inst, "ef-atc-nearest")(state, d) == 0
    assert F.chooser(inst, "ef-spt-nearest")(state, d) == 1


def test_local_searches_improve_or_keep_and_are_deterministic(fjagv_train, mrcps_train):
    f, m = fjagv_train[0], mrcps_train[0]
    base_f, base_m = F.run(f, "spt-atc-nearest")[0], M.run(m, "par-mslk-speed")[0]
    ls_f, ls_m = F.local_search(f, "spt-atc-nearest", budget=6)[0], M.local_search(m, "par-mslk-speed", budget=12)[0]
    assert ls_f <= base_f and ls_m <= base_m
    assert F.local_search(f, "spt-atc-nearest", budget=6)[0] == ls_f
    cost, choices = M.local_search(m, "par-mslk-speed", budget=12)
    results = relic_envs.rollout("mrcps", M.PlanTeam(lambda inst: choices), [m])
    assert results[0].objective == pytest.approx(cost, abs=1e-9)


def test_serial_schedules_are_feasible_and_check_schedule_catches_overlap(mrcps_train):
    inst = mrcps_train[0]
    for method in ("ser-lft-speed", "ser-mslk-cost"):
        cost, sched = M.run(inst, method)
        M.check_schedule(inst, sched.worker, sched.start)
        assert cost == pytest.approx(msim.cost(inst, sched.worker, sched.start), abs=1e-9)
    worker, start = sched.worker.copy(), sched.start.copy()
    first_two = np.flatnonzero(worker == worker[0])[:2]
    start[first_two] = 0.0
    with pytest.raises(ValueError):
        M.check_schedule(inst, worker, start)


# -- brute force on tiny instances --------------------------------------------------------
def mrcps_tiny(seed: int) -> MRCPSInstance:
    rng = np.random.default_rng(seed)
    n, w, s = 4, 3, 2
    level = rng.integers(0, 4, (w, s))
    level[0] = np.maximum(level[0], 1)  # every skill has a qualified worker
    pred = np.zeros((n, n), dtype=bool)
    pred[1, 0] = pred[3, 2] = True  # two projects, chains 0 -> 1 and 2 -> 3
    return MRCPSInstance(project=np.array([0, 0, 1, 1]), duration=rng.integers(3, 10, n), skill=rng.integers(0, s, n),
                         pred=pred, level=level, cost=rng.uniform(1, 3, w), due=rng.uniform(5, 15, 2),
                         weight=rng.integers(1, 6, 2))


def mrcps_brute_force(inst: MRCPSInstance) -> float:
    """min cost over every worker assignment and every precedence-feasible task list, each
    task placed at its earliest gap on its worker: every active schedule (optimal for this
    regular objective) is among them."""
    n, best = inst.n_tasks, np.inf
    qualified = [np.flatnonzero(inst.level[:, inst.skill[i]] > 0).tolist() for i in range(n)]
    for workers in itertools.product(*qualified):
        span = [inst.duration[i] / msim.speed(inst.level[workers[i], inst.skill[i]]) for i in range(n)]
        for order in itertools.permutations(range(n)):
            pos = {t: k for k, t in enumerate(order)}
            if any(pos[j] > pos[i] for i, j in zip(*np.nonzero(inst.pred))):
                continue
            start, finish, busy = np.zeros(n), np.zeros(n), {w: [] for w in set(workers)}
            for i in order:
                s = max([finish[j] for j in np.flatnonzero(inst.pred[i])], default=0.0)
                for b0, b1 in sorted(busy[workers[i]]):
                    if s + span[i] <= b0 + 1e-12:
                        break
                    s = max(s, b1)
                start[i], finish[i] = s, s + span[i]
                busy[workers[i]].append((s, s + span[i]))
            best = min(best, msim.cost(inst, np.array(workers), start))
    return best


def fjagv_tiny(seed: int, agvs: int) -> FJAGVInstance:
    rng = np.random.default_rng(seed)
    proc = rng.integers(2, 9, (2, 2, 2))  # two jobs of two operations, both machines eligible
    proc[rng.random((2, 2, 2)) < 0.2] = 0
    proc[..., 0] = np.where((proc > 0).any(axis=2), proc[..., 0], 5)
    return FJAGVInstance(proc=proc, due=rng.uniform(6, 20, 2), weight=rng.integers(1, 6, 2),
                         locations=rng.uniform(0, 1, (3, 2)), n_agvs=agvs)


def _ordered_splits(items: list[int], parts: int):
    """Every way to deal ``items`` to ``parts`` labelled sequences (each in an order)."""
    for owner in itertools.product(range(parts), repeat=len(items)):
        groups = [[t for t, o in zip(items, owner) if o == a] for a in range(parts)]
        yield from itertools.product(*(itertools.permutations(g) for g in groups))


def fjagv_brute_force(inst: FJAGVInstance) -> float:
    """min cost over every machine assignment, machine order, AGV assignment and AGV order,
    each timed semi-actively (departure when ready and the AGV is back, deadhead then
    loaded travel, start when delivered and the machine free; cyclic orders skipped)."""
    n, k, nm = inst.n_operations, inst.n_ops_per_job, inst.n_machines
    pt, tt, best = inst.op_times(), inst.travel(), np.inf
    for machine in itertools.product(*[np.flatnonzero(pt[i]).tolist() for i in range(n)]):
        src = [0 if i % k == 0 else machine[i - 1] + 1 for i in range(n)]
        trips = [i for i in range(n) if src[i] != machine[i] + 1]
        per_machine = [itertools.permutations([i for i in range(n) if machine[i] == q]) for q in range(nm)]
        for m_orders in itertools.product(*per_machine):
            for a_orders in _ordered_splits(trips, inst.n_agvs):
                value = _fjagv_time(inst, machine, src, trips, m_orders, a_orders, pt, tt)
                best = min(best, value)
    return best


def _fjagv_time(inst, machine, src, trips, m_orders, a_orders, pt, tt) -> float:
    n, k = inst.n_operations, inst.n_ops_per_job
    dep, deliv, start, finish = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    travel = 0.0
    for _ in range(4 * n + 2):  # longest path by relaxation; still changing after that: a cycle
        changed, travel = False, 0.0
        for seq in a_orders:
            pos, free = 0, 0.0
            for i in seq:
                ready = 0.0 if i % k == 0 else finish[i - 1]
                d = max(ready, free)
                arrive = d + tt[pos, src[i]] + tt[src[i], machine[i] + 1]
                travel += tt[pos, src[i]] + tt[src[i], machine[i] + 1]
                changed |= arrive != deliv[i]
                dep[i], deliv[i], free, pos = d, arrive, arrive, machine[i] + 1
        for seq in m_orders:
            free = 0.0
            for i in seq:
                ready = 0.0 if i % k == 0 else finish[i - 1]
                s = max(deliv[i] if i in trips else ready, free)
                changed |= s != start[i]
                start[i], finish[i], free = s, s + pt[i, machine[i]], s + pt[i, machine[i]]
        if not changed:
            return fsim.cost(inst, finish, travel)
    return np.inf


@pytest.mark.parametrize("seed", [0, 3])  # seed 3: no rule of sched_mrcps is optimal
def test_mrcps_cpsat_equals_brute_force(seed):
    pytest.importorskip("ortools")
    from baselines.co.sched_cpsat import MRCPS_UNIT, solve_mrcps

    inst = mrcps_tiny(seed)
    brute = mrcps_brute_force(inst)
    res = solve_mrcps(inst, time_limit=20.0)
    slack = float(inst.weight.sum()) / MRCPS_UNIT + 1e-6  # due dates rounded up by < 1/391 (module doc)
    assert res.status == "optimal"
    assert brute - 1e-9 <= res.objective <= brute + slack
    assert res.bound <= brute + 1e-9 and res.model_objective <= brute + 1e-9
    if seed == 3:
        assert min(M.run(inst, m)[0] for m in M.METHODS) > brute + 0.01  # the search space is larger than the rules'


@pytest.mark.parametrize("seed,agvs", [(1, 1), (6, 2), (7, 2)])  # instances where no dispatch rule is optimal
def test_fjagv_cpsat_exact_equals_brute_force_and_relaxation_bounds_it(seed, agvs):
    pytest.importorskip("ortools")
    from baselines.co.sched_cpsat import fjagv_lower_bound, solve_fjagv

    inst = fjagv_tiny(seed, agvs)
    brute = fjagv_brute_force(inst)
    exact = solve_fjagv(inst, exact=True, time_limit=20.0)
    assert exact.status == "optimal"
    assert brute - 1e-9 <= exact.objective <= brute + 0.05  # travel rounded down by < 1e-3 per leg
    assert exact.bound <= brute + 1e-9
    assert fjagv_lower_bound(inst) <= brute + 1e-9
    relaxed = solve_fjagv(inst, exact=False, time_limit=20.0)
    assert relaxed.bound <= brute + 1e-9 and relaxed.objective >= brute - 1e-9
    assert min(F.run(inst, m)[0] for m in F.METHODS) > brute + 0.01  # the search space is larger than the rules'


# -- the caches ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["fjagv", "mrcps"])
def test_cached_objectives_equal_the_simulator(name):
    from baselines.co.sched_cpsat import load_cache

    cache = load_cache(name)
    if cache is None:
        pytest.skip(f"no cached CP-SAT results for {name}")
    test = relic_envs.splits(name).test
    assert sorted(cache.results) == sorted(test)
    for regime, instances in test.items():
        res = cache.results[regime]
        assert res["objective"].shape == (len(instances),)
        assert (res["bound"] <= res["objective"] + 1e-6).all()
        for i, inst in enumerate(instances):
            machine, start = res["machine"][i], res["start"][i]
            if name == "mrcps":
                M.check_schedule(inst, machine, start)
                value = msim.cost(inst, machine, start)
            else:
                finish = start + inst.op_times()[np.arange(inst.n_operations), machine]
                value = fsim.cost(inst, finish, float(res["travel"][i]))
            assert value == pytest.approx(float(res["objective"][i]), abs=1e-6)
