"""Classical non-delay dispatch rules as teams for the MAS benchmarks.

Every rule is a priority index: whenever a resource is asked, it takes the job of its
pool with the best index (ties: the lowest id), and idles only when its pool is empty.
The same rule runs on all three roles; each role's observation is read for the pool
and its features, whatever its signature calls them.

- ``fifo``: first in, first out, the earliest release (the lowest id); the baseline of
  every dispatching survey (Panwalkar and Iskander, "A survey of scheduling rules",
  Operations Research 25(1), 1977).
- ``edd``: earliest due date (Jackson, "Scheduling a production line to minimize
  maximum tardiness", UCLA Management Science Research Project, Report 43, 1955).
  MAS-ST: earliest deadline.
- ``wspt``: largest ``w_j / p_j`` (Smith, "Various optimizers for single-stage
  production", Naval Research Logistics Quarterly 3(1-2), 1956). MAS-FS: per stage, with
  the stage's processing time.
- ``spt``: shortest processing time (the same paper, unit weights). MAS-FS only.
- ``mslack``: minimum slack ``d_j - p_j - t`` first (Panwalkar and Iskander 1977). MAS-JD only.
- ``atc``: apparent tardiness cost, ``(w_j / p_j) exp(-max(d_j - p_j - t, 0) / (k p_bar))``
  with ``p_bar`` the mean processing time of the pool and look-ahead ``k = 2``
  (Vepsalainen and Morton, "Priority rules for job shops with weighted tardiness
  costs", Management Science 33(8), 1987). MAS-JD only. ``atc:tuned`` uses ``ATC_K_TUNED``,
  the best ``k`` of ``ATC_K_GRID`` on the training split alone (``tune_atc_k``).
- ``value_density``: largest ``v_j / p_eff`` with ``p_eff`` the worker's own time
  (Locke, "Best-effort decision making for real-time scheduling", PhD thesis, CMU,
  1986). MAS-ST only.

MAS-ST rules also come as ``<rule>+skip``: the worker ignores tasks it can no longer
finish by their deadline (``t + p_eff > d_j``: they earn nothing and only consume its
time) and idles when none is left, which MAS-ST allows.

WSRPT (weight over remaining processing time) is not here: the paper interface of
MAS-FS shows a stage only its own processing time ``p_here``, not the downstream stages,
so it cannot be computed from what a role sees.

The shortest-queue rules of the brief do not apply: each MAS-FS stage has one machine,
so there is no queue to choose.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

ATC_K = 2.0
ATC_K_GRID = (0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
ATC_K_TUNED = 0.25  # best of ATC_K_GRID by tune_atc_k(): mean training cost 40.62 (k = 2: 45.53)
EPS = 0.05  # MAS-ST's eps of Eq. mas-st-duration


def _pool(obs: Mapping[str, Any], *keys: str) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, rows)`` of the role's pool from whichever encoded argument holds it."""
    for key in keys:
        if key in obs:
            mask = np.asarray(obs[key]["mask"]).astype(bool)
            return np.flatnonzero(mask), np.asarray(obs[key]["value"])[mask]
    raise KeyError(f"no pool among {keys}")


def _own_skills(obs: Mapping[str, Any]) -> np.ndarray:
    if "my_skills" in obs:
        return np.asarray(obs["my_skills"])
    if "my_state" in obs:
        return np.asarray(obs["my_state"]["skills"])
    return np.asarray(obs["skill_matrix"])[2]  # role C's worker is row 2


def _jd(obs):
    ids, rows = _pool(obs, "job_pool", "job_features")
    if "job_features" in obs and "job_pool" not in obs:
        rows = rows[:, :3]
    return ids, {"p": rows[:, 0], "d": rows[:, 1], "w": rows[:, 2]}


def _st(obs):
    ids, rows = _pool(obs, "task_pool", "task_features")
    if "task_pool" not in obs:
        rows = rows[:, 1:]  # drop the id column of role C
    cats = rows[:, 0].astype(int)
    skill = np.maximum(_own_skills(obs)[cats], EPS)
    return ids, {"p": rows[:, 1] / skill, "v": rows[:, 2], "d": rows[:, 3]}


def _fs(obs):
    ids, rows = _pool(obs, "my_buffer")
    return ids, {"p": rows[:, 0], "w": rows[:, 1]}


def _atc_k(k: float):
    def index(f, t):
        p_bar = float(np.mean(f["p"]))
        return f["w"] / f["p"] * np.exp(-np.maximum(f["d"] - f["p"] - t, 0.0) / (k * p_bar))

    return index


_atc = _atc_k(ATC_K)


def _skip(index):
    """MAS-ST: the same index over the tasks still finishable by their deadline; -inf marks the rest."""

    def skipping(f, t):
        return np.where(t + f["p"] <= f["d"], np.asarray(index(f, t), dtype=float), -np.inf)

    return skipping


# rule -> benchmark -> index (larger is better) from (features, t)
RULES: dict[str, dict[str, Any]] = {
    "fifo": {b: (lambda f, t: -np.arange(len(next(iter(f.values()))), dtype=float)) for b in ("mas_jd", "mas_st", "mas_fs")},
    "edd": {"mas_jd": lambda f, t: -f["d"], "mas_st": lambda f, t: -f["d"]},
    "wspt": {"mas_jd": lambda f, t: f["w"] / f["p"], "mas_fs": lambda f, t: f["w"] / f["p"]},
    "spt": {"mas_fs": lambda f, t: -f["p"]},
    "mslack": {"mas_jd": lambda f, t: -(f["d"] - f["p"] - t)},
    "atc": {"mas_jd": _atc},
    "atc:tuned": {"mas_jd": _atc_k(ATC_K_TUNED)},
    "value_density": {"mas_st": lambda f, t: f["v"] / f["p"]},
}
for _rule in ("fifo", "edd", "value_density"):
    RULES[f"{_rule}+skip"] = {"mas_st": _skip(RULES[_rule]["mas_st"])}
_READ = {"mas_jd": _jd, "mas_st": _st, "mas_fs": _fs}


def _t(obs) -> float:
    if "t_now" in obs:
        return float(obs["t_now"])
    return float(obs["my_busy_until"])  # MAS-FS B has no t_now; it is asked when free, at t_now


def rule_policy(name: str, rule: str):
    """The observation -> action policy of ``rule`` on benchmark ``name`` (any role)."""
    if rule not in RULES or name not in RULES[rule]:
        allowed = sorted(r for r, table in RULES.items() if name in table)
        raise ValueError(f"rule {rule!r} is not defined for {name!r}; allowed: {allowed}")
    return _policy(name, RULES[rule][name])


def _policy(name: str, index):
    """The policy taking the pool job of largest ``index(features, t)``."""
    read = _READ[name]

    def policy(obs: Mapping[str, Any]) -> int:
        ids, features = read(obs)
        if ids.size == 0:
            return -1
        scores = np.asarray(index(features, _t(obs)), dtype=float)
        if not np.isfinite(scores.max(initial=-np.inf)):
            return -1  # a +skip rule with nothing finishable left (MAS-ST allows idling)
        return int(ids[int(np.argmax(scores))])  # argmax: the first best, i.e. the lowest id

    return policy


def rule_team(name: str, rule: str) -> dict[str, Any]:
    """The same rule on roles A, B and C."""
    return {r: rule_policy(name, r_) for r, r_ in (("A", rule), ("B", rule), ("C", rule))}


def tune_atc_k(grid=ATC_K_GRID) -> dict[float, float]:
    """Mean MAS-JD training cost of ATC for each look-ahead ``k`` (training split only)."""
    import relic_envs
    from relic_envs.core.rollout import rollout

    train = [inst for batch in relic_envs.splits("mas_jd").train for inst in batch]
    out = {}
    for k in grid:
        policy = _policy("mas_jd", _atc_k(k))
        out[k] = float(np.mean([r.objective for r in rollout("mas_jd", {r: policy for r in "ABC"}, train)]))
    return out


def measure(names=("mas_jd", "mas_st", "mas_fs")) -> list[tuple[str, str, str, float, float]]:
    """``(benchmark, team, regime, mean, std)`` of the seed teams (paper and alternative
    interface) and every rule on the test splits."""
    import relic_envs
    from relic_envs.core.rollout import rollout
    from relic_envs.seeds import seed_team

    rows = []
    for name in names:
        s = relic_envs.splits(name)
        teams = {"seeds": (seed_team(name), "paper"), "seeds-alt": (seed_team(name, "alt"), "alt")}
        teams.update({rule: (rule_team(name, rule), "paper") for rule, table in RULES.items() if name in table})
        for label, (team, interface) in teams.items():
            for regime, instances in s.test.items():
                results = rollout(name, team, instances, interface=interface)
                if not all(r.valid for r in results):
                    raise RuntimeError(f"{name} {label}: invalid rollouts {[r.invalid for r in results if not r.valid]}")
                values = np.array([r.objective for r in results])
                rows.append((name, label, regime, float(values.mean()), float(values.std())))
    return rows


if __name__ == "__main__":  # python -m baselines.mas.rules
    for name, label, regime, mean, std in measure():
        print(f"{name:7s} {label:14s} {regime:7s} {mean:10.2f} ± {std:8.2f}")
