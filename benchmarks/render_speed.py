"""Rendering speed: milliseconds per ``render_frame`` for every built benchmark.

The seed team plays the first test instance to the middle of its episode; that state
is then drawn ``--repeats`` times at each ``--size`` (after one untimed frame that
pays for imports, the per-instance layout and background). Prints the time of the
first frame, then the best and median wall time and the median CPU time of the
process per frame (the CPU column is the steadier one on a shared machine). Usage::

    python benchmarks/render_speed.py [--repeats 20] [--size 640x480 --size 1280x960] [--env dgc ...]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import relic_envs
from relic_envs.core.registry import get_benchmark
from relic_envs.core.render import render_frame
from relic_envs.seeds import seed_team


def mid_episode(name: str):
    bench = get_benchmark(name)
    team = seed_team(name)
    splits = relic_envs.splits(name)
    instance = splits.test[next(iter(splits.test))][0]

    def play(steps):
        episode = bench.new_episode(instance)
        while not episode.done and (steps is None or episode.step_count < steps):
            episode.step({r: team[r](episode.observe(r)) for r in bench.roles})
        return episode

    return play(play(None).step_count // 2)


def size(text: str) -> tuple[int, int]:
    w, _, h = text.partition("x")
    return int(w), int(h)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--size", type=size, action="append", help="WxH in pixels (default 640x480)")
    parser.add_argument("--env", action="append", choices=relic_envs.names(), help="benchmark (default: all built)")
    args = parser.parse_args()
    sizes = args.size or [(640, 480)]
    print(f"# render_frame, {platform.processor() or platform.machine()}, python {platform.python_version()}")
    print(f"{'benchmark':<12} {'size':>9} {'first ms':>9} {'best ms':>8} {'median ms':>10} {'cpu ms':>7}")
    for name in args.env or relic_envs.names():
        episode = mid_episode(name)
        for w, h in sizes:
            t0 = time.perf_counter()
            render_frame(episode, width=w, height=h)
            first = time.perf_counter() - t0
            times, cpu = [], []
            for _ in range(args.repeats):
                t0, c0 = time.perf_counter(), time.process_time()
                render_frame(episode, width=w, height=h)
                times.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
            print(f"{name:<12} {f'{w}x{h}':>9} {first * 1e3:9.0f} {min(times) * 1e3:8.0f} "
                  f"{statistics.median(times) * 1e3:10.0f} {statistics.median(cpu) * 1e3:7.0f}")


if __name__ == "__main__":
    main()
