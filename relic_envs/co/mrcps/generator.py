"""MRCPS instances and the paper's generator (Appendix B.3, "Instance generation").

Five approximately equal-sized projects (contiguous blocks of task ids, sizes from
``np.array_split``: they differ by at most one), four skills, ten workers. Task
durations are uniform integers 3..17, required skills uniform over the four. Tasks of
a project form a precedence chain in id order; every earlier non-immediate task of
the same project is an extra predecessor with probability 0.08. Worker skill levels
are uniform integers 0..3; a skill nobody holds is given to one uniformly drawn worker
at a level uniform in 1..3 (the repair). Worker cost rates are ``U[1, 3]``. A
project's due date is its *estimated two-worker load*, ``sum_i a_i / 2`` over its
tasks (nominal durations, i.e. level-2 speed, shared by two workers in parallel),
times a factor ``U[0.9, 1.5]``; weights are uniform integers 1..5.

Training: five batches of ten 50-task instances (one regime, five seeds: the paper
names no per-batch change); test: 20 instances at each of 100 and 200 tasks.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from relic_envs.core.instance import Instance, check_array, check_range
from relic_envs.errors import InvalidInstance

TRAIN_N, TEST_NS = 50, (100, 200)
PROJECTS, SKILLS, WORKERS = 5, 4, 10
DURATION = (3, 17)  # inclusive
LEVEL_MAX = 3
EXTRA_PRED_P = 0.08
COST = (1.0, 3.0)
DUE_FACTOR = (0.9, 1.5)
WEIGHT = (1, 5)  # inclusive
LOAD_WORKERS = 2  # the "two-worker load"


@dataclasses.dataclass(frozen=True)
class MRCPSRegime:
    n_tasks: int


REGIMES = {f"train{b}": MRCPSRegime(TRAIN_N) for b in range(1, 6)}
REGIMES.update({f"test{n}": MRCPSRegime(n) for n in TEST_NS})


@dataclasses.dataclass(frozen=True)
class MRCPSInstance(Instance):
    """Tasks of several projects with precedences and skills; multi-skilled workers."""

    kind = "mrcps"
    project: np.ndarray  # (N,) int64 in 0..P-1: project p(i) of task i
    duration: np.ndarray  # (N,) int64 >= 1: nominal duration a_i
    skill: np.ndarray  # (N,) int64 in 0..S-1: required skill c(i)
    pred: np.ndarray  # (N, N) bool: pred[i, j] iff task j must complete before task i starts (j < i)
    level: np.ndarray  # (W, S) int64 in 0..3: skill level s_{w,c}; qualified iff > 0
    cost: np.ndarray  # (W,) float64 > 0: worker cost rate kappa_w
    due: np.ndarray  # (P,) float64 >= 0: project due date d_p
    weight: np.ndarray  # (P,) int64 >= 1: project weight w_p

    def validate(self) -> None:
        check_array("project", self.project, (None,), "iu")
        n = self.n_tasks
        if n < 1:
            raise InvalidInstance("field 'project' needs at least one task")
        check_array("due", self.due, (None,), "f")
        p = self.n_projects
        check_range("project", self.project, 0, p - 1)
        check_array("duration", self.duration, (n,), "iu")
        check_range("duration", self.duration, 1, np.inf)
        check_array("level", self.level, (None, None), "iu")
        w, s = self.level.shape
        if w < 1 or s < 1:
            raise InvalidInstance(f"field 'level' needs at least one worker and one skill, got shape {self.level.shape}")
        check_range("level", self.level, 0, LEVEL_MAX)
        check_array("skill", self.skill, (n,), "iu")
        check_range("skill", self.skill, 0, s - 1)
        check_array("pred", self.pred, (n, n), "b")
        if np.triu(self.pred).any():
            raise InvalidInstance("field 'pred' must be strictly lower triangular (a predecessor has a smaller id)")
        check_array("cost", self.cost, (w,), "f")
        check_range("cost", self.cost, 0.0, np.inf)
        if not np.all(self.cost > 0):
            raise InvalidInstance("field 'cost' must be positive")
        check_range("due", self.due, 0.0, np.inf)
        check_array("weight", self.weight, (p,), "iu")
        check_range("weight", self.weight, 1, np.inf)
        unqualified = sorted({int(c) for c in self.skill if not (self.level[:, c] > 0).any()})
        if unqualified:
            raise InvalidInstance(f"field 'level': no worker is qualified for required skill(s) {unqualified}")

    @property
    def n_tasks(self) -> int:
        return int(self.project.shape[0])

    @property
    def n_projects(self) -> int:
        return int(self.due.shape[0])

    @property
    def n_workers(self) -> int:
        return int(self.level.shape[0])

    def successors(self) -> np.ndarray:
        """``(N,)`` int64: number of direct successors of each task (chain and extra arcs)."""
        return self.pred.sum(axis=0).astype(np.int64)


def generate(regime: MRCPSRegime, rng: np.random.Generator) -> MRCPSInstance:
    n = regime.n_tasks
    project = np.concatenate([np.full(len(b), k) for k, b in enumerate(np.array_split(np.arange(n), PROJECTS))])
    duration = rng.integers(DURATION[0], DURATION[1] + 1, n)
    skill = rng.integers(0, SKILLS, n)
    same = project[:, None] == project[None, :]
    lower = np.tril(np.ones((n, n), dtype=bool), -1)
    chain = np.eye(n, k=-1, dtype=bool) & same
    extra = rng.uniform(0.0, 1.0, (n, n)) < EXTRA_PRED_P
    pred = chain | (extra & same & lower & ~np.eye(n, k=-1, dtype=bool))
    level = rng.integers(0, LEVEL_MAX + 1, (WORKERS, SKILLS))
    for c in range(SKILLS):  # the repair: every skill has a qualified worker
        if not (level[:, c] > 0).any():
            level[int(rng.integers(WORKERS)), c] = int(rng.integers(1, LEVEL_MAX + 1))
    cost = rng.uniform(*COST, WORKERS)
    load = np.bincount(project, weights=duration.astype(np.float64), minlength=PROJECTS) / LOAD_WORKERS
    due = load * rng.uniform(*DUE_FACTOR, PROJECTS)
    weight = rng.integers(WEIGHT[0], WEIGHT[1] + 1, PROJECTS)
    return MRCPSInstance(
        project=project.astype(np.int64), duration=duration.astype(np.int64), skill=skill.astype(np.int64), pred=pred,
        level=level.astype(np.int64), cost=cost, due=due, weight=weight.astype(np.int64),
    )
