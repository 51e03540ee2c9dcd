"""Write the rendered frames and animations shown in docs/benchmarks/*.md and docs/results/{mas,co}.md.

For every built benchmark: the seed team on the first instance of its (first, smaller)
test split, as ``docs/images/render/<name>.png``: the frame halfway through the
episode for MAPP and DCOP (routes and assignments in motion), the last frame for MAS
and CO (the finished schedule or routes). Then one animation per family
(``mapp_pc.gif``, ``dgc.gif``), every step of the same episode. Then, for the results
pages, the finished episode of the seed team and of the best classical team that plays
in the env on the same instance, ``<name>_seed.png`` and ``<name>_classical.png``
(:data:`CLASSICAL`). Deterministic: running it again rewrites the same pictures.

    python docs/make_render_images.py            # writes into docs/images/render/
    python docs/make_render_images.py --out DIR  # somewhere else
"""

from __future__ import annotations

import argparse
from pathlib import Path

import relic_envs
from relic_envs.core.registry import get_benchmark, spec
from relic_envs.core.render import (
    FAMILY_MODULES,
    episode_frames,
    final_frame,
    render_frame,
    save_animation,
    save_frame,
)
from relic_envs.seeds import seed_team

OUT = Path(__file__).resolve().parent / "images" / "render"
ANIMATIONS = {"mapp_pc": {"fps": 2}, "dgc": {"fps": 5}}  # benchmark -> save_animation keywords
GIF_SIZE = (560, 420)  # smaller than the PNGs: a whole episode must stay well under 1.5 MB
AT_END = ("mas", "co")  # families pictured at the end of the episode (a finished schedule or route plan)


def classical_team(name: str):
    """The best classical team that plays in the env, by its test mean in docs/results/{mas,co}.md.

    MAS: the dispatch rule with the best mean at both test sizes (ATC for MAS-JD, value
    density for MAS-ST, WSPT for MAS-FS). HMTSP: ``nn+2opt+relocate``; FSTSP: the NN+2opt
    truck tour with its optimal drone split, played by :class:`PlanTeam` (OR-Tools rows
    are better still but are offline references, not teams).
    """
    if name in CLASSICAL_RULES:
        from baselines.mas.rules import rule_team  # docs/ sits above the layers: it may import baselines

        return rule_team(name, CLASSICAL_RULES[name])
    if name == "hmtsp":
        from baselines.co.routing_hmtsp import PlanTeam

        return PlanTeam(CLASSICAL_PLANS[name])
    from baselines.co.routing_fstsp import PlanTeam

    return PlanTeam(CLASSICAL_PLANS[name])


CLASSICAL_RULES = {"mas_jd": "atc", "mas_st": "value_density", "mas_fs": "wspt"}
CLASSICAL_PLANS = {"hmtsp": "nn+2opt+relocate", "fstsp": "truck+split"}
CLASSICAL = (*CLASSICAL_RULES, *CLASSICAL_PLANS)


def first_test_instance(name: str):
    splits = relic_envs.splits(name)
    return splits.test[next(iter(splits.test))][0]


def play(name: str, steps: int | None):
    """The seed team's episode on the first test instance after ``steps`` steps (``None``: to the end)."""
    bench = get_benchmark(name)
    team = seed_team(name)
    episode = bench.new_episode(first_test_instance(name))
    while not episode.done and (steps is None or episode.step_count < steps):
        invalid = episode.step({r: team[r](episode.observe(r)) for r in bench.roles})
        if invalid is not None:
            raise RuntimeError(f"{name}: the seed team's rollout was voided: {invalid}")
    return episode


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"output folder (default {OUT})")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name in [n for n in relic_envs.names() if spec(n).family in FAMILY_MODULES]:
        length = play(name, None).step_count
        episode = play(name, None if spec(name).family in AT_END else length // 2)
        path = args.out / f"{name}.png"
        save_frame(render_frame(episode), path)
        print(f"wrote {path}  (step {episode.step_count} of {length}, {path.stat().st_size / 1024:.0f} KiB)")
    for name in CLASSICAL:
        instance = first_test_instance(name)
        for label, team in (("seed", seed_team(name)), ("classical", classical_team(name))):
            path = args.out / f"{name}_{label}.png"
            save_frame(final_frame(name, team, instance), path)
            print(f"wrote {path}  ({path.stat().st_size / 1024:.0f} KiB)")
    width, height = GIF_SIZE
    for name, options in ANIMATIONS.items():
        frames = episode_frames(name, seed_team(name), first_test_instance(name), width=width, height=height)
        path = args.out / f"{name}.gif"
        save_animation(frames, path, **options)
        print(f"wrote {path}  ({len(frames)} frames, {path.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
