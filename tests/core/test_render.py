"""Rendering: every built benchmark draws a valid frame at reset, mid-episode and at the end.

Frames are compared exactly: a frame is a pure function of the episode's state, so
replaying the same steps gives the same pixels, and a different state different ones.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import relic_envs
from relic_envs.core import render
from relic_envs.core.registry import get_benchmark, spec
from relic_envs.errors import InvalidConfig, MissingExtra
from relic_envs.seeds import seed_team

pytest.importorskip("matplotlib")

NAMES = relic_envs.names()
SMALL = {"width": 320, "height": 240}  # enough pixels to tell states apart, quicker to draw


def first_test_instance(name: str):
    splits = relic_envs.splits(name)
    return splits.test[next(iter(splits.test))][0]


def play(name: str, steps: int | None, interface: str = "paper"):
    """The seed team's episode on the first test instance after ``steps`` steps (``None``: to the end)."""
    bench = get_benchmark(name)
    team = seed_team(name, interface)
    episode = bench.new_episode(first_test_instance(name), interface)
    while not episode.done and (steps is None or episode.step_count < steps):
        assert episode.step({r: team[r](episode.observe(r)) for r in bench.roles}) is None
    return episode


@pytest.fixture(scope="module")
def stages():
    """Per benchmark: [(episode, frame)] at reset, mid-episode and at the end, seed team."""
    out = {}
    for name in NAMES:
        end = play(name, None)
        mid = max(1, end.step_count // 2)
        start = play(name, 0)
        first = render.render_frame(start, **SMALL)
        bench, team = get_benchmark(name), seed_team(name)
        while start.step_count < mid:  # the same episode object, on to the middle
            start.step({r: team[r](start.observe(r)) for r in bench.roles})
        out[name] = [(None, first), (start, render.render_frame(start, **SMALL)), (end, render.render_frame(end, **SMALL))]
    return out


def test_every_family_has_a_picture_of_its_own():
    families = set()
    for name in NAMES:
        module = render.family_module(play(name, 0))
        assert module is not render.GENERIC and module.__name__ == f"relic_envs.{spec(name).family}._render", name
        families.add(spec(name).family)
    assert families == {"mapp", "dcop", "mas", "co"}


def test_a_family_without_a_picture_gets_the_generic_one(monkeypatch):
    monkeypatch.delitem(render.FAMILY_MODULES, "mapp")
    start, later = play("mapp_pc", 0), play("mapp_pc", 3)
    assert render.family_module(start) is render.GENERIC
    a, b = render.render_frame(start, **SMALL), render.render_frame(later, **SMALL)
    assert a.shape == (240, 320, 3) and a.dtype == np.uint8 and not np.array_equal(a, b)


@pytest.mark.parametrize("name", NAMES)
def test_frames_are_valid_images_at_reset_mid_and_end(stages, name):
    (_, _), (mid, _), (end, _) = stages[name]
    assert 0 < mid.step_count < end.step_count and end.done
    for _, frame in stages[name]:
        assert frame.shape == (240, 320, 3) and frame.dtype == np.uint8
        codes = (frame[..., 0].astype(np.int32) << 16) | (frame[..., 1].astype(np.int32) << 8) | frame[..., 2]
        assert np.unique(codes).size > 20  # a picture, not a blank or flat canvas
        assert (frame == 255).all(axis=2).mean() > 0.3  # on a white background


@pytest.mark.parametrize("name", NAMES)
def test_frames_change_with_the_state(stages, name):
    frames = [f for _, f in stages[name]]
    assert not np.array_equal(frames[0], frames[1])
    assert not np.array_equal(frames[1], frames[2])


@pytest.mark.parametrize("name", NAMES)
def test_same_state_gives_the_same_frame(stages, name):
    episode, frame = stages[name][1]
    assert np.array_equal(render.render_frame(episode, **SMALL), frame)  # again, same episode
    replay = play(name, episode.step_count)  # a fresh episode brought to the same state
    assert np.array_equal(render.render_frame(replay, **SMALL), frame)


def test_frames_drawn_in_threads_equal_the_sequential_ones(stages):
    from concurrent.futures import ThreadPoolExecutor

    jobs = [(name, k) for name in NAMES for k in (1, 2)]
    with ThreadPoolExecutor(4) as pool:
        frames = list(pool.map(lambda job: render.render_frame(stages[job[0]][job[1]][0], **SMALL), jobs))
    for (name, k), frame in zip(jobs, frames):
        assert np.array_equal(frame, stages[name][k][1]), (name, k)


def test_default_size_and_alternative_interface():
    frame = render.render_frame(play("mapp_pc", 3, interface="alt"))
    assert frame.shape == (480, 640, 3) and frame.dtype == np.uint8


def test_bad_arguments_are_refused():
    episode = play("dgc", 0)
    with pytest.raises(InvalidConfig, match="width"):
        render.render_frame(episode, width=0)
    with pytest.raises(InvalidConfig, match="height"):
        render.render_frame(episode, height=2.5)
    with pytest.raises(TypeError, match="Episode"):
        render.render_frame(object())
    frame = render.render_frame(episode, width=64, height=48)
    with pytest.raises(TypeError, match="uint8"):
        render.save_frame(frame.astype(np.float32), "unused.png")
    with pytest.raises(InvalidConfig, match="one shape"):
        render.save_animation([frame, frame[:, :32]], "unused.gif")
    with pytest.raises(InvalidConfig, match="non-empty"):
        render.save_animation([], "unused.gif")


def test_missing_matplotlib_names_the_extra(monkeypatch):
    episode = play("mapp_pc", 0)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    with pytest.raises(MissingExtra, match=r"relic-envs\[render\]"):
        render.render_frame(episode)


def test_episode_frames_and_files(tmp_path):
    name = "mapp_ar"
    frames = render.episode_frames(name, seed_team(name), first_test_instance(name), width=160, height=120)
    assert len(frames) == play(name, None).step_count + 1
    gif, png = tmp_path / "episode.gif", tmp_path / "frame.png"
    render.save_animation(frames, gif, fps=5)
    render.save_frame(frames[-1], png)
    assert gif.read_bytes()[:6] == b"GIF89a" and gif.stat().st_size > 1000
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from PIL import Image

    with Image.open(gif) as im:
        assert im.n_frames == len(frames) and im.size == (160, 120)
    from matplotlib.image import imread

    assert np.array_equal((imread(png)[..., :3] * 255).round().astype(np.uint8), frames[-1])


def test_episode_frames_refuses_a_voided_rollout():
    team = dict(seed_team("dgc"))
    team["B"] = lambda obs: [0]  # a list, not an array: DCOP strict rejection
    with pytest.raises(ValueError, match="role B"):
        render.episode_frames("dgc", team, first_test_instance("dgc"), width=64, height=48)


def test_show_frame_on_a_headless_backend_returns_none():
    frame = render.render_frame(play("shds", 1), width=64, height=48)
    try:
        assert render.show_frame(frame) is None
        assert render.show_frame(frame) is None  # updated in place
        assert render.show_frame(render.render_frame(play("shds", 2), width=80, height=60)) is None  # new size
    finally:
        render.close_window()


def test_layouts_are_deterministic_and_in_the_square():
    from relic_envs.dcop import _render as dcop_render

    inst = first_test_instance("dgc")
    edges, _ = dcop_render._real_edges(inst)
    a = dcop_render.graph_layout(inst.x0.size, edges, inst.seed)
    b = dcop_render._layout.__wrapped__(inst.x0.size, np.sort(edges, axis=1).tobytes(), int(inst.seed))
    assert np.array_equal(a, b)  # the memoised layout is the computed one
    assert a.shape == (inst.x0.size, 2) and a.min() >= -0.02 and a.max() <= 1.02
    targets, sensors = dcop_render.sensor_layout(first_test_instance("sensor_dcsp"))
    assert np.all(np.isfinite(sensors)) and targets.shape == (16, 2)


def test_dimes_dots_do_not_collide_in_a_cell():
    from relic_envs.dcop import _render as dcop_render

    inst = first_test_instance("dimes")
    x = np.asarray(inst.x0)
    dx, dy = dcop_render.cell_offsets(inst.meeting, x)
    assert np.all((0 < dx) & (dx < 1) & (0 < dy) & (dy < 1))
    where = np.stack([inst.meeting, x, dx, dy], axis=1)
    assert len(np.unique(where, axis=0)) == x.size  # no two attendances on one spot


@pytest.mark.parametrize("vmax", [0.3, 1.0, 7.0, 39.2, 55.0, 1234.0])
def test_nice_axis_covers_the_value(vmax):
    from relic_envs.core._draw import nice_axis

    ticks = nice_axis(vmax)
    assert ticks[0] == 0 and ticks[-1] >= vmax and 3 <= ticks.size <= 7


# -- scheduling and combinatorial pictures ------------------------------------------------
def _colour_share(frame: np.ndarray, hex_colour: str, box=None) -> float:
    """Share of the pixels (of ``box`` = (x0, y0, x1, y1) in figure fractions, y up) within a small
    distance of ``hex_colour`` (thin bars are antialiased: few pixels are exactly the colour)."""
    rgb = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.uint8)
    if box is not None:
        h, w = frame.shape[:2]
        x0, y0, x1, y1 = box
        frame = frame[int((1 - y1) * h) : int((1 - y0) * h), int(x0 * w) : int(x1 * w)]
    return float((np.abs(frame.astype(np.int16) - rgb).max(axis=2) <= 24).mean())


def test_mas_gantt_rows_show_each_resources_work(stages):
    """MAS-JD/ST: each resource's row holds bars in its role colour, and no other role's."""
    from relic_envs.core._draw import ROLE_COLORS
    from relic_envs.mas._render import GANTT_BOX

    for name in ("mas_jd", "mas_st"):
        end, frame = stages[name][2]
        x0, y0, w, h = GANTT_BOX
        for k, role in enumerate("ABC"):
            row = (x0, y0 + h * (2 - k) / 3, x0 + w, y0 + h * (3 - k) / 3)  # row 0 (A) at the top
            worked = bool((end.machine[:, 0] == k).any())
            assert (_colour_share(frame, ROLE_COLORS[role], row) > 0.01) == worked, (name, role)
            others = [ROLE_COLORS[r] for r in "ABC" if r != role]
            assert all(_colour_share(frame, c, row) < 0.01 for c in others), (name, role)  # antialiased hatching aside


def test_fjagv_agv_panel_shows_loaded_trips_only_once_there_are_trips(stages):
    from relic_envs.co._render import AGV_BOX
    from relic_envs.core._draw import ROLE_COLORS

    x0, y0, w, h = AGV_BOX
    box = (x0, y0, x0 + w, y0 + h)
    start = play("fjagv", 0)
    assert not start.state.trips
    assert _colour_share(render.render_frame(start, **SMALL), ROLE_COLORS["C"], box) == 0
    end, frame = stages["fjagv"][2]
    assert end.state.trips and _colour_share(frame, ROLE_COLORS["C"], box) > 0.01


def test_fstsp_drone_customers_are_drawn_in_role_a_colour(stages):
    from relic_envs.core._draw import ROLE_COLORS

    start = play("fstsp", 0)
    assert _colour_share(render.render_frame(start, **SMALL), ROLE_COLORS["A"], (0, 0, 0.68, 0.92)) == 0
    end, frame = stages["fstsp"][2]
    assert (end.state.served_by == 1).any() and _colour_share(frame, ROLE_COLORS["A"], (0, 0, 0.68, 0.92)) > 0


def test_final_frame_of_any_team(stages):
    """``final_frame`` pictures a team's finished episode: the seed team's equals the last stage;
    another team (the reference policies) gives another schedule and another picture."""
    for name in ("mas_jd", "hmtsp"):
        seed_end = render.final_frame(name, seed_team(name), first_test_instance(name), **SMALL)
        assert np.array_equal(seed_end, stages[name][2][1])
        bench = get_benchmark(name)
        reference = {r: bench.reference_policy(r) for r in bench.roles}
        other = render.play_episode(name, reference, first_test_instance(name))
        assert other.done and other.objective() != stages[name][2][0].objective()
        assert not np.array_equal(render.render_frame(other, **SMALL), seed_end)


def test_play_episode_refuses_a_voided_scheduling_rollout():
    team = dict(seed_team("mas_jd"))
    team["A"] = lambda obs: 10_000  # not a job of the pool: B.2 voids the rollout
    with pytest.raises(ValueError, match="role A"):
        render.play_episode("mas_jd", team, first_test_instance("mas_jd"))
