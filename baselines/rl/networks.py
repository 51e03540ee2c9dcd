"""Plain-JAX networks for IPPO/MAPPO: parameter pytrees of dicts of arrays, no framework.

Actor (one per role, shared across that role's entities):

- entity encoder ``h_e = MLP(ent_e)`` (two ReLU layers), the same weights for every row;
- context ``c = ReLU(W [glob, mean_e h_e, max_e h_e])`` (means and maxima over the entities
  a role may choose, all entities for the DCOPs);
- pointer head (MAPP/MAS/CO): ``logit_e = w . ReLU(W_e h_e + W_c c)`` per entity, plus a learned
  ``-1`` (idle/skip) logit from ``c`` where the action space has one; masked by
  ``action_mask``;
- DCOP head: per variable ``e`` and value ``k``, ``logit_ek = w . ReLU(W_v val_ek + W_e h_e + W_c c)``,
  weights shared across variables (and values): one categorical per owned variable.

Critic: a one-layer entity encoder pooled the same way into a role summary. IPPO: the
role's value ``V_r = MLP(summary_r)``. MAPPO: one centralised ``V = MLP([summary_A,
summary_B, summary_C])`` on the joint observation (the functional envs expose no
global-state function; their state pytree is the simulator's internals, so the
critic reads all three roles' observations, which together cover what the roles know).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

NEG = -1e9


def dense(key, n_in: int, n_out: int, scale: float = 1.0) -> dict:
    w = jax.random.normal(key, (n_in, n_out), jnp.float32) * (scale * math.sqrt(2.0 / n_in))
    return {"w": w, "b": jnp.zeros((n_out,), jnp.float32)}


def apply_dense(p, x):
    return x @ p["w"] + p["b"]


def _pool(h, mask):
    """Masked mean and max over the entity axis (-2) of ``h``; ``mask`` is ``(E,)``."""
    m = mask[:, None].astype(h.dtype)
    n = jnp.maximum(m.sum(0), 1.0)
    mean = (h * m).sum(0) / n
    mx = jnp.where(mask.any(), jnp.where(mask[:, None], h, -1e9).max(0), 0.0)
    return jnp.concatenate([mean, mx])


def entity_mask(kind: str, feats) -> jnp.ndarray:
    if kind == "dcop":
        return jnp.ones(feats["ent"].shape[0], bool)
    mask = feats["mask"]
    return mask[1:] if kind == "pointer_idle" else mask


def init_actor(key, kind: str, dims: dict, hidden: int) -> dict:
    k = jax.random.split(key, 8)
    p = {
        "enc1": dense(k[0], dims["ent"], hidden), "enc2": dense(k[1], hidden, hidden),
        "ctx": dense(k[2], dims["glob"] + 2 * hidden, hidden),
        "head_e": dense(k[3], hidden, hidden), "head_c": dense(k[4], hidden, hidden),
        "out": dense(k[5], hidden, 1, scale=0.01),
    }
    if kind == "dcop":
        p["head_v"] = dense(k[7], dims["val"], hidden)
    if kind == "pointer_idle":
        p["idle"] = dense(k[6], hidden, 1, scale=0.01)
    return p


def actor_logits(p, kind: str, feats) -> jnp.ndarray:
    """Masked logits of ONE observation: ``(E, K)`` for a DCOP role, ``(n,)`` otherwise (index 0 = -1 for MAS/CO)."""
    h = jax.nn.relu(apply_dense(p["enc2"], jax.nn.relu(apply_dense(p["enc1"], feats["ent"]))))
    c = jax.nn.relu(apply_dense(p["ctx"], jnp.concatenate([feats["glob"], _pool(h, entity_mask(kind, feats))])))
    # The head's hidden layer on [v_ek, h_e, c] is computed as W_v v_ek + W_e h_e + W_c c (the same
    # function as one dense layer on the concatenation, without broadcasting h_e and c first).
    pre = apply_dense(p["head_e"], h) + apply_dense(p["head_c"], c)  # (E, H)
    if kind == "dcop":
        pre = apply_dense(p["head_v"], feats["val"]) + pre[:, None, :]  # (E, K, H)
    logits = apply_dense(p["out"], jax.nn.relu(pre))[..., 0]
    if kind != "dcop":
        if kind == "pointer_idle":
            logits = jnp.concatenate([apply_dense(p["idle"], c), logits])
    return jnp.where(feats["mask"], logits, NEG)


def critic_input_dims(kind: str, dims: dict) -> int:
    return dims["ent"] + (dims["val_flat"] if kind == "dcop" else 0)


def init_summary(key, kind: str, dims: dict, hidden: int) -> dict:
    k1, k2 = jax.random.split(key)
    return {"enc": dense(k1, critic_input_dims(kind, dims), hidden), "ctx": dense(k2, dims["glob"] + 2 * hidden, hidden)}


def summary(p, kind: str, feats) -> jnp.ndarray:
    ent = feats["ent"]
    if kind == "dcop":
        ent = jnp.concatenate([ent, feats["val"].reshape(ent.shape[0], -1)], axis=-1)
    h = jax.nn.relu(apply_dense(p["enc"], ent))
    return jax.nn.relu(apply_dense(p["ctx"], jnp.concatenate([feats["glob"], _pool(h, entity_mask(kind, feats))])))


def init_critic(key, kind: str, dims: dict, hidden: int, roles, centralised: bool) -> dict:
    keys = jax.random.split(key, 2 * len(roles) + 2)
    enc = {r: init_summary(keys[i], kind, dims[r], hidden) for i, r in enumerate(roles)}
    if centralised:
        return {"enc": enc, "v1": dense(keys[-2], len(roles) * hidden, hidden), "v2": dense(keys[-1], hidden, 1)}
    return {"enc": enc, "v1": {r: dense(keys[len(roles) + i], hidden, hidden) for i, r in enumerate(roles)},
            "v2": {r: dense(keys[-1 - i], hidden, 1) for i, r in enumerate(roles)}}


def critic_values(p, kind: str, feats: dict, roles, centralised: bool) -> dict:
    """``{role: value}`` of ONE joint observation (MAPPO: the same centralised value for every role)."""
    s = {r: summary(p["enc"][r], kind, feats[r]) for r in roles}
    if centralised:
        v = apply_dense(p["v2"], jax.nn.relu(apply_dense(p["v1"], jnp.concatenate([s[r] for r in roles]))))[0]
        return {r: v for r in roles}
    return {r: apply_dense(p["v2"][r], jax.nn.relu(apply_dense(p["v1"][r], s[r])))[0] for r in roles}
