"""Learning curves of IPPO/MAPPO checkpoints (matplotlib, no pyplot state)."""

from __future__ import annotations

import json
from pathlib import Path


def plot_history(dirs, out, seeds_mean: float | None = None, title: str | None = None) -> None:
    """Validation score (greedy, training-regime validation set) and training score against env steps."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.5, 3.4))
    ax = fig.subplots()
    name = None
    for d in dirs:
        meta = json.loads((Path(d) / "config.json").read_text())
        cfg, hist = meta["config"], meta["summary"]["history"]
        name = cfg["env"]
        per_update = cfg["n_envs"] * cfg["n_steps"]
        who = cfg["algo"].upper() + (f" seed {cfg['seed']}" if cfg.get("seed") else "")
        if cfg.get("interface", "paper") != "paper":
            who += f" ({cfg['interface']})"
        line, = ax.plot(hist["env_steps"], hist["val_score"], "o-", ms=3, label=f"{who} validation (greedy)")
        xs = [u * per_update for u in hist["train_update"]]
        ax.plot(xs, hist["train_score"], "-", lw=0.8, alpha=0.5, color=line.get_color(),
                label=f"{who} training episodes (sampled)")
    if seeds_mean is not None:
        ax.axhline(seeds_mean, color="grey", ls=":", label="seed team, validation set")
    ax.set_xlabel("env steps")
    ax.set_ylabel("team score (higher is better)")
    ax.set_title(title or f"IPPO / MAPPO on {name}")
    ax.legend(fontsize=6)
    fig.tight_layout()
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
