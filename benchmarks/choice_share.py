"""Each role's choice share for the seed team on the test splits: the share of the role's
decisions that had two or more valid answers (``python benchmarks/choice_share.py
[--family mas|co|mapp|dcop] [benchmark ...]``; prints markdown tables, asserts nothing).

A *decision* is a call in which the role acts:

- **MAS** (JD, ST, FS): the role's resource is free at a decision epoch. Its valid
  answers are those its ``action_mask`` allows: the jobs of its pool, and ``-1`` (idle)
  except where the mask forbids it (the designated role at a last-chance epoch). The
  second figure, "≥ 2 jobs", counts only calls whose pool held two or more jobs
  (``DispatchEpisode.choices``): a one-job call where idling is allowed has two valid
  answers, but no non-delay team ever idles there.
- **CO** (HMTSP, FSTSP, FJAGV, MRCPS): the pending decision is the role's. Its valid
  answers are the decision's feasible ids, plus ``-1`` where skipping is allowed
  (``Episode.choices / Episode.decisions``).
- **MAPP** (PC, AR, DS): the role's agent is not back home. Its valid answers are those
  its ``action_mask`` allows: the admitted nodes and the depot (always allowed).
- **DCOP** (DGC, DIMES, Sensor-DCSP, SHDS): every role is called at every sweep and
  returns one value per variable it owns; every value of the domain is valid, so a call
  has ``domain ** m`` valid answers (``m`` the role's variables, from its action space):
  counted per instance, without playing the sweeps.

Where a role's share is 0, no answer of that role can change the outcome: every call
has one valid answer. The team is the paper-interface seed team; counts are summed over
every test instance of each size.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import relic_envs
from relic_envs.core.benchmark import ROLES, WAIT
from relic_envs.seeds import seed_team

FAMILIES = {
    "mas": ("mas_jd", "mas_st", "mas_fs"),
    "co": ("hmtsp", "fstsp", "fjagv", "mrcps"),
    "mapp": ("mapp_pc", "mapp_ar", "mapp_ds"),
    "dcop": ("dgc", "dimes", "sensor_dcsp", "shds"),
}


def _count_masks(name: str, instances, counts) -> dict[str, np.ndarray]:
    """Play the seed team; per role, the sum of ``counts(action_mask)`` over its decisions."""
    bench = relic_envs.get_benchmark(name)
    team = seed_team(name)
    out = {r: np.zeros(len(counts(np.ones(2, dtype=np.int8))), dtype=np.int64) for r in ROLES}
    for inst in instances:
        ep = bench.new_episode(inst)
        while not ep.done:
            actions = {}
            for r in ROLES:
                if not ep.acting(r):
                    actions[r] = WAIT
                    continue
                obs = ep.observe(r)
                out[r] += counts(np.asarray(obs["action_mask"]))
                actions[r] = team[r](obs)
            invalid = ep.step(actions)
            if invalid is not None:
                raise RuntimeError(f"{name}: the seed team voided a rollout: {invalid}")
    return out


def _mas(name: str, instances) -> dict[str, np.ndarray]:
    """Per role ``[decisions, with >= 2 valid answers, with >= 2 pool jobs]``."""
    return _count_masks(name, instances, lambda mask: [1, int(mask.sum() >= 2), int(mask[1:].sum() >= 2)])


def _co(name: str, instances) -> dict[str, np.ndarray]:
    bench = relic_envs.get_benchmark(name)
    team = seed_team(name)
    out = {r: np.zeros(2, dtype=np.int64) for r in ROLES}
    for inst in instances:
        ep = bench.new_episode(inst)
        while not ep.done:
            ep.step({r: team[r](ep.observe(r)) if ep.acting(r) else WAIT for r in ROLES})
        for r in ROLES:
            out[r] += [ep.decisions[r], ep.choices[r]]
    return out


def _mapp(name: str, instances) -> dict[str, np.ndarray]:
    """Per role ``[decisions, with >= 2 valid answers]`` (the action mask)."""
    return _count_masks(name, instances, lambda mask: [1, int(mask.sum() >= 2)])


def _dcop(name: str, instances) -> dict[str, np.ndarray]:
    """Per role ``[instances, instances whose calls have >= 2 valid answers]``: the role's
    action space is the same at every sweep, so one count per instance."""
    bench = relic_envs.get_benchmark(name)
    out = {r: np.zeros(2, dtype=np.int64) for r in ROLES}
    for inst in instances:
        for r in ROLES:
            nvec = np.asarray(bench.action_space(r, inst).nvec)
            out[r] += [1, int(nvec.size > 0 and float(np.prod(nvec.astype(float))) >= 2)]
    return out


_COUNT = {"mas": _mas, "co": _co, "mapp": _mapp, "dcop": _dcop}


def table(family: str, names) -> str:
    mas = family == "mas"
    lines = ["| benchmark | size | A | B | C |", "|---|---|---|---|---|"]
    for name in names:
        for regime, instances in relic_envs.splits(name).test.items():
            counts = _COUNT[family](name, instances)
            cells = []
            for r in ROLES:
                c = counts[r]
                if c[0] == 0:
                    cells.append("never asked")
                    continue
                unit = " instances (every sweep alike)" if family == "dcop" else ""
                cell = f"{100 * c[1] / c[0]:.1f}% of {c[0]}{unit}"
                if mas:
                    cell += f" (≥ 2 jobs: {100 * c[2] / c[0]:.1f}%)"
                cells.append(cell)
            lines.append(f"| {name} | {regime} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", choices=list(FAMILIES), action="append")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args(argv)
    families = args.family or list(FAMILIES)
    for family in families:
        names = [n for n in (args.names or FAMILIES[family]) if n in FAMILIES[family]]
        if names:
            print(f"{family}: share of each role's decisions with two or more valid answers, seed team\n")
            print(table(family, names) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
