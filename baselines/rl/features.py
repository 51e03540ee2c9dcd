"""Observation -> features for the IPPO/MAPPO networks (size-independent, shared across entities).

Every role's observation (the PettingZoo ``Dict``, as a dict of arrays) becomes three arrays:

``ent``  ``(E, d_ent)``
    one row per *entity*, the things the role chooses among: a DCOP role's owned
    variables, a MAPP node, a MAS job, a CO candidate. Every leaf whose first axis has
    length ``E`` contributes its row (trailing axes flattened); an ``(E, E)`` matrix
    (MAPP's ``dist_mat``) contributes the row of the agent's ``current`` node (the row
    mean where there is no ``current``) plus a "this is my node" indicator; the action
    mask's entity part is a feature too. Every column also appears centred on its
    minimum over the entities, so a network sees "how much worse than the best row".
``glob`` ``(d_glob,)``
    every other leaf, flattened (scalars, per-teammate vectors, the DCOP time step).
``val``  ``(E, K, d_val)`` (DCOP only)
    per value of each variable: every ``(E, K)`` leaf (``delta``, gains, ...) at that value,
    centred on the variable's best value, and "is the current value".

Feature dimensions do not depend on ``E``, so a network trained on the training regime's
size (MAPP N = 40, MAS 30 jobs, HMTSP 50 customers) runs unchanged on the larger test
sizes. Values go through ``symlog(x) = sign(x) log(1 + |x|)`` after ``inf`` is clipped to
``1e6``: the suite's raw magnitudes range from 1e-2 (MAPP prizes) to 2e4 (SHDS ``delta``).

Leaf order is deterministic: ``jax.tree_util`` flattens dicts in sorted key order, nested
dicts depth first (Gymnasium's own ``Dict`` order).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

DCOPS = ("dgc", "dimes", "sensor_dcsp", "shds")
MAPP = ("mapp_pc", "mapp_ar", "mapp_ds")


def kind_of(name: str) -> str:
    """``"dcop"`` (one head per owned variable), ``"pointer"`` (MAPP: a node) or ``"pointer_idle"``
    (MAS/CO: a candidate or ``-1``; index 0 of ``action_mask`` is ``-1``)."""
    if name in DCOPS:
        return "dcop"
    if name in MAPP:
        return "pointer"
    return "pointer_idle"


def symlog(x):
    x = jnp.nan_to_num(jnp.asarray(x, jnp.float32), nan=0.0, posinf=1e6, neginf=-1e6)
    x = jnp.clip(x, -1e6, 1e6)
    return jnp.sign(x) * jnp.log1p(jnp.abs(x))


def _leaves(obs: dict) -> list[tuple[str, Any]]:
    flat, _ = jax.tree_util.tree_flatten_with_path(obs)
    return [(jax.tree_util.keystr(path), leaf) for path, leaf in flat]


def _find_current(obs: dict):
    for path, leaf in _leaves(obs):
        if path.endswith("['current']") and jnp.ndim(leaf) == 0:
            return leaf
    return None


def _centre(cols, axis):
    """``cols`` and ``cols - min(cols)`` along ``axis`` (both symlogged), concatenated on the last axis."""
    raw = jnp.nan_to_num(jnp.asarray(cols, jnp.float32), nan=0.0, posinf=1e6, neginf=-1e6)
    return jnp.concatenate([symlog(raw), symlog(raw - raw.min(axis=axis, keepdims=True))], axis=-1)


def featurize(kind: str, obs: dict) -> dict[str, Any]:
    """Features of ONE observation (``vmap`` for a batch); see the module docs."""
    if kind == "dcop":
        return _featurize_dcop(obs)
    offset = 1 if kind == "pointer_idle" else 0
    mask = jnp.asarray(obs["action_mask"]) > 0
    E = mask.shape[0] - offset
    current = _find_current(obs)
    ent_cols, glob = [mask[offset:].astype(jnp.float32)[:, None]], []
    for path, leaf in _leaves(obs):
        if path == "['action_mask']":
            continue
        leaf = jnp.asarray(leaf)
        if leaf.ndim >= 1 and leaf.shape[0] == E:
            if leaf.ndim == 2 and leaf.shape[1] == E:  # a distance matrix: the row of where I stand
                if current is not None:
                    ent_cols.append(leaf[jnp.clip(current, 0, E - 1)][:, None].astype(jnp.float32))
                    ent_cols.append((jnp.arange(E) == current).astype(jnp.float32)[:, None])
                else:
                    ent_cols.append(leaf.mean(axis=1, dtype=jnp.float32)[:, None])
            else:
                ent_cols.append(leaf.reshape(E, -1).astype(jnp.float32))
        else:
            glob.append(leaf.reshape(-1).astype(jnp.float32))
    ent = jnp.concatenate(ent_cols, axis=1)
    glob = symlog(jnp.concatenate(glob)) if glob else jnp.zeros((1,), jnp.float32)
    # Centre on the admitted rows only (a masked-out row's features are not a reference).
    big = jnp.where(mask[offset:, None], ent, jnp.inf)
    low = jnp.where(jnp.isfinite(big.min(axis=0, keepdims=True)), big.min(axis=0, keepdims=True), 0.0)
    ent = jnp.concatenate([symlog(ent), symlog(ent - low)], axis=1)
    return {"ent": ent, "glob": glob, "mask": mask}


def _featurize_dcop(obs: dict) -> dict[str, Any]:
    cur = jnp.asarray(obs["cur"])
    E, K = jnp.asarray(obs["delta"]).shape
    val_cols, ent_cols, glob = [(cur[:, None] == jnp.arange(K)).astype(jnp.float32)[..., None]], [], []
    for path, leaf in _leaves(obs):
        if path == "['cur']":
            continue
        leaf = jnp.asarray(leaf)
        if leaf.ndim == 2 and leaf.shape == (E, K):
            val_cols.append(_centre(leaf[..., None], axis=1))
        elif leaf.ndim >= 1 and leaf.shape[0] == E:
            ent_cols.append(leaf.reshape(E, -1).astype(jnp.float32))
        else:
            glob.append(leaf.reshape(-1).astype(jnp.float32))
    ent = _centre(jnp.concatenate(ent_cols, axis=1), axis=0) if ent_cols else jnp.zeros((E, 1), jnp.float32)
    glob = symlog(jnp.concatenate(glob)) if glob else jnp.zeros((1,), jnp.float32)
    return {"ent": ent, "glob": glob, "val": jnp.concatenate(val_cols, axis=-1), "mask": jnp.ones((E, K), bool)}
