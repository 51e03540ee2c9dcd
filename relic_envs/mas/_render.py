"""Pictures of scheduling episodes (MAS-JD, MAS-ST, MAS-FS): a Gantt chart per resource.

Rows are the three resources (machines, workers or stages; role A on top), each bar an
operation from its start to its completion, in the role colour of the resource that
took it (MAS-JD, MAS-ST) or in its job's colour, so a job can be followed from stage to
stage (MAS-FS). The part of a bar after the job's due date (MAS-JD) or the task's
deadline (MAS-ST: the task earns nothing) is hatched red. Under the chart a strip marks
every release: grey once dispatched, orange while waiting in a pool, hollow before it
happens. A dashed line is the current decision epoch. The time axis runs to a round
value at least the instance's estimated makespan (:func:`time_estimate`), further only
if the schedule does. The side panel has the role key and the objective's parts.

Called through :func:`relic_envs.core.render.render_frame`, which draws
:func:`draw_static` (what depends on the instance only) once per instance and frame
size and :func:`draw_state` every frame.
"""

from __future__ import annotations

import numpy as np

from relic_envs.core._draw import (
    LATE,
    ROLE_COLORS,
    cycle_colors,
    gantt_bars,
    gantt_panel,
    gantt_rows,
    key_line,
    key_marker,
    key_patch,
    late_bars,
    objective_title,
    role_key,
    side_text,
    time_axis,
    title,
)
from relic_envs.core.benchmark import ROLES
from relic_envs.mas._dispatch import DispatchEpisode

GANTT_BOX = (0.135, 0.22, 0.55, 0.66)  # (x, y, w, h) of the chart in figure fractions
RELEASE_BOX = (0.135, 0.12, 0.55, 0.06)  # the release strip under it
PANEL_X = 0.72  # left edge of the side panel
FONT = 8.0
WAITING = "#EE9933"
#: Per benchmark: the resources' name, the objective's name in the title.
NAMES = {"mas_jd": ("machine", "weighted tardiness"), "mas_st": ("worker", "value on time"),
         "mas_fs": ("stage", "weighted completion")}


def draw(ax, episode: DispatchEpisode) -> None:
    """Draw a scheduling episode on the frame axes: :func:`draw_static`, then :func:`draw_state`."""
    draw_static(ax, episode)
    draw_state(ax, episode)


def draw_static(ax, episode: DispatchEpisode) -> None:
    """What depends on the instance only: row labels, the role key, the key of the marks."""
    noun = NAMES[episode.bench.name][0]
    gantt_rows(ax, GANTT_BOX, [f"{r}: {noun} {k + 1}" for k, r in enumerate(ROLES)])
    ax.text(RELEASE_BOX[0] - 0.006, RELEASE_BOX[1] + RELEASE_BOX[3] / 2, "releases", ha="right", va="center",
            fontsize=7.5, color="#444444")
    role_key(ax, PANEL_X + 0.015, 0.86, _role_labels(episode), step=0.05, fontsize=FONT)
    y = 0.34
    if episode.bench.name != "mas_fs":
        key_patch(ax, PANEL_X, y, "after the due date" if episode.bench.name == "mas_jd" else "after the deadline",
                  facecolor="none", edgecolor=LATE, hatch="////")
        y -= 0.05
    key_marker(ax, PANEL_X, y, "released, waiting", marker="^", s=28, c=WAITING, edgecolors="black", linewidths=0.4)
    key_line(ax, PANEL_X, y - 0.05, "current epoch", color="black", linestyle="--", linewidth=1.0)
    if episode.bench.name == "mas_fs":
        ax.text(PANEL_X, y - 0.1, "bar colour: job", va="center", fontsize=FONT, color="#444444")


def _role_labels(episode: DispatchEpisode) -> dict[str, str]:
    noun = NAMES[episode.bench.name][0]
    if episode.bench.name == "mas_st":  # a worker is its skills: show them
        skills = episode.instance.skills
        return {r: f"{noun} {k + 1}, skills " + "/".join(f"{s:.1f}" for s in skills[k]) for k, r in enumerate(ROLES)}
    return {r: f"{noun} {k + 1}" for k, r in enumerate(ROLES)}


def time_estimate(episode: DispatchEpisode) -> float:
    """A makespan estimate from the instance alone: the most loaded resource's share of
    the work after the first release (each operation at its fastest resource), or the
    last release plus the longest job, whichever is later."""
    durations, release = episode.durations, episode.instance.release  # (3, N, S): derived from the instance
    if durations.shape[2] == 1:  # one pool shared by three resources
        work = float(durations[:, :, 0].min(axis=0).sum()) / len(ROLES)
    else:  # a stage per resource
        work = max(float(durations[k, :, k].sum()) for k in range(len(ROLES)))
    longest = float(durations.min(axis=0).sum(axis=1).max())
    return max(float(release[0]) + work, float(release[-1]) + longest)


def draw_state(ax, episode: DispatchEpisode) -> None:
    """What changes with the schedule: title, bars, late parts, releases, time line, side panel."""
    name, inst = episode.bench.name, episode.instance
    title(ax, objective_title(episode, NAMES[name][1]))
    done = episode.machine >= 0  # (N, S) dispatched operations
    jobs, stages = np.nonzero(done)
    rows, start, end = episode.machine[done], episode.start[done], episode.end[done]
    t_max = max(time_estimate(episode), float(end.max()) if end.size else 0.0, float(inst.release[-1]))
    panel, ticks = gantt_panel(GANTT_BOX, t_max, len(ROLES))
    colors = cycle_colors(jobs) if name == "mas_fs" else [ROLE_COLORS[ROLES[k]] for k in rows]
    gantt_bars(ax, panel, rows, start, end, colors)
    if name != "mas_fs":
        due = inst.due if name == "mas_jd" else inst.deadline
        late_bars(ax, panel, rows, start, end, due[jobs])
    time_axis(ax, panel, ticks, now=None if episode.done else episode.t)
    _releases(ax, panel, episode)
    side_text(ax, PANEL_X, 0.68, _notes(episode))


def _releases(ax, panel, episode: DispatchEpisode) -> None:
    """Release markers: dispatched (grey), waiting in a pool now (orange), not released yet (hollow)."""
    release = episode.instance.release
    taken = (episode.machine >= 0).any(axis=1)
    released = release <= episode.t
    y = RELEASE_BOX[1] + RELEASE_BOX[3] / 2
    x = panel.x(release)
    for mask, face, edge in ((taken, "#aaaaaa", "#aaaaaa"), (~taken & released, WAITING, "black"),
                             (~taken & ~released, "none", "#888888")):
        if mask.any():
            ax.scatter(x[mask], np.full(int(mask.sum()), y), marker="^", s=22, c=face, edgecolors=edge,
                       linewidths=0.4, zorder=3)


def _notes(episode: DispatchEpisode) -> list[str]:
    """The side panel's lines: time, progress, the objective's parts, work per resource, collisions."""
    name, inst = episode.bench.name, episode.instance
    n = inst.n_jobs
    last = episode.completion()
    finished = ~np.isnan(last)
    waiting = int(episode.pools(episode.t).any(axis=0).sum())
    noun = "tasks" if name == "mas_st" else "jobs"
    lines = [f"t = {episode.t:.1f}", f"{noun} done: {int(finished.sum())}/{n}", f"waiting in pools: {waiting}"]
    if name == "mas_jd":
        tardy = finished & (np.nan_to_num(last) > inst.due)
        lines.append(f"tardy jobs: {int(tardy.sum())}")
    elif name == "mas_st":
        late = finished & (np.nan_to_num(last) > inst.deadline)
        lines += [f"late tasks: {int(late.sum())} (earn 0)", f"value on time: {episode.objective():.1f}"
                  f" of {float(inst.value.sum()):.1f}"]
        if episode.done:
            lines.append(f"unserved: {int((~finished).sum())}")
    else:
        lines.append(f"weights done: {float(inst.weight[finished].sum()):.1f} of {float(inst.weight.sum()):.1f}")
    lines.append("work A/B/C: " + " / ".join(f"{w:.0f}" for w in episode.load))
    if episode.collisions:
        lines.append(f"collisions: {len(episode.collisions)}")
    return lines
