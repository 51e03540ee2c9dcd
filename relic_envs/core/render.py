"""Pictures of episodes: ``rgb_array`` frames, a "human" window, PNGs and GIFs.

:func:`render_frame` draws the current state of any built benchmark's
:class:`~relic_envs.core.benchmark.Episode` into a ``(H, W, 3)`` ``uint8`` array, with
the benchmark name, the step (or sweep) and the current objective in the title. The
family modules (``relic_envs.<family>._render`` for MAPP, DCOP, MAS and CO) know what to
draw, with the kit in ``relic_envs.core._draw`` (role colours and markers, panels,
keys); this module owns the dispatch, the per-instance background, the "human"
window, whole episodes (:func:`episode_frames`; :func:`final_frame` for any team's finished
episode) and the files. A family without a module of its own gets a
generic picture (title and state vector).

Frames are drawn on matplotlib's non-interactive Agg canvas (a fresh ``Figure`` per
call, no pyplot state), so rendering is thread-safe and works on a headless machine.
Layouts are derived from the instance alone, so the same state gives the same pixels.
matplotlib is optional for the library: ``pip install 'relic-envs[render]'``.

>>> import relic_envs
>>> from relic_envs.core.render import render_frame
>>> inst = relic_envs.splits("dgc").test_instances()[0]
>>> episode = relic_envs.get_benchmark("dgc").new_episode(inst)
>>> frame = render_frame(episode, width=320, height=240)
>>> frame.shape, frame.dtype
((240, 320, 3), dtype('uint8'))
"""

from __future__ import annotations

import importlib
import threading
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from os import PathLike
from typing import Any

import numpy as np

from relic_envs.core._draw import (
    BASE_DPI,
    GENERIC,
    ROLE_COLORS,
    ROLE_MARKERS,
    figure_pixels,
    frame_axes,
    new_figure,
    require_matplotlib,
)
from relic_envs.core.benchmark import Benchmark, Episode
from relic_envs.errors import InvalidConfig, InvalidReturn

__all__ = [
    "FAMILY_MODULES", "GENERIC", "ROLE_COLORS", "ROLE_MARKERS", "FrameWindow", "close_window", "episode_frames",
    "family_module", "final_frame", "play_episode", "render_frame", "save_animation", "save_frame", "show_frame",
]

#: The family modules that draw each family's episodes.
FAMILY_MODULES: dict[str, str] = {
    "mapp": "relic_envs.mapp._render", "dcop": "relic_envs.dcop._render", "mas": "relic_envs.mas._render",
    "co": "relic_envs.co._render",
}


def _check_size(width: Any, height: Any) -> tuple[int, int]:
    for name, value in (("width", width), ("height", height)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or not 16 <= value <= 8192:
            raise InvalidConfig(f"{name} must be an int in 16..8192 (pixels), got {value!r}")
    return int(width), int(height)


def family_module(episode: Episode):
    """The module that draws ``episode``'s family (``relic_envs.<family>._render``).

    A family without one gets :data:`GENERIC`: the title line and the state vector.
    """
    bench = getattr(episode, "bench", None)
    if not isinstance(episode, Episode) or not isinstance(bench, Benchmark):
        raise TypeError(f"episode must be an Episode made by a benchmark's new_episode, got {type(episode).__name__}")
    if bench.family not in FAMILY_MODULES:
        return GENERIC
    return importlib.import_module(FAMILY_MODULES[bench.family])


def render_frame(episode: Episode, *, width: int = 640, height: int = 480) -> np.ndarray:
    """The current state of ``episode`` as an RGB image.

    Parameters
    ----------
    episode:
        An episode of a built benchmark (``benchmark.new_episode(instance)``, or the
        env's ``episode`` attribute), at any step.
    width, height:
        Frame size in pixels.

    Returns
    -------
    np.ndarray
        ``(height, width, 3)`` ``uint8``; the same state always gives the same array.

    The parts of the picture that depend on the instance only (the family module's
    ``draw_static``: keys, axes, labels) are drawn once per instance and frame size and
    kept as a background image; each frame draws the state (``draw_state``) over it.
    """
    width, height = _check_size(width, height)
    module = family_module(episode)
    background = _background(module, episode, width, height)
    fig = new_figure(width, height)
    fig.patch.set_alpha(0.0)  # the state is drawn on a transparent canvas, then laid over the background
    _draw_on_frame(fig, module.draw_state, episode)
    fig.canvas.draw()
    return _over(np.asarray(fig.canvas.buffer_rgba()), background)


def _over(rgba: np.ndarray, background: np.ndarray) -> np.ndarray:
    """``rgba`` (straight alpha, as Agg's buffer is) laid over the opaque ``background``, exactly rounded."""
    frame = background.copy()
    h, w = min(rgba.shape[0], frame.shape[0]), min(rgba.shape[1], frame.shape[1])
    top, under = rgba[:h, :w], frame[:h, :w]
    drawn = top[..., 3] > 0  # composite only where the state drew something
    a = top[..., 3][drawn].astype(np.uint32)[:, None]
    mixed = top[..., :3][drawn].astype(np.uint32) * a + under[drawn].astype(np.uint32) * (255 - a)
    under[drawn] = ((mixed + 127) // 255).astype(np.uint8)
    return frame


def _draw_on_frame(fig, draw, episode: Episode) -> None:
    ax = frame_axes(fig)
    draw(ax, episode)
    ax.set_xlim(0.0, 1.0)  # an image drawn on the frame axes must not move its limits
    ax.set_ylim(0.0, 1.0)


_BACKGROUNDS: OrderedDict[tuple, tuple[weakref.ref, np.ndarray]] = OrderedDict()
_BACKGROUNDS_LOCK = threading.Lock()
_BACKGROUNDS_KEPT = 32


def _background(module, episode: Episode, width: int, height: int) -> np.ndarray:
    """The static part of ``episode``'s frames, memoised per (benchmark, instance, size)."""
    instance = episode.instance
    key = (module.__name__, episode.bench.name, id(instance), width, height)
    with _BACKGROUNDS_LOCK:
        hit = _BACKGROUNDS.get(key)
        if hit is not None and hit[0]() is instance:  # the id may have been reused by a new instance
            _BACKGROUNDS.move_to_end(key)
            return hit[1]
    fig = new_figure(width, height)
    _draw_on_frame(fig, module.draw_static, episode)
    pixels = figure_pixels(fig, width, height)
    pixels.setflags(write=False)
    try:
        ref = weakref.ref(instance)
    except TypeError:  # not weak-referenceable: do not keep it
        return pixels
    with _BACKGROUNDS_LOCK:
        _BACKGROUNDS[key] = (ref, pixels)
        while len(_BACKGROUNDS) > _BACKGROUNDS_KEPT:
            _BACKGROUNDS.popitem(last=False)
    return pixels


# -- "human" mode --------------------------------------------------------------------
class FrameWindow:
    """A matplotlib window that shows frames, updated in place.

    On a non-interactive backend (Agg on a headless machine) it draws to the figure's
    canvas and shows nothing; it never raises for want of a display.
    """

    def __init__(self):
        self._fig = None
        self._image = None

    def show(self, frame: np.ndarray) -> None:
        frame = _check_frame(frame, "frame")
        require_matplotlib()
        import matplotlib.pyplot as plt

        fresh = self._fig is None or not plt.fignum_exists(self._fig.number)  # first call, or the user closed it
        if not fresh and self._image.get_array().shape != frame.shape:  # another frame size: a new window
            self.close()
            fresh = True
        if fresh:
            h, w = frame.shape[:2]
            self._fig = plt.figure("relic-envs", figsize=(w / BASE_DPI, h / BASE_DPI), dpi=BASE_DPI)
            ax = self._fig.add_axes((0.0, 0.0, 1.0, 1.0))
            ax.set_axis_off()
            self._image = ax.imshow(frame, interpolation="nearest")
        else:
            self._image.set_data(frame)
        if _interactive_backend():
            self._fig.canvas.draw_idle()
            plt.pause(0.001)  # let the GUI event loop paint the window
        else:
            self._fig.canvas.draw()

    def close(self) -> None:
        if self._fig is not None:
            import matplotlib.pyplot as plt

            plt.close(self._fig)
        self._fig = self._image = None


def _interactive_backend() -> bool:
    import matplotlib

    backend = matplotlib.get_backend().lower()
    non_interactive = {"agg", "cairo", "pdf", "pgf", "ps", "svg", "template"}
    return backend not in non_interactive and "inline" not in backend


_WINDOW = FrameWindow()


def show_frame(frame: np.ndarray) -> None:
    """Show ``frame`` in the "human" window (one per process), updated in place.

    On a headless machine (a non-interactive backend such as Agg) it only draws to the
    window figure's canvas. Returns ``None``.
    """
    _WINDOW.show(frame)


def close_window() -> None:
    """Close the "human" window, if open (an env's ``close()`` calls this)."""
    _WINDOW.close()


# -- whole episodes and files ------------------------------------------------------------
def play_episode(
    name: str | Benchmark,
    team: Mapping[str, Any],
    instance,
    interface: str = "paper",
    *,
    on_step: Callable[[Episode], None] | None = None,
) -> Episode:
    """Play ``team`` on ``instance`` to the end and return the finished episode.

    ``on_step(episode)`` (if given) is called before the first step and after each
    step. A team with ``reset(instance)`` is told the instance first, as in
    :func:`~relic_envs.core.rollout.rollout`.

    Raises
    ------
    InvalidReturn
        When a policy's return voids the rollout (DCOP strict rejection, a MAS
        dispatch error): there is no valid episode to picture. (MAPP policies that
        raise or misbehave are sent to the depot, as in every rollout.)
    """
    from relic_envs.core.registry import get_benchmark

    bench = get_benchmark(name) if isinstance(name, str) else name
    missing = [r for r in bench.roles if r not in team]
    if missing:
        raise InvalidConfig(f"team needs a policy for every role {list(bench.roles)}; missing {missing}")
    if hasattr(team, "reset"):
        team.reset(instance)
    episode = bench.new_episode(instance, interface)
    if on_step is not None:
        on_step(episode)
    while not episode.done:
        actions = {}
        for role in bench.roles:
            try:
                actions[role] = team[role](episode.observe(role))
            except Exception as exc:
                if bench.void_on_exception:
                    raise InvalidReturn("exception", f"role {role} raised at step {episode.step_count}: {exc!r}") from exc
                actions[role] = exc  # the benchmark's fallback (MAPP: the depot; MAS: voids at the step)
        invalid = episode.step(actions)
        if invalid is not None:
            raise InvalidReturn(invalid.reason, f"role {invalid.role} at step {episode.step_count}: {invalid.detail}")
        if on_step is not None:
            on_step(episode)
    return episode


def episode_frames(
    name: str | Benchmark,
    team: Mapping[str, Any],
    instance,
    interface: str = "paper",
    *,
    width: int = 640,
    height: int = 480,
) -> list[np.ndarray]:
    """Play ``team`` on ``instance`` and render the state before the first step and after each step.

    Parameters
    ----------
    name:
        A benchmark name (``"dgc"``) or object.
    team:
        A policy per role, ``{"A": ..., "B": ..., "C": ...}``, e.g.
        ``relic_envs.seeds.seed_team(name)``; a team with ``reset(instance)`` is told
        the instance first, as in :func:`~relic_envs.core.rollout.rollout`.
    instance:
        The instance to play.

    Returns
    -------
    list of np.ndarray
        ``step_count + 1`` frames of shape ``(height, width, 3)``.

    Raises
    ------
    InvalidReturn
        As :func:`play_episode`.
    """
    width, height = _check_size(width, height)
    frames: list[np.ndarray] = []
    play_episode(name, team, instance, interface, on_step=lambda ep: frames.append(render_frame(ep, width=width, height=height)))
    return frames


def final_frame(
    name: str | Benchmark,
    team: Mapping[str, Any],
    instance,
    interface: str = "paper",
    *,
    width: int = 640,
    height: int = 480,
) -> np.ndarray:
    """The last frame of ``team``'s episode on ``instance``: the finished schedule, routes or assignment.

    Any team works (seed programs, a learned team, a classical baseline wrapped as a
    team), so a results page can show two teams' solutions of one instance side by
    side. Raises as :func:`play_episode`.
    """
    width, height = _check_size(width, height)
    return render_frame(play_episode(name, team, instance, interface), width=width, height=height)


def _check_frame(frame: Any, what: str) -> np.ndarray:
    if not isinstance(frame, np.ndarray) or frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
        got = f"{frame.dtype} array of shape {frame.shape}" if isinstance(frame, np.ndarray) else type(frame).__name__
        raise TypeError(f"{what} must be a uint8 array of shape (H, W, 3) (a render_frame result), got {got}")
    return frame


def save_frame(frame: np.ndarray, path: str | PathLike) -> None:
    """Write one frame as a PNG file."""
    frame = _check_frame(frame, "frame")
    require_matplotlib()
    from matplotlib.image import imsave

    imsave(path, frame, format="png")


def save_animation(frames: Sequence[np.ndarray], path: str | PathLike, fps: float = 4) -> None:
    """Write frames as an animated GIF (matplotlib's ``PillowWriter``; pillow ships with matplotlib).

    Parameters
    ----------
    frames:
        Frames of one size, e.g. from :func:`episode_frames`.
    path:
        The ``.gif`` file to write.
    fps:
        Frames per second; the GIF loops forever.
    """
    if isinstance(fps, bool) or not isinstance(fps, int | float) or not 0 < fps <= 100:
        raise InvalidConfig(f"fps must be a number in (0, 100], got {fps!r}")
    if len(frames) == 0:
        raise InvalidConfig("frames must be a non-empty sequence of frames")
    first = _check_frame(frames[0], "frames[0]")
    for i, frame in enumerate(frames):
        if _check_frame(frame, f"frames[{i}]").shape != first.shape:
            raise InvalidConfig(f"frames must share one shape; frames[0] is {first.shape}, frames[{i}] is {frame.shape}")
    require_matplotlib()
    from matplotlib.animation import PillowWriter

    h, w = first.shape[:2]
    fig = new_figure(w, h)
    image = fig.figimage(first, xo=0, yo=0, origin="upper")
    writer = PillowWriter(fps=fps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "MovieWriter ... frame size" chatter on rounding
        with writer.saving(fig, str(path), dpi=fig.dpi):
            for frame in frames:
                image.set_data(frame)
                writer.grab_frame()
