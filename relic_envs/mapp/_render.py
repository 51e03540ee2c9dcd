"""Pictures of routing episodes (MAPP-PC, MAPP-AR, MAPP-DS): the map and the routes.

The map is the unit square: the depot a black square, every customer a dot coloured
by the benchmark's node state (remaining prize, residual uncertainty, best active
request), and each agent's route so far a polyline in its role colour ending in the
role's marker. A side panel lists each agent's remaining budget and whether its route
is closed. Everything drawn comes from the episode's public state, so a frame is a
pure function of it. Called through :func:`relic_envs.core.render.render_frame`, which
draws :func:`draw_static` (what depends on the instance only) once per instance and
frame size and :func:`draw_state` every frame.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from relic_envs.core._draw import (
    ROLE_COLORS,
    ROLE_MARKERS,
    Panel,
    colour_bar,
    map_panel,
    nice_axis,
    objective_title,
    role_key,
    title,
)
from relic_envs.core.benchmark import ROLES
from relic_envs.mapp._routing import RoutingEpisode

PANEL_X = 0.69  # left edge of the side panel
# Each role's route is drawn shifted by a few pixels, so that routes sharing legs (and
# agents sharing a node) stay visible side by side.
ROUTE_OFFSET = {"A": np.array([-0.009, 0.009]), "B": np.array([0.0, 0.0]), "C": np.array([0.009, -0.009])}


@dataclasses.dataclass(frozen=True)
class NodeStyle:
    """How one benchmark colours its customers.

    ``value`` (N,) colours the customers where ``shown`` is true with ``cmap`` over
    ``[0, ticks[-1]]``; the others are drawn as small grey rings labelled ``hidden_label``.
    ``size`` (N,) is each shown customer's marker area in points^2.
    """

    value: np.ndarray
    shown: np.ndarray
    size: np.ndarray
    ticks: np.ndarray  # colour bar ticks, 0 to the top of the colour scale
    cmap: str
    label: str  # colour bar label
    hidden_label: str
    objective_label: str  # the objective's name in the title
    notes: tuple[str, ...] = ()  # extra lines for the side panel


def _pc_style(ep: RoutingEpisode) -> NodeStyle:
    nodes = ep.problem.node_view(ep.instance, ep.dyn, ep.t)
    prizes = np.asarray(ep.instance.prizes)
    ticks = nice_axis(float(prizes.max()) or 1.0, 3)
    total = float(prizes.sum())
    return NodeStyle(
        value=nodes["prize"], shown=np.asarray(nodes["open"], bool), size=25.0 + 90.0 * prizes / ticks[-1], ticks=ticks,
        cmap="YlOrBr", label="prize not yet collected", hidden_label="collected",
        objective_label="collected prize", notes=(f"of {total:.1f} in all",),
    )


def _ar_style(ep: RoutingEpisode) -> NodeStyle:
    nodes = ep.problem.node_view(ep.instance, ep.dyn, ep.t)
    u = np.asarray(nodes["uncertainty"])
    shown = np.asarray(nodes["unscanned"], bool)
    n = ep.instance.n_nodes
    return NodeStyle(
        value=u, shown=shown, size=np.full(n, 55.0), ticks=np.array([0.0, 0.5, 1.0]), cmap="viridis",
        label="residual uncertainty u", hidden_label="scanned (u = 0)",
        objective_label="uncertainty removed", notes=(f"of {n - 1} at the start", f"sigma = {ep.instance.sigma:g}"),
    )


def _ds_style(ep: RoutingEpisode) -> NodeStyle:
    nodes = ep.problem.node_view(ep.instance, ep.dyn, ep.t)
    value = np.asarray(nodes["value"])
    ttl = np.asarray(nodes["ttl"])
    shown = np.asarray(nodes["active"], bool)
    released = float(nodes["released"])
    largest = float(np.max(np.where(ep.dyn["fire"], ep.dyn["value"], 0.0))) or 1.0  # over the whole stream
    return NodeStyle(
        value=value, shown=shown, size=20.0 + 12.0 * ttl, ticks=nice_axis(largest, 3), cmap="plasma_r",
        label="best active request value", hidden_label="no active request",
        objective_label="served value", notes=(f"released so far {released:.1f}", "size: time to live"),
    )


NODE_STYLES: dict[str, Callable[[RoutingEpisode], NodeStyle]] = {
    "mapp_pc": _pc_style, "mapp_ar": _ar_style, "mapp_ds": _ds_style,
}


def draw(ax, episode: RoutingEpisode) -> None:
    """Draw a routing episode on the frame axes: :func:`draw_static`, then :func:`draw_state`."""
    draw_static(ax, episode)
    draw_state(ax, episode)


def draw_static(ax, episode: RoutingEpisode) -> None:
    """What depends on the instance only: the map's frame, the colour bar and the key."""
    style = NODE_STYLES[episode.bench.name](episode)
    map_panel(ax).outline(ax)
    colour_bar(ax, (PANEL_X + 0.01, 0.2, 0.27, 0.028), style.cmap, style.ticks, style.label)
    ax.scatter([PANEL_X + 0.02], [0.1], s=22, facecolors="white", edgecolors="#999999", linewidths=0.9)
    ax.text(PANEL_X + 0.045, 0.1, style.hidden_label, va="center", fontsize=8.5)
    ax.scatter([PANEL_X + 0.02], [0.055], marker="s", s=40, c="black")
    ax.text(PANEL_X + 0.045, 0.055, "depot", va="center", fontsize=8.5)


def draw_state(ax, episode: RoutingEpisode) -> None:
    """What changes with the state: title, customers, routes, agents, budgets."""
    style = NODE_STYLES[episode.bench.name](episode)
    title(ax, objective_title(episode, style.objective_label, digits=2))
    panel = map_panel(ax)
    _draw_nodes(ax, panel, episode, style)
    _draw_routes(ax, panel, episode)
    _draw_side(ax, episode, style)


def _draw_nodes(ax, panel: Panel, ep: RoutingEpisode, style: NodeStyle) -> None:
    xy = panel.xy(ep.instance.coords)
    shown = np.asarray(style.shown, bool).copy()
    shown[0] = False
    hidden = ~shown
    hidden[0] = False
    ax.scatter(xy[hidden, 0], xy[hidden, 1], s=22, facecolors="white", edgecolors="#999999", linewidths=0.9, zorder=2)
    ax.scatter(xy[shown, 0], xy[shown, 1], c=np.asarray(style.value)[shown], s=np.asarray(style.size)[shown],
               cmap=style.cmap, vmin=0.0, vmax=float(style.ticks[-1]), edgecolors="#333333", linewidths=0.5, zorder=3)
    ax.scatter([xy[0, 0]], [xy[0, 1]], marker="s", s=110, c="black", zorder=6)


def _draw_routes(ax, panel: Panel, ep: RoutingEpisode) -> None:
    coords = np.asarray(ep.instance.coords)
    for k, role in enumerate(ROLES):
        pts = panel.xy(coords[np.asarray(ep.routes[k], dtype=np.int64)] + ROUTE_OFFSET[role])
        colour = ROLE_COLORS[role]
        ax.plot(pts[:, 0], pts[:, 1], color=colour, linewidth=2.2, alpha=0.85, zorder=4, solid_capstyle="round")
        if len(pts) > 1 and not ep.home[k]:  # an arrow head on the last leg shows the direction of travel
            (x0, y0), (x1, y1) = pts[-2], pts[-1]
            ax.annotate("", xy=(x1, y1), xytext=(x0 + 0.6 * (x1 - x0), y0 + 0.6 * (y1 - y0)),
                        arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 2.2, "mutation_scale": 14}, zorder=5)
        ax.scatter(pts[-1:, 0], pts[-1:, 1], marker=ROLE_MARKERS[role], s=95, c=colour, edgecolors="black",
                   linewidths=0.5 if ep.home[k] else 1.0, alpha=0.55 if ep.home[k] else 1.0, zorder=7)


def _draw_side(ax, ep: RoutingEpisode, style: NodeStyle) -> None:
    full = float(ep.instance.budget)
    labels = {}
    for k, role in enumerate(ROLES):
        where = "home (route closed)" if ep.home[k] else f"at node {int(ep.pos[k])}"
        labels[role] = f"{role}: {where}\nbudget left {ep.budget[k]:.2f} of {full:.2f}"
    role_key(ax, PANEL_X + 0.015, 0.85, labels, step=0.105)
    lines = [f"{style.objective_label}: {ep.objective():.2f}", *style.notes]
    if getattr(ep, "fallbacks", None):
        lines.append(f"returns sent home: {len(ep.fallbacks)}")
    ax.text(PANEL_X, 0.5, "\n".join(lines), ha="left", va="top", fontsize=8.5, linespacing=1.5)
