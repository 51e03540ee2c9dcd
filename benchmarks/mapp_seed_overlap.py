"""How often the MAPP seed teams send two or more agents to the same node.

Counts, over a test split, the steps at which at least two agents move (return a
non-depot node) and, among them, those where two moving agents pick the same node.

    python benchmarks/mapp_seed_overlap.py [--split test50] [--interface paper]
"""

from __future__ import annotations

import argparse

import relic_envs
from relic_envs.seeds import seed_team


def overlap(name: str, split: str, interface: str) -> tuple[int, int]:
    bench = relic_envs.get_benchmark(name)
    team = seed_team(name, interface)
    same = total = 0
    for instance in relic_envs.splits(name).test_instances(split):
        episode = bench.new_episode(instance, interface)
        while not episode.done:
            actions = {r: team[r](episode.observe(r)) for r in bench.roles}
            moving = [v for v in actions.values() if v != 0]
            if len(moving) > 1:
                total += 1
                same += len(set(moving)) < len(moving)
            episode.step(actions)
    return same, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="test50", choices=["test50", "test80"])
    parser.add_argument("--interface", default="paper", choices=["paper", "alt"])
    args = parser.parse_args()
    for name in ("mapp_pc", "mapp_ar", "mapp_ds"):
        same, total = overlap(name, args.split, args.interface)
        print(f"{name}: {same} of {total} steps with two or more moving agents pick a node twice ({100 * same / total:.0f}%)")


if __name__ == "__main__":
    main()
