"""Drawing kit shared by the family renderers: one frame axes, panels, keys, titles.

Everything is drawn on one axes that covers the figure, with its data coordinates
equal to figure fractions (:func:`frame_axes`); a :class:`Panel` maps a box of the
frame to data limits. One axes without ticks draws several times faster than an axes
per panel, and text is the dearest artist there is, so labels are few and short.
The Gantt helpers (:func:`gantt_panel`, :func:`gantt_rows`, :func:`gantt_bars`, :func:`late_bars`,
:func:`time_axis`, :func:`time_grid`) serve the scheduling pictures of the MAS and CO families.
matplotlib is imported lazily: importing this module does not need it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from relic_envs.core.benchmark import ROLES, Benchmark, Episode
from relic_envs.errors import MissingExtra

#: One colour and one marker per role, shared by every picture (Paul Tol's bright palette).
ROLE_COLORS: dict[str, str] = {"A": "#4477AA", "B": "#EE6677", "C": "#228833"}
ROLE_MARKERS: dict[str, str] = {"A": "o", "B": "s", "C": "^"}
BASE_SIZE = (640, 480)  # at this frame size one figure inch is 100 pixels; larger frames scale fonts up
BASE_DPI = 100.0


def require_matplotlib():
    """Import matplotlib (Agg-capable) or raise :class:`~relic_envs.errors.MissingExtra`."""
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingExtra("matplotlib", "render") from exc
    return matplotlib


def new_figure(width: int, height: int):
    """A fresh ``Figure`` on its own Agg canvas, exactly ``width x height`` pixels.

    The dpi scales with the frame so that text keeps its share of the picture:
    640 x 480 uses 100 dpi, 1280 x 960 uses 200.
    """
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    dpi = BASE_DPI * min(width / BASE_SIZE[0], height / BASE_SIZE[1])
    fig = Figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


def figure_pixels(fig, width: int, height: int) -> np.ndarray:
    """Draw ``fig`` and return its ``(height, width, 3)`` uint8 pixels."""
    fig.canvas.draw()
    rgba = np.asarray(fig.canvas.buffer_rgba())
    frame = np.full((height, width, 3), 255, dtype=np.uint8)  # pad/crop a rounding pixel, if any
    h, w = min(height, rgba.shape[0]), min(width, rgba.shape[1])
    frame[:h, :w] = rgba[:h, :w, :3]
    return frame


def frame_axes(fig):
    """One axes over the whole figure, axis off, data coordinates = figure fractions.

    Family modules draw everything on it through :class:`Panel` boxes: one axes
    with no ticks is several times faster to draw than an axes per panel. A family
    module provides ``draw_static(ax, episode)`` (what depends on the instance only),
    ``draw_state(ax, episode)`` (the rest) and ``draw(ax, episode)`` (both).
    """
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_axis_off()
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.0, 1.0)
    ax.set_autoscale_on(False)
    return ax


def pixel_aspect(ax) -> float:
    """Width over height of the frame in pixels (to draw squares in figure fractions)."""
    w, h = ax.figure.get_size_inches()
    return float(w / h)


@dataclasses.dataclass(frozen=True)
class Panel:
    """A rectangle of the frame (in figure fractions) that shows data limits ``xlim x ylim``."""

    x0: float
    y0: float
    w: float
    h: float
    xlim: tuple[float, float]
    ylim: tuple[float, float]

    def x(self, v) -> np.ndarray:
        lo, hi = self.xlim
        return self.x0 + (np.asarray(v, dtype=np.float64) - lo) / (hi - lo) * self.w

    def y(self, v) -> np.ndarray:
        lo, hi = self.ylim
        return self.y0 + (np.asarray(v, dtype=np.float64) - lo) / (hi - lo) * self.h

    def xy(self, points) -> np.ndarray:
        """``(n, 2)`` data points in frame coordinates."""
        p = np.asarray(points, dtype=np.float64).reshape(-1, 2)
        return np.stack([self.x(p[:, 0]), self.y(p[:, 1])], axis=1)

    def scale_x(self, dv) -> float:
        return float(dv) / (self.xlim[1] - self.xlim[0]) * self.w

    def scale_y(self, dv) -> float:
        return float(dv) / (self.ylim[1] - self.ylim[0]) * self.h

    def outline(self, ax, *, color: str = "#bbbbbb", fill: str | None = None) -> None:
        from matplotlib.patches import Rectangle

        ax.add_patch(Rectangle((self.x0, self.y0), self.w, self.h, facecolor=fill or "none", edgecolor=color,
                               linewidth=0.8, zorder=0.5))

    def yticks(self, ax, values, labels=None, *, grid: bool = True, fontsize: float = 7.5) -> None:
        """Labels left of the panel at ``values`` (and light horizontal grid lines)."""
        values = list(values)
        labels = labels if labels is not None else [f"{v:g}" for v in values]
        ys = self.y(values)
        if grid:
            ax.hlines(ys, self.x0, self.x0 + self.w, colors="#e4e4e4", linewidths=0.7, zorder=0.6)
        for y, label in zip(ys, labels):
            ax.text(self.x0 - 0.006, y, label, ha="right", va="center", fontsize=fontsize, color="#444444")

    def xticks(self, ax, values, labels=None, *, fontsize: float = 7.5) -> None:
        """Labels under the panel at ``values``."""
        values = list(values)
        labels = labels if labels is not None else [f"{v:g}" for v in values]
        for x, label in zip(self.x(values), labels):
            ax.text(x, self.y0 - 0.008, label, ha="center", va="top", fontsize=fontsize, color="#444444")


def square_panel(ax, x0: float, y0: float, max_w: float, max_h: float, lim: tuple[float, float]) -> Panel:
    """The largest square :class:`Panel` (in pixels) inside a box, showing ``lim x lim``."""
    aspect = pixel_aspect(ax)
    side_h = min(max_h, max_w * aspect)  # in fractions of the height
    return Panel(x0, y0 + (max_h - side_h) / 2, side_h / aspect, side_h, lim, lim)


#: Where a map of the unit square sits (MAPP, HMTSP, FSTSP): the box ``(x, y, max w, max h)`` it
#: fills, left of the side panel, and how far its limits reach beyond the square.
MAP_BOX = (0.015, 0.02, 0.66, 0.89)
MAP_MARGIN = 0.03


def map_panel(ax) -> Panel:
    """The square :class:`Panel` of a unit-square map: as large as fits in :data:`MAP_BOX`, :data:`MAP_MARGIN` around."""
    return square_panel(ax, *MAP_BOX, (-MAP_MARGIN, 1.0 + MAP_MARGIN))


def nice_axis(vmax: float, n_ticks: int = 5) -> np.ndarray:
    """Ticks ``0, step, ..., top`` with a round ``step`` (1, 2, 2.5 or 5 x 10^k) and ``top >= vmax``."""
    raw = max(float(vmax), 1e-9) / n_ticks
    p = 10.0 ** np.floor(np.log10(raw))
    step = next(m * p for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * p >= raw * (1 - 1e-9))
    return np.arange(0.0, np.ceil(vmax / step - 1e-9) * step + step / 2, step)


def colour_bar(ax, box: tuple[float, float, float, float], cmap: str, ticks: np.ndarray, label: str) -> None:
    """A horizontal colour bar in the frame over ``[ticks[0], ticks[-1]]``, labelled ticks under it, the label above."""
    x0, y0, w, h = box
    vmin, vmax = float(ticks[0]), float(ticks[-1])
    ax.imshow(np.linspace(0.0, 1.0, 128)[None, :], cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto",
              extent=(x0, x0 + w, y0, y0 + h), interpolation="bilinear", zorder=1)
    from matplotlib.patches import Rectangle

    ax.add_patch(Rectangle((x0, y0), w, h, facecolor="none", edgecolor="#666666", linewidth=0.6, zorder=1.1))
    for v in ticks:
        ax.text(x0 + (v - vmin) / (vmax - vmin) * w, y0 - 0.006, f"{v:g}", ha="center", va="top", fontsize=7.5)
    ax.text(x0, y0 + h + 0.008, label, ha="left", va="bottom", fontsize=8.5)


def role_key(ax, x: float, y: float, labels: Mapping[str, str], *, step: float = 0.1, fill: str | None = None,
             fontsize: float = 8.5) -> None:
    """A legend of the roles drawn straight on the frame: the role's marker, then its label.

    Markers are filled with the role colour, or with ``fill`` where colour means something
    else (DGC's vertex colours).
    """
    for i, role in enumerate(ROLES):
        yy = y - i * step
        ax.scatter([x], [yy], marker=ROLE_MARKERS[role], s=60, c=fill or ROLE_COLORS[role], edgecolors="black",
                   linewidths=0.6, zorder=5, clip_on=False)
        ax.text(x + 0.025, yy, labels[role], ha="left", va="center", fontsize=fontsize, linespacing=1.3)


def title(ax, text: str) -> None:
    """The frame's title line (bold, centred at the top)."""
    ax.text(0.5, 0.965, text, ha="center", va="center", fontsize=11, fontweight="bold")


def display_name(bench: Benchmark) -> str:
    """The short name of a benchmark in pictures: ``"MAPP-PC"``, ``"DGC"`` (from the registry's title)."""
    from relic_envs.core.registry import spec

    name = spec(bench.name).title
    return name[name.rfind("(") + 1 : -1] if name.endswith(")") else bench.name


def objective_title(episode: Episode, label: str, *, unit: str = "step", digits: int = 1) -> str:
    """The frame title every benchmark shares: name, step out of the horizon, objective."""
    bench = episode.bench
    direction = "min" if bench.minimize else "max"
    horizon = bench.max_steps(episode.instance)
    status = ", done" if episode.done else ""
    return (
        f"{display_name(bench)}   {unit} {episode.step_count}/{horizon}{status}   "
        f"{label} = {episode.objective():.{digits}f} ({direction})"
    )


class _Generic:
    """The picture of a family that has no renderer of its own: the title and the state vector."""

    __name__ = "relic_envs.core.render.GENERIC"

    @staticmethod
    def draw_static(ax, episode: Episode) -> None:
        ax.text(0.5, 0.08, f"state vector; no picture of its own for the {episode.bench.family!r} family yet",
                ha="center", fontsize=8.5, color="#444444")

    @staticmethod
    def draw_state(ax, episode: Episode) -> None:
        title(ax, objective_title(episode, "objective", digits=2))
        state = np.asarray(episode.state_vector(), dtype=np.float64).ravel()
        cols = max(1, int(np.ceil(np.sqrt(state.size * 2))))
        grid = np.full(cols * int(np.ceil(state.size / cols)), np.nan)
        grid[: state.size] = state
        finite = state[np.isfinite(state)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        ax.imshow(grid.reshape(-1, cols), cmap="viridis", vmin=lo, vmax=hi if hi > lo else lo + 1, aspect="auto",
                  extent=(0.05, 0.95, 0.15, 0.9), interpolation="nearest")

    def draw(self, ax, episode: Episode) -> None:
        self.draw_static(ax, episode)
        self.draw_state(ax, episode)


GENERIC = _Generic()


# -- Gantt charts (scheduling and combinatorial families) ---------------------------------
#: Colours that tell jobs (or projects) apart, cycled by id (Paul Tol's muted palette; no role colour).
CYCLE: tuple[str, ...] = ("#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255",
                          "#AA4499", "#DDDDDD")
LATE = "#CC3311"  # tardiness, missed deadlines


def cycle_colors(ids) -> list[str]:
    """One :data:`CYCLE` colour per id (neighbouring ids get different colours)."""
    return [CYCLE[int(i) % len(CYCLE)] for i in np.asarray(ids).ravel()]


def bars(ax, left, bottom, width, height, **style) -> None:
    """Rectangles in frame coordinates as one collection (an artist per bar is several times slower to draw)."""
    from matplotlib.collections import PolyCollection

    left, bottom, width, height = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (left, bottom, width, height)))
    if left.size == 0:
        return
    right, top = left + width, bottom + height
    verts = np.stack([np.stack([left, bottom], -1), np.stack([right, bottom], -1), np.stack([right, top], -1),
                      np.stack([left, top], -1)], axis=1)
    ax.add_collection(PolyCollection(verts.reshape(-1, 4, 2), **style))


def gantt_panel(box: tuple[float, float, float, float], t_max: float, n_rows: int) -> tuple[Panel, np.ndarray]:
    """A :class:`Panel` over ``box`` with time ``0..top`` across (``top`` a round tick ``>= t_max``) and
    rows ``0..n_rows`` down (row 0 at the top), and its time ticks."""
    ticks = nice_axis(max(float(t_max), 1e-9))
    x0, y0, w, h = box
    return Panel(x0, y0, w, h, (0.0, float(ticks[-1])), (float(n_rows), 0.0)), ticks


def gantt_rows(ax, box: tuple[float, float, float, float], labels, *, fontsize: float = 7.5) -> None:
    """The static part of a :func:`gantt_panel` over ``box``: its outline and one label per row (row 0 at the top)."""
    panel, _ = gantt_panel(box, 1.0, len(labels))
    panel.outline(ax)
    panel.yticks(ax, np.arange(len(labels)) + 0.5, labels, grid=False, fontsize=fontsize)


def gantt_bars(ax, panel: Panel, rows, start, end, colors, *, fill: float = 0.72, **style) -> None:
    """Bars from ``start`` to ``end`` in rows ``rows`` of a :func:`gantt_panel` (row ``i`` spans ``[i, i + 1)``)."""
    rows, start, end = (np.asarray(v, dtype=np.float64) for v in (rows, start, end))
    gap = (1.0 - fill) / 2
    bottom = panel.y(rows + 1 - gap)  # the panel's rows run downwards: row + 1 is the lower edge
    bars(ax, panel.x(start), bottom, panel.x(end) - panel.x(start), panel.y(rows + gap) - bottom,
         **{"facecolors": colors, "edgecolors": "white", "linewidths": 0.3, "zorder": 2, **style})


def late_bars(ax, panel: Panel, rows, start, end, due, **style) -> None:
    """Hatch the part of each bar after its due date (``max(start, due)`` to ``end``), where there is one."""
    start, end, due = (np.asarray(v, dtype=np.float64) for v in (start, end, due))
    late = end > due + 1e-9
    gantt_bars(ax, panel, np.asarray(rows)[late], np.maximum(start, due)[late], end[late], "none",
               **{"edgecolors": LATE, "hatch": "////", "linewidths": 0.8, "zorder": 3, **style})


def time_axis(ax, panel: Panel, ticks: np.ndarray, *, now: float | None = None, label: str = "time") -> None:
    """Tick labels under a Gantt panel, its label, and its :func:`time_grid`."""
    panel.xticks(ax, ticks)
    ax.text(panel.x0 + panel.w, panel.y0 - 0.045, label, ha="right", va="top", fontsize=7.5, color="#444444")
    time_grid(ax, panel, ticks, now=now)


def time_grid(ax, panel: Panel, ticks: np.ndarray, *, now: float | None = None) -> None:
    """Light vertical lines across a Gantt panel at ``ticks`` and a dashed line at the current time ``now``.

    A panel stacked over another on the same time axis gets these alone; the bottom one gets :func:`time_axis`.
    """
    ax.vlines(panel.x(ticks), panel.y0, panel.y0 + panel.h, colors="#ececec", linewidths=0.6, zorder=0.6)
    if now is not None:
        ax.vlines([panel.x(now)], panel.y0, panel.y0 + panel.h, colors="black", linestyles="--", linewidths=1.0,
                  zorder=4)


def side_text(ax, x: float, y: float, lines, fontsize: float = 8.0) -> None:
    """Lines of text in a side panel, top-left anchored at ``(x, y)`` (one artist)."""
    ax.text(x, y, "\n".join(lines), ha="left", va="top", fontsize=fontsize, linespacing=1.5)


def key_marker(ax, x: float, y: float, label: str, fontsize: float = 8.0, **style) -> None:
    """One row of a key: a marker drawn with ``style`` (``ax.scatter``'s keywords), then its meaning."""
    ax.scatter([x + 0.017], [y], **style)
    ax.text(x + 0.045, y, label, va="center", fontsize=fontsize)


def key_patch(ax, x: float, y: float, label: str, fontsize: float = 8.0, **style) -> None:
    """One row of a key: a small rectangle drawn with ``style``, then its meaning."""
    from matplotlib.patches import Rectangle

    ax.add_patch(Rectangle((x, y - 0.013), 0.034, 0.026, **{"linewidth": 0.6, **style}))
    ax.text(x + 0.045, y, label, va="center", fontsize=fontsize)


def key_line(ax, x: float, y: float, label: str, fontsize: float = 8.0, **style) -> None:
    ax.plot([x, x + 0.034], [y, y], **style)
    ax.text(x + 0.045, y, label, va="center", fontsize=fontsize)
