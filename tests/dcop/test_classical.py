"""MGM, MGM-2, DSA and Max-Sum: the properties their authors' definitions guarantee."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relic_envs
from baselines.dcop.dsa import DSA
from baselines.dcop.maxsum import MaxSum, pairwise_cost
from baselines.dcop.mgm import MGM, MGM2
from baselines.dcop.sweep import CentralTeam, run_sweeps
from relic_envs.dcop.dgc.generator import DGCInstance
from relic_envs.errors import InvalidConfig
from tests.dcop.small import DCOPS, small

SEEDS = st.integers(0, 2**32 - 1)


def problem(name):
    return relic_envs.get_benchmark(name).problem


@settings(max_examples=12, deadline=None)
@given(SEEDS, st.sampled_from(DCOPS))
def test_mgm_never_increases_the_global_cost(seed, name):
    inst = small(name, seed)
    (trace,) = run_sweeps(name, MGM(), [inst], sweeps=15)
    assert np.all(np.diff(trace.costs) <= 1e-9 * (1 + trace.costs[:-1]))
    # ... and it is not standing still: a start that is not a local optimum improves at once.
    p = problem(name)
    delta = p.landscape(inst, inst.x0)
    if np.any(delta[np.arange(delta.shape[0]), inst.x0] - delta.min(axis=1) > 1e-9):
        assert trace.costs[1] < trace.costs[0]


@settings(max_examples=6, deadline=None)
@given(SEEDS, st.sampled_from(DCOPS), st.sampled_from([0.3, 0.5, 0.9]))
def test_mgm2_never_increases_the_global_cost(seed, name, q):
    inst = small(name, seed)
    (trace,) = run_sweeps(name, MGM2(q), [inst], sweeps=8)
    assert np.all(np.diff(trace.costs) <= 1e-9 * (1 + trace.costs[:-1]))


@settings(max_examples=10, deadline=None)
@given(SEEDS, st.sampled_from(DCOPS), st.floats(0.05, 1.0))
def test_dsa_a_moves_a_variable_only_for_a_strict_local_gain(seed, name, p):
    inst = small(name, seed)
    prob, solver = problem(name), DSA(p=p, variant="A")
    state = solver.start(prob, inst)
    x = inst.x0.copy()
    for t in range(10):
        new = solver.sweep(state, x, t)
        delta = prob.landscape(inst, x)
        moved = np.flatnonzero(new != x)
        assert np.all(delta[moved, new[moved]] < delta[moved, x[moved]])
        x = new


@settings(max_examples=10, deadline=None)
@given(SEEDS, st.sampled_from(DCOPS))
def test_coupled_lists_every_pair_that_shares_a_cost_term(seed, name):
    """Moving ``j`` changes no landscape row of a variable not coupled to it (what makes MGM monotone)."""
    inst = small(name, seed)
    prob = problem(name)
    rng = np.random.default_rng(seed)
    n = prob.n_vars(inst)
    x = rng.integers(0, prob.domain, size=n)
    coupled = np.zeros((n, n), dtype=bool)
    pairs = prob.coupled(inst)
    coupled[pairs[:, 0], pairs[:, 1]] = coupled[pairs[:, 1], pairs[:, 0]] = True
    base = prob.landscape(inst, x)
    for j in rng.choice(n, size=4, replace=False):
        y = x.copy()
        y[j] = (x[j] + 1 + rng.integers(prob.domain - 1)) % prob.domain
        changed = np.any(np.abs(prob.landscape(inst, y) - base) > 1e-9, axis=1)
        changed[j] = False
        assert not np.any(changed & ~coupled[j])


def _tree_dgc(seed: int, n: int = 10) -> DGCInstance:
    rng = np.random.default_rng(seed)
    parent = [int(rng.integers(0, i)) for i in range(1, n)]
    edges = np.array([[p, i] for i, p in zip(range(1, n), parent)], dtype=np.int64)
    weights = rng.integers(1, 101, size=n - 1).astype(np.int64)
    return DGCInstance(edges, weights, rng.integers(0, 3, size=n), np.arange(n, dtype=np.int8) % 3, int(rng.integers(2**32)))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("damping", [0.0, 0.5])
def test_maxsum_reaches_the_brute_force_optimum_on_a_tree_dgc(seed, damping):
    inst = _tree_dgc(seed)
    prob = problem("dgc")
    best = min(prob.cost(inst, np.array(x)) for x in itertools.product(range(3), repeat=10))
    (trace,) = run_sweeps("dgc", MaxSum(damping=damping), [inst])
    assert trace.final == best  # a tree is 3-colourable: 0, which plain DSA/MGM need not reach


@dataclasses.dataclass(frozen=True)
class _TreeInstance:
    edges: np.ndarray
    unary: np.ndarray
    table: np.ndarray
    x0: np.ndarray
    seed: int


class _TreeProblem:
    """A pairwise cost with random unary and pairwise tables on a tree (optimum rarely 0)."""

    name, domain = "tree", 3

    def n_vars(self, inst):
        return inst.x0.size

    def cost(self, inst, x):
        a, b = inst.edges[:, 0], inst.edges[:, 1]
        return float(inst.unary[np.arange(x.size), x].sum() + inst.table[np.arange(len(a)), x[a], x[b]].sum())

    def landscape(self, inst, x):
        out = np.empty((x.size, self.domain))
        for i in range(x.size):
            for v in range(self.domain):
                y = x.copy()
                y[i] = v
                out[i, v] = self.cost(inst, y)
        return out

    def coupled(self, inst):
        return inst.edges


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_maxsum_reaches_the_brute_force_optimum_on_a_weighted_tree(seed):
    rng = np.random.default_rng(seed)
    n = 9
    edges = np.array([[int(rng.integers(0, i)), i] for i in range(1, n)])
    inst = _TreeInstance(edges, rng.random((n, 3)) * 10, rng.random((n - 1, 3, 3)) * 10, np.zeros(n, dtype=np.int64), seed)
    prob = _TreeProblem()
    best = min(prob.cost(inst, np.array(x)) for x in itertools.product(range(3), repeat=n))
    solver = MaxSum(damping=0.5, noise=0.0)
    state = solver.start(prob, inst)
    x = inst.x0
    for t in range(50):
        x = solver.sweep(state, x, t)
    assert best > 0 and prob.cost(inst, x) == pytest.approx(best)
    model = pairwise_cost(prob, inst)
    assert model(x) == pytest.approx(prob.cost(inst, x))


def test_maxsum_refuses_a_cost_that_is_not_pairwise():
    inst = small("dimes", 0)
    with pytest.raises(InvalidConfig, match="pairwise"):
        MaxSum().start(problem("dimes"), inst)


def test_bad_settings_are_refused_with_the_allowed_values():
    with pytest.raises(InvalidConfig, match=r"q must lie in \[0, 1\]"):
        MGM2(q=1.5)
    with pytest.raises(InvalidConfig, match=r"damping must lie in \[0, 1\)"):
        MaxSum(damping=1.0)
    with pytest.raises(ValueError, match="unknown benchmark 'dgcc'"):
        run_sweeps("dgcc", MGM(), [])


@pytest.mark.parametrize(
    "name,solver",
    [("dgc", MGM()), ("shds", MGM()), ("sensor_dcsp", MGM2(0.5)), ("dgc", MaxSum()), ("dimes", DSA(0.3, "C"))],
    ids=lambda v: getattr(v, "label", v),
)
def test_central_team_in_the_env_equals_the_batch_solver(name, solver):
    instances = relic_envs.splits(name).test_instances()[:2]
    traces = run_sweeps(name, solver, instances)
    results = relic_envs.rollout(name, CentralTeam(name, solver), instances)
    assert [r.objective for r in results] == pytest.approx([t.final for t in traces])
    assert [t.final for t in run_sweeps(name, solver, instances)] == [t.final for t in traces]  # deterministic


def test_dsa_solver_equals_its_decentralised_team():
    from baselines.dcop import solve_dsa

    instances = relic_envs.splits("sensor_dcsp").test_instances()[:3]
    for variant in "ABC":
        traces = run_sweeps("sensor_dcsp", DSA(0.4, variant), instances)
        team = solve_dsa("sensor_dcsp", instances, p=0.4, variant=variant)
        assert [r.objective for r in team] == pytest.approx([t.final for t in traces])
