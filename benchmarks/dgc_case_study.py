"""Why the paper's printed DGC case-study team scores worse than its Table 2 rows.

On the DGC test split: the case-study team's final cost (our objective, after sweep
50), the best cost it reaches during the same 50 sweeps, and the final cost when one
role's program is swapped for our seed.

    python benchmarks/dgc_case_study.py
"""

from __future__ import annotations

import statistics

import relic_envs
from relic_envs.case_studies import case_study_team
from relic_envs.seeds import seed_team


def costs(team: dict, instances) -> tuple[list[float], list[float]]:
    """Final and best-seen cost per instance."""
    bench = relic_envs.get_benchmark("dgc")
    final, best = [], []
    for instance in instances:
        episode = bench.new_episode(instance)
        low = episode.objective()
        while not episode.done:
            invalid = episode.step({r: team[r](episode.observe(r)) for r in bench.roles})
            if invalid is not None:
                raise RuntimeError(f"invalid rollout: {invalid}")
            low = min(low, episode.objective())
        final.append(episode.objective())
        best.append(low)
    return final, best


def _fmt(values: list[float]) -> str:
    return f"{statistics.fmean(values):.2f} ± {statistics.pstdev(values):.2f}"


def main() -> None:
    instances = relic_envs.splits("dgc").test_instances()
    case, seeds = case_study_team("dgc"), seed_team("dgc")
    final, best = costs(case, instances)
    print(f"case study: final {_fmt(final)}, best seen over the sweeps {_fmt(best)}")
    for role in "ABC":
        swapped, _ = costs({**case, role: seeds[role]}, instances)
        print(f"case study with our seed {role}: final {_fmt(swapped)}")


if __name__ == "__main__":
    main()
