"""Trained IPPO/MAPPO policies as comparators: checkpoints, ``obs -> action`` policies, test evaluation.

A checkpoint is a directory with ``params.npz`` (the actors' parameter pytree, one array per
leaf named by its path) and ``config.json`` (the training :class:`~baselines.rl.ppo.Config`,
the feature dimensions and a summary of the run). :func:`load` gives an :class:`RLTeam`:
a mapping ``role -> policy`` where a policy is a plain callable on the PettingZoo env's
observation that returns the env's action (the greedy, argmax action), so it plugs into
``relic_envs.make(name)``, ``relic_envs.rollout`` and ``relic-baselines eval --team ippo:PATH``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from baselines.rl import networks as nets
from baselines.rl.features import featurize

ROLES = ("A", "B", "C")


def _flatten(tree) -> dict[str, np.ndarray]:
    flat, _ = jax.tree_util.tree_flatten_with_path(tree)
    return {jax.tree_util.keystr(path): np.asarray(leaf) for path, leaf in flat}


def save(out: str | Path, actor_params, cfg, dims: dict, summary: dict | None = None) -> Path:
    """Write ``params.npz`` and ``config.json`` into ``out`` (created)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    np.savez(out / "params.npz", **_flatten(actor_params))
    meta = {"config": dataclasses.asdict(cfg), "kind": cfg.kind, "dims": dims, "summary": summary or {}}
    (out / "config.json").write_text(json.dumps(meta, indent=1, default=float) + "\n")
    return out


def load_actor_params(path: str | Path):
    """``(actor params pytree, meta dict)`` from a checkpoint directory."""
    path = Path(path)
    meta = json.loads((path / "config.json").read_text())
    cfg, kind, dims = meta["config"], meta["kind"], meta["dims"]
    template = {r: nets.init_actor(jax.random.key(0), kind, dims[r], cfg["hidden"]) for r in ROLES}
    flat, treedef = jax.tree_util.tree_flatten_with_path(template)
    with np.load(path / "params.npz") as data:
        leaves = []
        for p, leaf in flat:
            arr = data[jax.tree_util.keystr(p)]
            if arr.shape != leaf.shape:
                raise ValueError(f"{path}: {jax.tree_util.keystr(p)} has shape {arr.shape}, expected {leaf.shape}")
            leaves.append(jnp.asarray(arr))
    return jax.tree_util.tree_unflatten(treedef, leaves), meta


class RLPolicy:
    """One role's greedy policy: PettingZoo observation (dict of arrays) -> the env's action."""

    def __init__(self, params, kind: str, role: str):
        self.params, self.kind, self.role = params, kind, role
        self._logits = jax.jit(lambda p, o: nets.actor_logits(p, kind, featurize(kind, o)))

    def __call__(self, obs: Mapping[str, Any]):
        obs32 = jax.tree.map(_to32, dict(obs))
        choice = np.asarray(jnp.argmax(self._logits(self.params, obs32), -1))
        if self.kind == "dcop":
            return choice.astype(np.int64)
        return int(choice) - (1 if self.kind == "pointer_idle" else 0)


def _to32(x):
    a = np.asarray(x)
    if a.dtype == np.float64:
        return a.astype(np.float32)
    if a.dtype == np.int64:
        return a.astype(np.int32)
    return a


class RLTeam(dict):
    """``{role: RLPolicy}`` of a checkpoint, with the checkpoint's ``meta`` (config and run summary)."""

    def __init__(self, actor_params, meta: dict):
        super().__init__({r: RLPolicy(actor_params[r], meta["kind"], r) for r in ROLES})
        self.meta = meta
        self.actor_params = actor_params

    @property
    def env(self) -> str:
        return self.meta["config"]["env"]

    @property
    def interface(self) -> str:
        return self.meta["config"]["interface"]


def load(path: str | Path) -> RLTeam:
    """The team of a checkpoint directory written by ``python -m baselines.rl train``."""
    params, meta = load_actor_params(path)
    return RLTeam(params, meta)


def evaluate_checkpoint(path_or_team, regimes=None, instances=None) -> dict[str, dict]:
    """Greedy test-split scores of a checkpoint through the functional env (float64, exact parity with
    the numpy env): ``{regime: {"objective": mean raw objective, "score": mean score, "scores": [...],
    "invalid": refused actions, "complete": all episodes ended}}``. ``instances`` overrides the split
    (``{label: [instances]}``)."""
    import relic_envs
    from baselines.rl.ppo import make_evaluator
    from relic_envs.core.functional import make as make_functional

    team = load(path_or_team) if not isinstance(path_or_team, RLTeam) else path_or_team
    bench = relic_envs.get_benchmark(team.env)
    if instances is None:
        test = relic_envs.splits(team.env).test
        instances = {r: test[r] for r in (regimes or test)}
    fenv = make_functional(team.env, team.interface)
    out = {}
    with jax.enable_x64(True):
        for label, insts in instances.items():
            horizon = max(bench.max_steps(i) for i in insts) + 1
            scores, done, invalid = make_evaluator(fenv, team.meta["kind"], horizon)(team.actor_params, fenv.params(insts))
            scores = [float(s) for s in np.asarray(scores)]
            objectives = [-s if bench.minimize else s for s in scores]
            out[label] = {"objective": float(np.mean(objectives)), "objective_std": float(np.std(objectives)),
                          "score": float(np.mean(scores)), "scores": scores,
                          "invalid": int(np.asarray(invalid).sum()), "complete": bool(np.all(np.asarray(done))),
                          "n": len(insts)}
    return out
