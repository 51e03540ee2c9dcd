"""Write the rendered frames and animations shown in docs/benchmarks/{mapp,dcop}.md.

For every built benchmark with a picture of its own (the MAPP and DCOP families): the
seed team on the first instance of its (first) test split, the frame halfway through
the episode, as ``docs/images/render/<name>.png``.
Then one animation per family (``mapp_pc.gif``, ``dgc.gif``), every step of the same
episode. Deterministic: running it again rewrites the same pictures.

    python docs/make_render_images.py            # writes into docs/images/render/
    python docs/make_render_images.py --out DIR  # somewhere else
"""

from __future__ import annotations

import argparse
from pathlib import Path

import relic_envs
from relic_envs.core.registry import get_benchmark, spec
from relic_envs.core.render import FAMILY_MODULES, episode_frames, render_frame, save_animation, save_frame
from relic_envs.seeds import seed_team

OUT = Path(__file__).resolve().parent / "images" / "render"
ANIMATIONS = {"mapp_pc": {"fps": 2}, "dgc": {"fps": 5}}  # benchmark -> save_animation keywords
GIF_SIZE = (560, 420)  # smaller than the PNGs: a whole episode must stay well under 1.5 MB


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
        episode = play(name, length // 2)
        path = args.out / f"{name}.png"
        save_frame(render_frame(episode), path)
        print(f"wrote {path}  (step {episode.step_count} of {length}, {path.stat().st_size / 1024:.0f} KiB)")
    width, height = GIF_SIZE
    for name, options in ANIMATIONS.items():
        frames = episode_frames(name, seed_team(name), first_test_instance(name), width=width, height=height)
        path = args.out / f"{name}.gif"
        save_animation(frames, path, **options)
        print(f"wrote {path}  ({len(frames)} frames, {path.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
