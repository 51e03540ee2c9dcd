"""CP-SAT offline references: equal to brute force over every schedule on tiny instances,
and the shipped caches replay to the same objectives through the simulator."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import relic_envs
from baselines.mas.cpsat import load_cache, replay
from relic_envs.mas.fs.generator import FSInstance
from relic_envs.mas.jd.generator import JDInstance
from relic_envs.mas.st import simulator as st_sim
from relic_envs.mas.st.generator import STInstance

MAS = ["mas_jd", "mas_st", "mas_fs"]
N = 4  # jobs of a tiny instance: 4! orders x 3^4 (JD) / 4^4 (ST) assignments, (4!)^3 stage orders (FS)


def tiny(name: str, seed: int):
    """A small, crowded instance (releases in [0, 1], durations in [0.5, 2]), so order matters."""
    rng = np.random.default_rng(seed)
    release = np.sort(rng.uniform(0, 1, N))
    weight = rng.choice(np.array([1.0, 2.0, 3.0, 5.0]), N)
    if name == "mas_jd":
        proc = rng.uniform(0.5, 2.0, N)
        return JDInstance(release=release, proc=proc, due=release + rng.uniform(0.5, 1.5, N) * proc, weight=weight)
    if name == "mas_st":
        duration = rng.uniform(0.5, 2.0, N + 2)[:N]
        skills = np.clip(0.4 + 0.4 * np.eye(3) + rng.normal(0, 0.08, (3, 3)), 0.1, 1.0)
        return STInstance(release=release, category=rng.integers(0, 3, N), duration=duration, value=weight,
                          deadline=release + rng.uniform(1.0, 2.5, N) * duration, skills=skills)
    return FSInstance(release=release, proc=rng.uniform(0.5, 2.0, (N, 3)), weight=weight)


def _semi_active(release, durations, assignment, order):
    """Completion times when resource assignment[j] runs its jobs in ``order``, each as early as possible."""
    free = np.zeros(3)
    end = np.zeros(len(release))
    for j in order:
        k = assignment[j]
        if k < 0:
            continue
        end[j] = max(free[k], release[j]) + durations[k, j]
        free[k] = end[j]
    return end


def brute_force(name: str, inst) -> float:
    """The optimum over every semi-active schedule: each assignment of jobs to resources
    (ST: or to none) and every order (FS: an independent order per stage)."""
    n, orders = inst.n_jobs, list(itertools.permutations(range(inst.n_jobs)))
    if name == "mas_jd":
        dur = np.broadcast_to(inst.proc, (3, n))
        return min(
            float(np.sum(inst.weight * np.maximum(0.0, _semi_active(inst.release, dur, a, o) - inst.due)))
            for a in itertools.product(range(3), repeat=n) for o in orders
        )
    if name == "mas_st":
        dur = st_sim.durations(inst)[:, :, 0]
        best = 0.0
        for a in itertools.product(range(-1, 3), repeat=n):
            for o in orders:
                end = _semi_active(inst.release, dur, a, o)
                best = max(best, float(sum(inst.value[j] for j in range(n) if a[j] >= 0 and end[j] <= inst.deadline[j])))
        return best
    best = np.inf
    for o1 in orders:
        e1 = _semi_active(inst.release, np.broadcast_to(inst.proc[:, 0], (3, n)), [0] * n, o1)
        for o2 in orders:
            e2 = _semi_active(e1, np.broadcast_to(inst.proc[:, 1], (3, n)), [0] * n, o2)
            for o3 in orders:
                e3 = _semi_active(e2, np.broadcast_to(inst.proc[:, 2], (3, n)), [0] * n, o3)
                best = min(best, float(np.sum(inst.weight * e3)))
    return best


@pytest.mark.parametrize("name", MAS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cpsat_equals_brute_force_on_tiny_instances(name, seed):
    pytest.importorskip("ortools")
    from baselines.mas.cpsat import solve_cpsat

    inst = tiny(name, seed)
    best = brute_force(name, inst)
    result = solve_cpsat(name, inst, time_limit=20.0, workers=1)
    assert result.status == "optimal"
    if name == "mas_st":  # a maximisation: the bound is an upper bound
        assert result.objective == pytest.approx(best) and result.bound >= best - 1e-9
    else:
        assert best - 1e-9 <= result.objective <= best + result.slack + 1e-9
        assert result.bound <= best + 1e-9
    # the reported schedule is the simulator's: replaying its sequences gives the same objective
    order = [sorted((j for j in range(inst.n_jobs) if result.machine[j, -1 if name != "mas_fs" else k] == k),
                    key=lambda j: result.start[j, k if name == "mas_fs" else 0]) for k in range(3)]
    assert replay(name, inst, order).objective() == pytest.approx(result.objective)


@pytest.mark.parametrize("seed", range(6))
def test_fs_mean_busy_time_bound_is_a_lower_bound(seed):
    from baselines.mas.cpsat import fs_lower_bound

    inst = tiny("mas_fs", seed)
    trivial = float(np.sum(inst.weight * (inst.release + inst.proc.sum(axis=1))))
    assert trivial - 1e-9 <= fs_lower_bound(inst) <= brute_force("mas_fs", inst) + 1e-9


def test_mean_busy_time_bound_by_hand():
    from baselines.mas.cpsat import _mean_busy_bound

    # job 0: r 0, p 2, w 1; job 1: r 1, p 1, w 3 (ratio 3 > 0.5): 0 runs [0, 1), 1 runs [1, 2),
    # 0 again [2, 3). M_0 = (1 * 0.5 + 1 * 2.5) / 2 = 1.5, M_1 = 1.5.
    # bound = 1 * (1.5 + 1) + 3 * (1.5 + 0.5) = 8.5 <= 10, the optimum (idle, 1 at [1, 2), 0 at [2, 4): 6 + 4)
    assert _mean_busy_bound(np.array([0.0, 1.0]), np.array([2.0, 1.0]), np.array([1.0, 3.0])) == pytest.approx(8.5)


def test_hints_change_the_search_not_the_model():
    pytest.importorskip("ortools")
    from baselines.mas.cpsat import solve_cpsat

    inst = tiny("mas_jd", 0)
    assert solve_cpsat("mas_jd", inst, hint="atc").objective == pytest.approx(solve_cpsat("mas_jd", inst).objective)


def test_solver_rejects_bad_arguments():
    pytest.importorskip("ortools")
    from baselines.mas.cpsat import solve_cpsat

    inst = tiny("mas_jd", 0)
    with pytest.raises(ValueError, match="time_limit must be > 0"):
        solve_cpsat("mas_jd", inst, time_limit=0)
    with pytest.raises(ValueError, match="benchmark in"):
        solve_cpsat("mas_jdd", inst)
    with pytest.raises(ValueError, match="workers must be >= 1"):
        solve_cpsat("mas_jd", inst, workers=0)


@pytest.mark.parametrize("name", MAS)
def test_cached_references_replay_to_their_objectives(name):
    cache = load_cache(name)
    assert cache is not None, f"missing CP-SAT cache for {name}: python -m baselines.mas.cpsat --write {name}"
    bench = relic_envs.get_benchmark(name)
    stage = [bench.problem.stage(k) for k in range(3)]
    for regime, instances in relic_envs.splits(name).test.items():
        res = cache.results[regime]
        assert res["objective"].shape == (len(instances),) == (20,)
        for i, inst in enumerate(instances):
            machine, start = res["machine"][i], res["start"][i]
            order = [sorted((j for j in range(inst.n_jobs) if machine[j, stage[k]] == k), key=lambda j: start[j, stage[k]])
                     for k in range(3)]
            ep = replay(name, inst, order)
            assert ep.objective() == pytest.approx(res["objective"][i], abs=1e-9)
            if bench.minimize:
                assert res["bound"][i] <= res["objective"][i] + 1e-6
            else:
                assert res["bound"][i] >= res["objective"][i] - 1e-6
        assert set(np.unique(res["status"])) <= {"optimal", "feasible"}
    assert cache.meta["time_limit_s"] > 0 and cache.meta["ortools"] and cache.meta["benchmark"] == name


def _crowded_jd(seed: int, n: int = 7) -> JDInstance:
    """Seven jobs released in [0, 0.3] on three machines with due dates just after r_j + p_j:
    someone must wait, so the release bound alone is 0 and the relaxation has work to do."""
    rng = np.random.default_rng(seed)
    release, proc = np.sort(rng.uniform(0, 0.3, n)), rng.uniform(0.5, 2.0, n)
    return JDInstance(release=release, proc=proc, due=release + proc + rng.uniform(0, 0.3, n),
                      weight=rng.choice(np.array([1.0, 2.0, 3.0, 5.0]), n))


def _list_brute_force_jd(inst) -> float:
    """The MAS-JD optimum over every job order, each job on the machine free first: on
    identical machines, listing an optimal schedule's jobs by start time this way starts
    none later, so this is exact (checked against ``brute_force`` below)."""
    best = np.inf
    for order in itertools.permutations(range(inst.n_jobs)):
        free, cost = [0.0, 0.0, 0.0], 0.0
        for j in order:
            k = min(range(3), key=free.__getitem__)
            free[k] = max(free[k], inst.release[j]) + inst.proc[j]
            cost += inst.weight[j] * max(0.0, free[k] - inst.due[j])
        best = min(best, cost)
    return best


def test_list_brute_force_equals_brute_force():
    for seed in (0, 1):
        inst = tiny("mas_jd", seed)
        assert _list_brute_force_jd(inst) == pytest.approx(brute_force("mas_jd", inst))


@pytest.mark.parametrize("seed", range(4))
def test_jd_lower_bound_is_valid_and_beats_the_release_bound(seed):
    from baselines.mas.cpsat import jd_lower_bound

    inst = _crowded_jd(seed)
    release_bound = float(np.sum(inst.weight * np.maximum(0.0, inst.release + inst.proc - inst.due)))
    assert release_bound == 0.0 < jd_lower_bound(inst) <= _list_brute_force_jd(inst) + 1e-9
    tiny_inst = tiny("mas_jd", seed)
    assert jd_lower_bound(tiny_inst) <= brute_force("mas_jd", tiny_inst) + 1e-9
