"""Pictures of constructive episodes: HMTSP, FSTSP, FJAGV, MRCPS.

Every frame has a title (benchmark, decision, current objective), the benchmark's
picture on the left and a side panel with the role key and the objective's parts:

- HMTSP: the unit square with the three depots (squares in the vehicles' role
  colours), the customers (marker = task type; grey until assigned, then filled with
  the vehicle's colour) and each route so far from its depot, the return leg dotted.
  Side panel: each vehicle's route cost ``L_k`` as a bar against its budget ``B_k``
  (the black tick; the excess red).
- FSTSP: the depot (black square), the customers (ringed when drone-eligible; filled
  in role B's colour once the truck served them, role A's once the drone did), the
  truck tour so far (solid), each drone sortie launch -> customer -> recovery (dashed),
  recovery nodes marked with role C's marker, the way back to the depot dotted until the
  tour is closed.
- FJAGV: a machine Gantt chart (bars in their job's colour; the part of a job's last
  operation after its due date hatched red) over a second chart of the AGVs' trips,
  deadhead (grey) then loaded (role C's colour), on one time axis.
- MRCPS: a worker Gantt chart (bars in their project's colour) over one row per
  project from its first start to its completion, its due date a black tick and the
  tardy part hatched red.

Gantt time axes run to a round value at least the instance's estimated makespan,
further only if the schedule does; a dashed line is the current event time. Called
through :func:`relic_envs.core.render.render_frame`, which draws :func:`draw_static`
(what depends on the instance only) once per instance and frame size and
:func:`draw_state` every frame.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from relic_envs.co._construct import SKIP, ConstructiveEpisode
from relic_envs.core._draw import (
    LATE,
    ROLE_COLORS,
    ROLE_MARKERS,
    bars,
    cycle_colors,
    gantt_bars,
    gantt_panel,
    gantt_rows,
    key_line,
    key_marker,
    key_patch,
    late_bars,
    map_panel,
    objective_title,
    role_key,
    side_text,
    time_axis,
    time_grid,
    title,
)
from relic_envs.core.benchmark import ROLES

PANEL_X = 0.72  # left edge of the side panel
FONT = 8.0
GREY = "#bbbbbb"
TASK_MARKERS = ("o", "D", "v")  # HMTSP task types (role markers are o, s, ^: shape means role elsewhere)


def draw(ax, episode: ConstructiveEpisode) -> None:
    """Draw a constructive episode on the frame axes: :func:`draw_static`, then :func:`draw_state`."""
    draw_static(ax, episode)
    draw_state(ax, episode)


def draw_static(ax, episode: ConstructiveEpisode) -> None:
    """What depends on the instance only: the role key, the map or the Gantt rows, the key of the marks."""
    labels, static, _ = DRAWERS[episode.bench.name]
    role_key(ax, PANEL_X + 0.015, 0.86, labels, step=0.05, fontsize=FONT)
    static(ax, episode)


def draw_state(ax, episode: ConstructiveEpisode) -> None:
    """What changes with the construction: title, the benchmark's picture, the side panel's lines."""
    state = DRAWERS[episode.bench.name][2]
    title(ax, objective_title(episode, "cost", unit="decision", digits=2))
    side_text(ax, PANEL_X, 0.68, state(ax, episode))


# -- HMTSP ---------------------------------------------------------------------------
def _hmtsp_static(ax, ep: ConstructiveEpisode) -> None:
    inst, panel = ep.instance, map_panel(ax)
    panel.outline(ax)
    pts = panel.xy(inst.customers)
    for c, marker in enumerate(TASK_MARKERS):
        mine = inst.task_type == c
        ax.scatter(pts[mine, 0], pts[mine, 1], marker=marker, s=16, c="white", edgecolors=GREY, linewidths=0.7, zorder=2)
    depots = panel.xy(inst.depots)
    ax.scatter(depots[:, 0], depots[:, 1], marker="s", s=70, c=[ROLE_COLORS[r] for r in ROLES], edgecolors="black",
               linewidths=1.0, zorder=6)
    y = 0.14
    for c, marker in enumerate(TASK_MARKERS):
        ax.scatter([PANEL_X + 0.017 + 0.07 * c], [y], marker=marker, s=16, c="white", edgecolors="#666666", linewidths=0.7)
        ax.text(PANEL_X + 0.03 + 0.07 * c, y, f"{c}", va="center", fontsize=FONT)
    ax.text(PANEL_X, y + 0.035, "task types; squares: depots", fontsize=FONT, va="center")
    ax.text(PANEL_X, 0.46, "route cost L_k vs budget B_k", fontsize=FONT, va="center")


def _hmtsp_state(ax, ep: ConstructiveEpisode) -> list[str]:
    inst, st, panel = ep.instance, ep.state, map_panel(ax)
    pts = np.vstack([inst.customers, inst.depots])  # node n + k is depot k
    for k, role in enumerate(ROLES):
        route = st.routes[k]
        if not route:
            continue
        path = panel.xy(pts[[st.depot[k], *route]])
        ax.plot(path[:, 0], path[:, 1], color=ROLE_COLORS[role], linewidth=1.1, zorder=3)
        back = panel.xy(pts[[route[-1], st.depot[k]]])
        ax.plot(back[:, 0], back[:, 1], color=ROLE_COLORS[role], linewidth=0.9, linestyle=":", zorder=3)
        served = panel.xy(inst.customers[route])
        types = inst.task_type[route]
        for c, marker in enumerate(TASK_MARKERS):
            mine = types == c
            ax.scatter(served[mine, 0], served[mine, 1], marker=marker, s=16, c=ROLE_COLORS[role], edgecolors="black",
                       linewidths=0.4, zorder=4)
    _budget_bars(ax, st.lengths, inst.budget)
    excess = np.maximum(st.lengths - inst.budget, 0.0)
    return [f"assigned: {int((st.vehicle >= 0).sum())}/{st.n}", "L_k: " + " / ".join(f"{v:.1f}" for v in st.lengths),
            f"sum {st.lengths.sum():.1f}, max {st.lengths.max():.1f}", f"over budget: {excess.sum():.1f}",
            f"forced assignments: {st.forced}"]


def _budget_bars(ax, lengths: np.ndarray, budget: np.ndarray) -> None:
    """One bar per vehicle: ``L_k`` against ``B_k`` (a black tick), the excess red."""
    top = max(float(budget.max()), float(lengths.max())) * 1.05
    x0, w, h = PANEL_X + 0.03, 0.22, 0.025
    ys = 0.42 - 0.045 * np.arange(len(ROLES)) - h
    scale = w / max(top, 1e-9)
    bars(ax, x0, ys, w, h, facecolors="#f2f2f2", edgecolors="#999999", linewidths=0.5, zorder=2)
    bars(ax, x0, ys, np.minimum(lengths, budget) * scale, h, facecolors=[ROLE_COLORS[r] for r in ROLES], zorder=3)
    over = np.maximum(lengths - budget, 0.0)
    bars(ax, x0 + budget * scale, ys, over * scale, h, facecolors=LATE, zorder=3)
    ax.vlines(x0 + budget * scale, ys - 0.006, ys + h + 0.006, colors="black", linewidths=1.2, zorder=4)
    for y, role in zip(ys, ROLES):
        ax.text(x0 - 0.008, y + h / 2, role, ha="right", va="center", fontsize=FONT)


# -- FSTSP ---------------------------------------------------------------------------
def _fstsp_nodes(inst) -> np.ndarray:
    return np.vstack([inst.depot[None, :], inst.customers])  # node 0 is the depot, node i customer i


def _fstsp_static(ax, ep: ConstructiveEpisode) -> None:
    inst, panel = ep.instance, map_panel(ax)
    panel.outline(ax)
    pts = panel.xy(inst.customers)
    ax.scatter(pts[~inst.eligible, 0], pts[~inst.eligible, 1], s=12, c=GREY, edgecolors="none", zorder=2)
    ax.scatter(pts[inst.eligible, 0], pts[inst.eligible, 1], s=18, c="white", edgecolors="#666666", linewidths=0.8,
               zorder=2)
    depot = panel.xy(inst.depot)
    ax.scatter(depot[:, 0], depot[:, 1], marker="s", s=70, c="black", zorder=6)
    key_line(ax, PANEL_X, 0.3, "truck", color=ROLE_COLORS["B"], linewidth=1.3)
    key_line(ax, PANEL_X, 0.255, "drone sortie", color=ROLE_COLORS["A"], linewidth=1.0, linestyle="--")
    key_line(ax, PANEL_X, 0.21, "back to the depot", color="#666666", linewidth=1.0, linestyle=":")
    key_marker(ax, PANEL_X, 0.165, "drone-eligible", s=18, c="white", edgecolors="#666666", linewidths=0.8)
    key_marker(ax, PANEL_X, 0.12, "recovery node", marker=ROLE_MARKERS["C"], s=40, c="none",
               edgecolors=ROLE_COLORS["C"], linewidths=1.2)


def _fstsp_state(ax, ep: ConstructiveEpisode) -> list[str]:
    inst, st, panel = ep.instance, ep.state, map_panel(ax)
    nodes = _fstsp_nodes(inst)
    truck = [0]
    for _, _a, b, r in st.epochs:
        truck += ([b] if b != SKIP and b != r else []) + [r]
    if st.finished:
        truck.append(0)
    path = panel.xy(nodes[truck])
    ax.plot(path[:, 0], path[:, 1], color=ROLE_COLORS["B"], linewidth=1.1, zorder=3)
    if not st.finished:
        back = panel.xy(nodes[[st.cur, 0]])
        ax.plot(back[:, 0], back[:, 1], color="#666666", linewidth=0.9, linestyle=":", zorder=3)
    sorties = [(u, a, r) for u, a, _, r in st.epochs if a != SKIP]
    for u, a, r in sorties:
        leg = panel.xy(nodes[[u, a, r]])
        ax.plot(leg[:, 0], leg[:, 1], color=ROLE_COLORS["A"], linewidth=0.9, linestyle="--", zorder=3)
    if sorties:
        rec = panel.xy(nodes[[r for _, _, r in sorties]])
        ax.scatter(rec[:, 0], rec[:, 1], marker=ROLE_MARKERS["C"], s=40, c="none", edgecolors=ROLE_COLORS["C"],
                   linewidths=1.2, zorder=5)
    pts = panel.xy(inst.customers)
    for vehicle, role in ((0, "B"), (1, "A")):
        mine = st.served_by == vehicle
        ax.scatter(pts[mine, 0], pts[mine, 1], s=18, c=ROLE_COLORS[role], edgecolors="black", linewidths=0.4, zorder=4)
    lines = [f"served: {int((st.served_by >= 0).sum())}/{st.n}", f"by truck {int((st.served_by == 0).sum())}, "
             f"by drone {int((st.served_by == 1).sum())}", f"drone sorties: {len(sorties)}", f"T_sync: {st.t:.2f}",
             f"truck distance: {st.d_truck:.2f}"]
    if not st.finished and st.a != SKIP:
        lines.append(f"pending sortie to {st.a}" + (f", truck to {st.b}" if st.b != SKIP else ""))
    return lines


# -- FJAGV ---------------------------------------------------------------------------
MACHINE_BOX = (0.1, 0.4, 0.58, 0.48)
AGV_BOX = (0.1, 0.12, 0.58, 0.2)


def _fjagv_estimate(inst, st) -> float:
    """Makespan estimate from the instance: the work at each operation's fastest machine shared by the
    machines, or the longest job, whichever is longer."""
    fastest = np.where(st.pt > 0, st.pt, np.inf).min(axis=1)
    return max(float(fastest.sum()) / st.m, float(fastest.reshape(-1, st.k).sum(axis=1).max()))


def _fjagv_static(ax, ep: ConstructiveEpisode) -> None:
    st = ep.state
    gantt_rows(ax, MACHINE_BOX, [f"M{m + 1}" for m in range(st.m)])
    gantt_rows(ax, AGV_BOX, [f"AGV {g + 1}" for g in range(st.g)])
    key_patch(ax, PANEL_X, 0.3, "AGV loaded", facecolor=ROLE_COLORS["C"], edgecolor="white")
    key_patch(ax, PANEL_X, 0.255, "AGV deadhead", facecolor=GREY, edgecolor="white")
    key_patch(ax, PANEL_X, 0.21, "after the due date", facecolor="none", edgecolor=LATE, hatch="////")
    key_line(ax, PANEL_X, 0.165, "current time", color="black", linestyle="--", linewidth=1.0)
    ax.text(PANEL_X, 0.12, "machine bars: job colour", va="center", fontsize=FONT, color="#444444")


def _fjagv_state(ax, ep: ConstructiveEpisode) -> list[str]:
    inst, st = ep.instance, ep.state
    started = np.flatnonzero(st.start >= 0)
    trips = np.array(st.trips, dtype=np.float64).reshape(-1, 7)  # (agv, op, depart, from, pickup, to, arrive)
    t_max = max(_fjagv_estimate(inst, st), float(st.finish[started].max()) if started.size else 0.0,
                float(trips[:, 6].max()) if trips.size else 0.0)
    machines, ticks = gantt_panel(MACHINE_BOX, t_max, st.m)
    agvs, _ = gantt_panel(AGV_BOX, t_max, st.g)
    jobs = started // st.k
    gantt_bars(ax, machines, st.machine[started], st.start[started], st.finish[started], cycle_colors(jobs))
    last = started[started % st.k == st.k - 1]
    late_bars(ax, machines, st.machine[last], st.start[last], st.finish[last], inst.due[last // st.k])
    if trips.size:
        empty = st.tt[trips[:, 3].astype(int), trips[:, 4].astype(int)]
        # Trips follow each other closely: no white edges, which would hide the short ones.
        gantt_bars(ax, agvs, trips[:, 0], trips[:, 2], trips[:, 2] + empty, GREY, edgecolors="none")
        gantt_bars(ax, agvs, trips[:, 0], trips[:, 2] + empty, trips[:, 6], ROLE_COLORS["C"], edgecolors="none")
    now = None if st.finished else st.t
    time_axis(ax, agvs, ticks, now=now)
    time_grid(ax, machines, ticks, now=now)
    done = np.flatnonzero(st.start[np.arange(inst.n_jobs) * st.k + st.k - 1] >= 0)
    finish = st.finish[done * st.k + st.k - 1]
    tardy = float((inst.weight[done] * np.maximum(finish - inst.due[done], 0.0)).sum())
    so_far = "" if st.finished else " so far"
    return [f"t = {st.t:.1f}", f"operations started: {started.size}/{st.n}",
            f"C_max{so_far}: {float(st.finish[started].max()) if started.size else 0.0:.1f}",
            f"weighted tardiness: {tardy:.1f}", f"AGV travel: {st.d_agv:.1f}", f"AGV trips: {len(st.trips)}"]


# -- MRCPS ---------------------------------------------------------------------------
WORKER_BOX = (0.1, 0.36, 0.58, 0.52)
PROJECT_BOX = (0.1, 0.1, 0.58, 0.2)


def _mrcps_estimate(inst) -> float:
    """Makespan estimate from the instance: every task at the best speed (level 3), shared by the workers."""
    return float(inst.duration.sum()) / (0.7 + 0.15 * 3) / inst.n_workers


def _mrcps_static(ax, ep: ConstructiveEpisode) -> None:
    inst = ep.instance
    gantt_rows(ax, WORKER_BOX, [f"W{w + 1}" for w in range(inst.n_workers)], fontsize=6.5)
    gantt_rows(ax, PROJECT_BOX, [f"P{p + 1}" for p in range(inst.n_projects)], fontsize=6.5)
    key_line(ax, PANEL_X, 0.3, "project due date", color="black", linewidth=1.4)
    key_patch(ax, PANEL_X, 0.255, "after the due date", facecolor="none", edgecolor=LATE, hatch="////")
    key_line(ax, PANEL_X, 0.21, "current time", color="black", linestyle="--", linewidth=1.0)
    ax.text(PANEL_X, 0.165, "bars: project colour", va="center", fontsize=FONT, color="#444444")


def _mrcps_state(ax, ep: ConstructiveEpisode) -> list[str]:
    inst, st = ep.instance, ep.state
    started = np.flatnonzero(st.worker >= 0)
    c_p = np.zeros(inst.n_projects)
    np.maximum.at(c_p, inst.project[started], st.finish[started])
    first = np.full(inst.n_projects, np.inf)
    np.minimum.at(first, inst.project[started], st.start[started])
    t_max = max(_mrcps_estimate(inst), float(c_p.max()), float(inst.due.max()))
    workers, ticks = gantt_panel(WORKER_BOX, t_max, inst.n_workers)
    projects, _ = gantt_panel(PROJECT_BOX, t_max, inst.n_projects)
    gantt_bars(ax, workers, st.worker[started], st.start[started], st.finish[started],
               cycle_colors(inst.project[started]))
    begun = np.flatnonzero(np.isfinite(first))
    gantt_bars(ax, projects, begun, first[begun], c_p[begun], cycle_colors(begun), alpha=0.7)
    late_bars(ax, projects, begun, first[begun], c_p[begun], inst.due[begun])
    rows = np.arange(inst.n_projects)
    ax.vlines(projects.x(inst.due), projects.y(rows + 0.9), projects.y(rows + 0.1), colors="black", linewidths=1.4,
              zorder=4)
    now = None if st.finished else st.t
    time_axis(ax, projects, ticks, now=now)
    time_grid(ax, workers, ticks, now=now)
    tardy = float((inst.weight * np.maximum(c_p - inst.due, 0.0)).sum())
    labor = float((inst.cost[st.worker[started]] * st.span[started]).sum())
    return [f"t = {st.t:.1f}", f"tasks started: {started.size}/{st.n}", f"makespan{'' if st.finished else ' so far'}: {c_p.max():.1f}",
            f"weighted tardiness: {tardy:.1f}", f"labour cost: {labor:.1f}"]


Drawer = Callable[[object, ConstructiveEpisode], object]
#: Per benchmark: (role key labels, draw the static part, draw the state and return the side panel's lines).
DRAWERS: dict[str, tuple[dict[str, str], Drawer, Drawer]] = {
    "hmtsp": ({r: f"vehicle {r}" for r in ROLES}, _hmtsp_static, _hmtsp_state),
    "fstsp": ({"A": "A: drone customer", "B": "B: truck customer", "C": "C: recovery node"}, _fstsp_static,
              _fstsp_state),
    "fjagv": ({"A": "A: machine choice", "B": "B: machine sequence", "C": "C: AGV dispatch"}, _fjagv_static,
              _fjagv_state),
    "mrcps": ({"A": "A: project", "B": "B: task", "C": "C: worker"}, _mrcps_static, _mrcps_state),
}
