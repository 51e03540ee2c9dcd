"""Pictures of DCOP sweep episodes: DGC, DiMES, SensorDCSP, SHDS.

Every frame has the same layout: a title (benchmark, sweep, current cost), the
benchmark's picture of the assignment on the left, and a side panel with the role
key, the cost broken into the paper's terms, and how many variables changed value in
the last sweep. What each benchmark draws:

- DGC: the constraint graph (a spring layout computed once per instance from a fixed
  seed), vertices filled with their colour, marker shape = owning role, conflicting
  (monochromatic) edges thick red with width by weight, vertices changed in the last
  sweep ringed in black.
- DiMES: meetings x time slots; each attendance a marker in its meeting's row at its
  chosen slot, in its owning role's colour and shape; the majority slot of each meeting shaded green,
  off-majority slots red; attendances whose person has too little travel time between
  its two meetings ringed in black.
- SensorDCSP: targets on a circle (size = value, colour = coverage status, label =
  sensors tracking it), sensors near the targets they can see, a line from each awake
  sensor to the target it tracks (role colour), incompatible sensors on one target red.
- SHDS: the neighbourhood's load per slot stacked by role against the capacity, the
  overload hatched, the load if every device ran at its preferred start dotted, and
  the price curve underneath.

Called through :func:`relic_envs.core.render.render_frame`, which draws
:func:`draw_static` (what depends on the instance only) once per instance and frame
size and :func:`draw_state` every frame.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np

from relic_envs.core._draw import (
    ROLE_COLORS,
    ROLE_MARKERS,
    Panel,
    bars,
    nice_axis,
    objective_title,
    role_key,
    square_panel,
    title,
)
from relic_envs.core.benchmark import ROLES
from relic_envs.dcop._sweep import SweepEpisode

MAIN_BOX = (0.075, 0.08, 0.585, 0.82)  # (x, y, w, h) of the picture in figure fractions
PANEL_X = 0.695  # left edge of the side panel
FONT = 8.0  # side panel text size
BAD = "#CC3311"  # conflicts, overload, uncovered targets
GOOD = "#44AA99"
WARN = "#EE9933"


def draw(ax, episode: SweepEpisode) -> None:
    """Draw a DCOP episode on the frame axes: :func:`draw_static`, then :func:`draw_state`."""
    draw_static(ax, episode)
    draw_state(ax, episode)


def draw_static(ax, episode: SweepEpisode) -> None:
    """What depends on the instance only: role key, the benchmark's key, axes and labels."""
    counts = {r: episode.owned[r].size for r in ROLES}
    fill = "white" if episode.bench.name == "dgc" else None  # DGC: colour is the vertex's value, shape the role
    role_key(ax, PANEL_X + 0.015, 0.86, {r: f"role {r}: {counts[r]} variables" for r in ROLES}, step=0.055,
             fill=fill, fontsize=FONT)
    DRAWERS[episode.bench.name][0](ax, episode)


def draw_state(ax, episode: SweepEpisode) -> None:
    """What changes with the assignment: title, the benchmark's picture, the cost terms."""
    title(ax, objective_title(episode, "cost", unit="sweep"))
    notes = DRAWERS[episode.bench.name][1](ax, episode)
    ctx = episode.ctx
    changed = int(np.count_nonzero(ctx.x != ctx.x_prev)) if ctx.t > 0 else 0
    lines = [*notes, f"changed in last sweep: {changed}"]
    ax.text(PANEL_X, 0.67, "\n".join(lines), ha="left", va="top", fontsize=FONT, linespacing=1.55)


def _key_marker(ax, y: float, label: str, **style) -> None:
    """One row of a side-panel key: a marker, then its meaning."""
    ax.scatter([PANEL_X + 0.03], [y], **{"s": 60, "linewidths": 0.6, **style})
    ax.text(PANEL_X + 0.06, y, label, va="center", fontsize=FONT)


def _key_line(ax, y: float, label: str, **style) -> None:
    ax.plot([PANEL_X + 0.01, PANEL_X + 0.05], [y, y], **style)
    ax.text(PANEL_X + 0.06, y, label, va="center", fontsize=FONT)


def _key_patch(ax, y: float, label: str, **style) -> None:
    from matplotlib.patches import Rectangle

    ax.add_patch(Rectangle((PANEL_X + 0.012, y - 0.015), 0.036, 0.03, **{"linewidth": 0.6, **style}))
    ax.text(PANEL_X + 0.06, y, label, va="center", fontsize=FONT)


def _key_note(ax, text: str) -> None:
    ax.text(PANEL_X, 0.035, text, fontsize=FONT, color="#444444", linespacing=1.4)


# -- DGC ---------------------------------------------------------------------------------
VERTEX_COLORS = ("#DDAA33", "#0077BB", "#BBBBBB")  # the three colours of DGC (none a role colour)


def _real_edges(instance) -> tuple[np.ndarray, np.ndarray]:
    """``(E', 2)`` endpoints and ``(E',)`` weights without the padding self-loops."""
    keep = instance.edges[:, 0] != instance.edges[:, 1]
    return np.asarray(instance.edges[keep], dtype=np.int64), np.asarray(instance.weights[keep], dtype=np.float64)


def graph_layout(n: int, pairs: np.ndarray, seed: int) -> np.ndarray:
    """``(n, 2)`` positions in the unit square: a Fruchterman-Reingold layout from a fixed seed.

    Deterministic: the same graph and seed give the same layout (memoised per graph).
    """
    pairs = np.ascontiguousarray(np.sort(np.asarray(pairs, dtype=np.int64), axis=1))
    return _layout(n, pairs.tobytes(), int(seed)).copy()


@lru_cache(maxsize=64)
def _layout(n: int, pair_bytes: bytes, seed: int, iterations: int = 200) -> np.ndarray:
    pairs = np.frombuffer(pair_bytes, dtype=np.int64).reshape(-1, 2)
    pos = np.random.default_rng(seed).random((n, 2))
    k = 2.0 / np.sqrt(n)  # ideal edge length (generous: the layout is rescaled to the square at the end)
    step = 0.1
    for _ in range(iterations):
        diff = pos[:, None, :] - pos[None, :, :]
        d2 = np.maximum(np.sum(diff * diff, axis=-1), 1e-6)
        disp = np.sum(diff * (k * k / d2)[:, :, None], axis=1)  # repulsion between every pair
        e = diff[pairs[:, 0], pairs[:, 1]]
        pull = e * (np.sqrt(np.sum(e * e, axis=1)) / k)[:, None]  # attraction along the edges
        np.subtract.at(disp, pairs[:, 0], pull)
        np.add.at(disp, pairs[:, 1], pull)
        disp -= 0.01 * n * k * (pos - 0.5)  # gravity keeps stray vertices near the rest
        length = np.maximum(np.sqrt(np.sum(disp * disp, axis=1)), 1e-9)
        pos += disp / length[:, None] * np.minimum(length, step)[:, None]
        step *= 0.97
    lo, hi = np.quantile(pos, 0.01, axis=0), np.quantile(pos, 0.99, axis=0)  # a lone far vertex must not
    return np.clip((pos - lo) / np.maximum(hi - lo, 1e-9), -0.02, 1.02)  # shrink the rest of the picture


def _dgc_static(ax, ep: SweepEpisode) -> None:
    for c, colour in enumerate(VERTEX_COLORS):
        ax.scatter([PANEL_X + 0.03 + 0.07 * c], [0.33], s=60, c=colour, edgecolors="#555555", linewidths=0.6)
        ax.text(PANEL_X + 0.045 + 0.07 * c, 0.33, str(c), va="center", fontsize=FONT)
    ax.text(PANEL_X, 0.37, "vertex colour (value)", fontsize=FONT)
    _key_line(ax, 0.26, "conflict (width: weight)", color=BAD, linewidth=2.5)
    _key_marker(ax, 0.2, "red ring: in a conflict", facecolors="white", edgecolors=BAD, linewidths=1.6)
    _key_marker(ax, 0.14, "black ring: just changed", facecolors="white", edgecolors="black", linewidths=1.6)
    _key_note(ax, "marker shape: owning role")


def _dgc_state(ax, ep: SweepEpisode) -> list[str]:
    from matplotlib.collections import LineCollection

    inst, x = ep.instance, ep.ctx.x
    edges, weights = _real_edges(inst)
    panel = square_panel(ax, *MAIN_BOX, (-0.03, 1.03))
    xy = panel.xy(graph_layout(x.size, edges, inst.seed))
    clash = x[edges[:, 0]] == x[edges[:, 1]]
    segments = xy[edges]
    ax.add_collection(LineCollection(segments[~clash], colors="#c8c8c8", linewidths=0.6, zorder=1))
    ax.add_collection(LineCollection(segments[clash], colors=BAD, linewidths=0.8 + 2.4 * weights[clash] / 100.0,
                                     zorder=2))
    in_conflict = np.zeros(x.size, dtype=bool)
    in_conflict[edges[clash].ravel()] = True
    changed = x != ep.ctx.x_prev
    fills = np.asarray(VERTEX_COLORS)[x]
    for role in ROLES:
        idx = ep.owned[role]
        edge = np.where(changed[idx], "black", np.where(in_conflict[idx], BAD, "#555555"))
        width = np.where(changed[idx] | in_conflict[idx], 1.6, 0.6)
        ax.scatter(xy[idx, 0], xy[idx, 1], marker=ROLE_MARKERS[role], s=46, c=fills[idx], edgecolors=edge,
                   linewidths=width, zorder=3)
    return [f"conflicting edges: {int(clash.sum())} of {edges.shape[0]}",
            f"their weight (= cost): {weights[clash].sum():.0f}"]


# -- DiMES -------------------------------------------------------------------------------
MAJORITY = "#cfead6"
OFF_MAJORITY = "#f6c9be"


def cell_offsets(meeting: np.ndarray, x: np.ndarray, cols: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Where each attendance's dot sits inside its (meeting, slot) cell, as fractions of the cell.

    The attendances of one cell fill a ``cols``-wide grid in variable order, with room
    for the largest meeting, so the spacing does not change from sweep to sweep.
    """
    n = x.size
    order = np.lexsort((np.arange(n), x, meeting))
    key = (meeting * (int(x.max()) + 1) + x)[order]
    start = np.r_[True, key[1:] != key[:-1]]
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - np.maximum.accumulate(np.where(start, np.arange(n), 0))
    rows = -(-int(np.bincount(meeting).max()) // cols)
    return (rank % cols + 0.5) / cols, (rank // cols + 0.5) / rows


def _dimes_panel(ep: SweepEpisode) -> Panel:
    from relic_envs.dcop.dimes.simulator import N_SLOTS

    x0, y0, w, h = MAIN_BOX
    n_meetings = int(ep.instance.meeting.max()) + 1
    return Panel(x0, y0 + 0.03, w, h - 0.03, (0.0, float(N_SLOTS)), (float(n_meetings), 0.0))  # m0 on top


def _dimes_static(ax, ep: SweepEpisode) -> None:
    from relic_envs.dcop.dimes.simulator import N_SLOTS

    panel = _dimes_panel(ep)
    n_meetings = int(panel.ylim[0])
    ax.hlines(panel.y(np.arange(1, n_meetings)), panel.x0, panel.x0 + panel.w, colors="#ececec", linewidths=0.6,
              zorder=0.6)
    panel.outline(ax)
    panel.xticks(ax, np.arange(0, N_SLOTS, 2) + 0.5, [str(v) for v in range(0, N_SLOTS, 2)])
    panel.yticks(ax, np.arange(n_meetings) + 0.5, [f"m{m}" for m in range(n_meetings)], grid=False)
    ax.text(panel.x0 + panel.w / 2, MAIN_BOX[1] - 0.035, "time slot", ha="center", va="top", fontsize=FONT)
    _key_patch(ax, 0.3, "majority slot", facecolor=MAJORITY, edgecolor="#888888")
    _key_patch(ax, 0.24, "off-majority slot", facecolor=OFF_MAJORITY, edgecolor="#888888")
    _key_marker(ax, 0.18, "too little travel time", s=24, c="white", edgecolors="black", linewidths=1.1)
    _key_note(ax, "marker: one attendance,\nplaced at its meeting and slot")


def _dimes_state(ax, ep: SweepEpisode) -> list[str]:
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    from relic_envs.dcop.dimes import simulator as sim

    inst, x = ep.instance, ep.ctx.x
    panel = _dimes_panel(ep)
    counts = sim.slot_counts(inst, x)
    majority = counts.argmax(axis=1)  # the first of tied slots; the cost does not depend on which
    m_idx, s_idx = np.nonzero(counts)
    cells = [Rectangle((float(panel.x(s)), float(panel.y(m + 1))), panel.scale_x(1.0), -panel.scale_y(1.0))
             for m, s in zip(m_idx, s_idx)]
    colours = np.where(s_idx == majority[m_idx], MAJORITY, OFF_MAJORITY)
    ax.add_collection(PatchCollection(cells, facecolors=colours, edgecolors="none", zorder=1))
    dx, dy = cell_offsets(inst.meeting, x)
    px, py = panel.x(x + dx), panel.y(inst.meeting + dy)
    gap = np.abs(x - x[sim.partner(x.size)])
    short = gap < sim.travel_time(inst)  # the person cannot travel between its two meetings in time
    owner = np.asarray(inst.owner)
    for r, role in enumerate(ROLES):
        sel = owner == r
        ax.scatter(px[sel], py[sel], marker=ROLE_MARKERS[role], s=16, c=ROLE_COLORS[role],
                   edgecolors=np.where(short[sel], "black", "none"), linewidths=1.1, zorder=3)
    off = int(np.sum(counts.sum(axis=1) - counts.max(axis=1)))
    even = np.arange(0, x.size, 2)
    travel = float(np.sum(np.maximum(0.0, sim.travel_time(inst)[even] - gap[even])))
    pref = float(np.sum(inst.pref[np.arange(x.size), x]))
    return [f"off-majority: {off} \u00d7 {sim.OFF_SLOT_COST:g}", f"travel shortfall: {travel:g} \u00d7 {sim.TRAVEL_COST:g}",
            f"preference cost: {pref:.1f}"]


# -- SensorDCSP --------------------------------------------------------------------------
def sensor_layout(instance) -> tuple[np.ndarray, np.ndarray]:
    """``(T, 2)`` targets on a circle and ``(N, 2)`` sensors near the targets they can see.

    A sensor sits between its candidate targets, pulled toward the middle, with a small
    jitter from a fixed seed; sensors that see no target line up at the bottom.
    """
    cand = np.asarray(instance.candidate)
    t = instance.target_value.size
    angle = np.pi / 2 - 2 * np.pi * np.arange(t) / t
    targets = 0.5 + 0.45 * np.stack([np.cos(angle), np.sin(angle)], axis=1)
    valid = cand >= 0
    n_seen = valid.sum(axis=1)
    seen_xy = np.where(valid[:, :, None], targets[np.where(valid, cand, 0)], 0.0)
    mean = seen_xy.sum(axis=1) / np.maximum(n_seen, 1)[:, None]
    pull = np.where(n_seen == 1, 0.8, 0.92)[:, None]
    jitter = np.random.default_rng(int(instance.seed)).uniform(-0.035, 0.035, size=(cand.shape[0], 2))
    sensors = 0.5 + pull * (mean - 0.5) + jitter
    blind = np.flatnonzero(n_seen == 0)
    sensors[blind] = np.stack([0.03 + 0.028 * np.arange(blind.size), np.full(blind.size, -0.03)], axis=1)
    return targets, sensors


def _sensor_static(ax, ep: SweepEpisode) -> None:
    from relic_envs.dcop.sensor_dcsp.simulator import REQUIRED

    _key_marker(ax, 0.31, f"tracked by exactly {REQUIRED}", c=GOOD, edgecolors="black")
    _key_marker(ax, 0.255, "under-covered", c=BAD, edgecolors="black")
    _key_marker(ax, 0.2, "over-covered", c=WARN, edgecolors="black")
    _key_marker(ax, 0.145, "asleep (hollow)", s=24, facecolors="white", edgecolors="#555555", linewidths=0.8)
    _key_note(ax, "disc: target (size: value, label:\nsensors on it); bottom row:\nsensors that see no target")


def _sensor_state(ax, ep: SweepEpisode) -> list[str]:
    from matplotlib.collections import LineCollection

    from relic_envs.dcop.sensor_dcsp import simulator as sim

    inst, x = ep.instance, ep.ctx.x
    panel = square_panel(ax, *MAIN_BOX, (-0.06, 1.06))
    t_xy, s_xy = (panel.xy(p) for p in sensor_layout(inst))
    g = sim.tracked(inst, x)
    n = sim.coverage(inst, x)
    awake = np.flatnonzero(g >= 0)
    same = (g[awake][:, None] == g[awake][None, :]) & np.asarray(inst.incompatible)[np.ix_(awake, awake)]
    clashing = np.zeros(x.size, dtype=bool)
    clashing[awake[same.any(axis=1)]] = True
    owner = np.asarray(inst.owner)
    links = np.stack([s_xy[awake], t_xy[g[awake]]], axis=1)
    ax.add_collection(LineCollection(links, colors=[ROLE_COLORS[ROLES[owner[s]]] for s in awake], linewidths=0.9,
                                     alpha=0.75, zorder=1))
    for r, role in enumerate(ROLES):
        on, off = (owner == r) & (g >= 0), (owner == r) & (g < 0)
        ax.scatter(s_xy[on, 0], s_xy[on, 1], marker=ROLE_MARKERS[role], s=18, c=ROLE_COLORS[role],
                   edgecolors=np.where(clashing[on], BAD, "none"), linewidths=1.4, zorder=3)
        ax.scatter(s_xy[off, 0], s_xy[off, 1], marker=ROLE_MARKERS[role], s=14, facecolors="white",
                   edgecolors=ROLE_COLORS[role], linewidths=0.8, zorder=3)
    status = np.where(n < sim.REQUIRED, BAD, np.where(n > sim.REQUIRED, WARN, GOOD))
    ax.scatter(t_xy[:, 0], t_xy[:, 1], s=90 + 260 * np.asarray(inst.target_value) / 100.0, c=status,
               edgecolors="black", linewidths=0.8, zorder=4)
    for k in range(n.size):
        ax.text(t_xy[k, 0], t_xy[k, 1], str(int(n[k])), ha="center", va="center", fontsize=7.5, color="white",
                fontweight="bold", zorder=5)
    lost = float(np.sum(inst.target_value[n < sim.REQUIRED]))
    return [f"under-covered targets: {int(np.sum(n < sim.REQUIRED))}/{n.size}", f"their value lost: {lost:.1f}",
            f"excess trackers: {int(np.sum(np.maximum(0, n - sim.REQUIRED)))}",
            f"incompatible pairs: {int(same.sum()) // 2} \u00d7 {sim.INCOMPATIBLE_COST:g}",
            f"sensors awake: {awake.size}/{x.size}"]


# -- SHDS --------------------------------------------------------------------------------
PRICE = "#AA3377"


def _shds_panels(ep: SweepEpisode) -> tuple[Panel, Panel, np.ndarray]:
    """The load panel, the price panel, and the load axis ticks.

    The load scale is fixed per instance (so frames of an episode compare): it covers
    1.4 x capacity, the load at the preferred starts and the initial load; a taller
    load is cut at the top of the panel.
    """
    from relic_envs.dcop.shds.simulator import N_SLOTS

    inst = ep.instance
    cap = float(np.max(inst.capacity))
    ticks = nice_axis(max(1.4 * cap, float(_load(inst, inst.pref_start).max()), float(_load(inst, inst.x0).max())))
    x0, y0, w, h = MAIN_BOX
    upper = Panel(x0, y0 + 0.27, w, h - 0.27, (0.0, float(N_SLOTS)), (0.0, float(ticks[-1])))
    price = np.asarray(inst.price)
    lower = Panel(x0, y0 + 0.03, w, 0.17, (0.0, float(N_SLOTS)),
                  (float(np.floor(price.min() * 2) / 2), float(np.ceil(price.max() * 2) / 2)))
    return upper, lower, ticks


def _device_load(inst, x: np.ndarray) -> np.ndarray:
    """``(N, 24)`` each device's load (kW) when started at ``x``."""
    from relic_envs.dcop.shds.simulator import OCCUPANCY

    return OCCUPANCY[inst.duration, x] * np.asarray(inst.power)[:, None]


def _load(inst, x: np.ndarray) -> np.ndarray:
    return _device_load(inst, x).sum(axis=0)


def _shds_static(ax, ep: SweepEpisode) -> None:
    from relic_envs.dcop.shds.simulator import N_SLOTS

    inst = ep.instance
    upper, lower, ticks = _shds_panels(ep)
    x0, y0 = MAIN_BOX[:2]
    upper.outline(ax)
    upper.yticks(ax, ticks)
    ax.text(x0 - 0.065, upper.y0 + upper.h / 2, "load (kW)", rotation=90, ha="center", va="center", fontsize=FONT)
    lower.outline(ax)
    lower.yticks(ax, lower.ylim)
    slots = np.arange(N_SLOTS)
    ax.plot(lower.x(slots + 0.5), lower.y(inst.price), color=PRICE, linewidth=1.6, marker="o", markersize=2.5)
    ax.text(x0 - 0.065, lower.y0 + lower.h / 2, "price", rotation=90, ha="center", va="center", fontsize=FONT)
    lower.xticks(ax, np.arange(0, N_SLOTS, 3) + 0.5, [str(v) for v in range(0, N_SLOTS, 3)])
    ax.text(x0 + upper.w / 2, y0 - 0.035, "time slot (hour)", ha="center", va="top", fontsize=FONT)
    _key_line(ax, 0.31, "capacity", color="black", linestyle="--", linewidth=1.3)
    _key_line(ax, 0.255, "load at preferred starts", color="#555555", linestyle=":", linewidth=1.3)
    _key_patch(ax, 0.2, "overload", facecolor="none", edgecolor=BAD, hatch="////", linewidth=1.0)
    _key_line(ax, 0.145, "price per kWh", color=PRICE, linewidth=1.6)
    _key_note(ax, "bars: load of each role's\ndevices, stacked")


def _shds_state(ax, ep: SweepEpisode) -> list[str]:
    from relic_envs.dcop.shds import simulator as sim

    inst, x = ep.instance, ep.ctx.x
    upper, _, _ = _shds_panels(ep)
    owner = np.asarray(inst.owner)
    kw = _device_load(inst, x)
    by_role = np.stack([kw[owner == r].sum(axis=0) for r in range(len(ROLES))])
    load, cap = by_role.sum(axis=0), np.asarray(inst.capacity)
    slots, edges = np.arange(sim.N_SLOTS), np.arange(sim.N_SLOTS + 1)
    top = upper.ylim[1]
    bar_w, bottom = upper.scale_x(0.8), np.zeros(sim.N_SLOTS)
    for r, role in enumerate(ROLES):
        end = np.minimum(bottom + by_role[r], top)
        bars(ax, upper.x(slots + 0.1), upper.y(np.minimum(bottom, top)), bar_w, upper.y(end) - upper.y(np.minimum(bottom, top)),
              facecolors=ROLE_COLORS[role], edgecolors="white", linewidths=0.3, zorder=2)
        bottom = bottom + by_role[r]
    over = load > cap
    hi = np.minimum(load, top)[over]
    bars(ax, upper.x(slots[over] + 0.1), upper.y(cap[over]), bar_w, upper.y(hi) - upper.y(cap[over]),
          facecolors="none", edgecolors=BAD, hatch="////", linewidths=1.0, zorder=3)
    preferred = _load(inst, inst.pref_start)  # drawn over the bars, so not in the static background
    ax.step(upper.x(edges), upper.y(np.r_[cap, cap[-1]]), where="post", color="black", linestyle="--", linewidth=1.3,
            zorder=4)
    ax.step(upper.x(edges), upper.y(np.r_[preferred, preferred[-1]]), where="post", color="#555555", linestyle=":",
            linewidth=1.3, zorder=4)
    energy = float(np.sum(np.asarray(inst.price) * load))
    preference = sim.PREFERENCE_COST * float(np.abs(x - inst.pref_start).sum())
    overload = float(np.maximum(0.0, load - cap).sum())
    return [f"energy cost: {energy:.1f}", f"preference cost: {preference:.0f}",
            f"overload: {overload:.2f} kW \u00d7 {sim.OVERLOAD_COST:g}"]


Drawer = Callable[[object, SweepEpisode], object]
#: Per benchmark: (draw the static part, draw the state and return the side panel's cost lines).
DRAWERS: dict[str, tuple[Drawer, Drawer]] = {
    "dgc": (_dgc_static, _dgc_state),
    "dimes": (_dimes_static, _dimes_state),
    "sensor_dcsp": (_sensor_static, _sensor_state),
    "shds": (_shds_static, _shds_state),
}
