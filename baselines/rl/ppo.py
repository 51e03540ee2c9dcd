"""IPPO and MAPPO trained entirely in JAX on the functional envs (the PureJaxRL habit).

One update = a rollout of ``n_steps`` joint steps on ``n_envs`` instances (``lax.scan``
over steps of ``vmap`` over instances, with automatic reset onto a fresh instance of the
training pool when an episode ends), GAE, then ``epochs`` x ``minibatches`` clipped-PPO
steps with Adam (optax). ``lax.scan`` runs ``chunk`` updates in one jitted call; between
chunks the greedy policy is scored on a validation set drawn from the training regimes and
the best parameters are kept (checkpoint selection). The held-out test splits are never
touched here.

IPPO: each role has its own actor and its own critic on its own observation. MAPPO: each
role has its own actor; one centralised critic reads all three roles' observations (see
``networks``). Rewards are the team's shared reward, divided by a fixed scale (the mean
absolute episode return of the untrained policy on the first batch), so value targets are
O(1) on every benchmark.
"""

from __future__ import annotations

import dataclasses
import math
import time
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

import relic_envs
from baselines.rl import networks as nets
from baselines.rl.features import featurize, kind_of
from relic_envs.core.functional import make as make_functional

ROLES = ("A", "B", "C")


@dataclasses.dataclass
class Config:
    env: str
    algo: str = "ippo"                 # "ippo" | "mappo"
    interface: str = "paper"
    total_steps: int = 200_000         # env steps (one joint step of one instance)
    n_envs: int = 32
    n_steps: int = 64                  # rollout length per update
    hidden: int = 32
    lr: float | None = None            # None: 2.5e-4 (IPPO) / 5e-4 (MAPPO), the published defaults
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    epochs: int = 4
    minibatches: int = 4
    micro_batch: int | None = None     # samples per gradient piece; None: sized to the CPU's cache (see auto_micro_batch)
    max_grad_norm: float = 0.5
    pool: int = 200                    # training instances (generated from the training regimes)
    n_val: int = 20                    # validation instances (training regimes, another seed)
    chunk: int = 10                    # updates per jitted call (= per validation point)
    seed: int = 0
    reward_scale: float | None = None  # set from the untrained policy when None
    max_wall_s: float | None = None    # stop after the chunk that passes this wall time (compile included)

    @property
    def learning_rate(self) -> float:
        return self.lr if self.lr is not None else (2.5e-4 if self.algo == "ippo" else 5e-4)

    @property
    def kind(self) -> str:
        return kind_of(self.env)


def training_instances(env: str, count: int, seed: int) -> list:
    """``count`` fresh instances from the benchmark's training regimes (train1..train5 in turn)."""
    bench = relic_envs.get_benchmark(env)
    regimes = [r for r in bench.regimes() if r.startswith("train")]
    rng = np.random.default_rng(seed)
    return [bench.generate(regimes[k % len(regimes)], rng) for k in range(count)]


def feature_shapes(kind: str, fenv, params_one) -> dict:
    """Each role's feature shapes on one instance. Shapes only, so traced abstractly: nothing is
    compiled or run (run eagerly, the reset compiled each of its primitives on its own, at every
    instance size)."""
    def features(params):
        obs, _ = fenv.reset(jax.random.key(0), params)
        return {r: featurize(kind, obs[r]) for r in ROLES}

    return jax.eval_shape(features, params_one)


def feature_dims(kind: str, fenv, params_one) -> dict:
    shapes = feature_shapes(kind, fenv, params_one)
    dims = {}
    for r in ROLES:
        f = shapes[r]
        d = {"ent": f["ent"].shape[-1], "glob": f["glob"].shape[-1]}
        if kind == "dcop":
            d["val"] = f["val"].shape[-1]
            d["val_flat"] = f["val"].shape[-2] * f["val"].shape[-1]
        dims[r] = d
    return dims


# A minibatch's gradient is summed over pieces of this many bytes of the largest activation
# (rows x hidden float32): measured on the 2-core VM (benchmarks/RESULTS.md, 2026-12-07), a
# gradient pass costs 2.7-3.4x more per sample once that activation outgrows about 1.5 MB
# (a core's L2 cache is 1 MiB there), so 1 MiB keeps every piece in cache.
CPU_PIECE_BYTES = 1 << 20


def activation_rows(kind: str, fenv, params_one) -> int:
    """Rows of the largest per-sample activation over the roles: entities (x values for a DCOP)."""
    shapes = feature_shapes(kind, fenv, params_one)
    key = "val" if kind == "dcop" else "ent"
    return max(math.prod(shapes[r][key].shape[:-1]) for r in ROLES)


def auto_micro_batch(minibatch: int, rows: int, hidden: int, backend: str | None = None) -> int:
    """Samples per gradient piece: the whole minibatch off the CPU; on the CPU the largest power of
    two that divides ``minibatch`` and keeps a ``rows x hidden`` float32 activation per sample within
    :data:`CPU_PIECE_BYTES`. The gradient is the same either way (a sum over the pieces)."""
    if (backend or jax.default_backend()) != "cpu":
        return minibatch
    fit = max(1, CPU_PIECE_BYTES // (rows * hidden * 4))
    m = 1
    while 2 * m <= min(fit, minibatch) and minibatch % (2 * m) == 0:
        m *= 2
    return m


def init_params(cfg: Config, dims: dict, key) -> dict:
    ka, kc = jax.random.split(key)
    actors = {r: nets.init_actor(k, cfg.kind, dims[r], cfg.hidden) for r, k in zip(ROLES, jax.random.split(ka, 3))}
    critic = nets.init_critic(kc, cfg.kind, dims, cfg.hidden, ROLES, cfg.algo == "mappo")
    return {"actor": actors, "critic": critic}


# -- acting ------------------------------------------------------------------------------------------
def to_env_action(kind: str, choice):
    """Head index -> the env's action: DCOP values as is, MAPP node id, MAS/CO index - 1 (0 -> -1)."""
    if kind == "pointer_idle":
        return (choice - 1).astype(jnp.int32)
    return choice.astype(jnp.int32)


def log_prob_entropy(kind: str, logits, choice):
    lp = jax.nn.log_softmax(logits, axis=-1)
    p = jnp.exp(lp)
    ent = -(jnp.where(p > 0, p * lp, 0.0)).sum(-1)
    logp = jnp.take_along_axis(lp, choice[..., None], axis=-1)[..., 0]
    if kind == "dcop":  # one categorical per owned variable: a joint log-probability, a mean entropy
        return logp.sum(-1), ent.mean(-1)
    return logp, ent


def act_batch(actor_params, kind: str, feats: dict, key, greedy: bool = False):
    """Actions ``{role: (n, ...)}`` and log-probabilities for a batch of feature dicts."""
    choices, logps = {}, {}
    for i, r in enumerate(ROLES):
        logits = jax.vmap(nets.actor_logits, (None, None, 0))(actor_params[r], kind, feats[r])
        c = jnp.argmax(logits, -1) if greedy else jax.random.categorical(jax.random.fold_in(key, i), logits)
        choices[r] = c
        logps[r] = log_prob_entropy(kind, logits, c)[0]
    return choices, logps


def values_batch(critic_params, kind: str, feats: dict, central: bool) -> dict:
    """``{role: (n,)}`` critic values for a batch of feature dicts (MAPPO: ``central``)."""
    return jax.vmap(nets.critic_values, (None, None, 0, None, None))(critic_params, kind, feats, ROLES, central)


def featurize_batch(kind: str, obs: dict) -> dict:
    return {r: jax.vmap(partial(featurize, kind))(obs[r]) for r in ROLES}



def make_evaluator(fenv, kind: str, horizon: int):
    """A jitted ``evaluate(actor_params, params) -> (scores, done, invalid)``: greedy (argmax) episodes of
    ``horizon`` steps on a batch of instances, the final team score per instance."""

    @jax.jit
    def evaluate(actor_params, params):
        n = jax.tree.leaves(params)[0].shape[0]
        keys = jax.random.split(jax.random.key(0), n)
        obs, state = jax.vmap(fenv.reset)(keys, params)

        def body(carry, _):
            obs, state = carry
            choices, _ = act_batch(actor_params, kind, featurize_batch(kind, obs), None, greedy=True)
            acts = {r: jax.vmap(partial(to_env_action, kind))(choices[r]) for r in ROLES}
            obs, state, reward, done, info = jax.vmap(fenv.step)(keys, state, acts, params)
            return (obs, state), (done, info["invalid"])

        (obs, state), (done, invalid) = jax.lax.scan(body, (obs, state), None, length=horizon)
        return state.score, done[-1], invalid.sum(0)

    return evaluate


# -- the trainer -------------------------------------------------------------------------------------
class Trainer:
    def __init__(self, cfg: Config, log=print):
        self.cfg, self.log = cfg, log
        self.fenv = make_functional(cfg.env, cfg.interface)
        self.bench = relic_envs.get_benchmark(cfg.env)
        t0 = time.perf_counter()
        pool = training_instances(cfg.env, cfg.pool, cfg.seed)
        val = training_instances(cfg.env, cfg.n_val, cfg.seed + 1_000_003)
        self.pool_params = jax.tree.map(jnp.asarray, self.fenv.params(pool))
        self.val_params = self.fenv.params(val)
        self.val_horizon = max(self.bench.max_steps(i) for i in val) + 1
        self.gen_s = time.perf_counter() - t0
        one = jax.tree.map(lambda a: a[0], self.pool_params)
        self.dims = feature_dims(cfg.kind, self.fenv, one)
        self.minibatch = cfg.n_envs * cfg.n_steps // cfg.minibatches
        self.micro_batch = cfg.micro_batch or auto_micro_batch(
            self.minibatch, activation_rows(cfg.kind, self.fenv, one), cfg.hidden)
        if self.minibatch % self.micro_batch:
            raise ValueError(f"micro_batch={self.micro_batch} does not divide the minibatch of "
                             f"{self.minibatch} samples")
        self.optimizer = optax.chain(optax.clip_by_global_norm(cfg.max_grad_norm),
                                     optax.adam(cfg.learning_rate, eps=1e-5))

    def make_evaluator(self, horizon: int):
        return make_evaluator(self.fenv, self.cfg.kind, horizon)

    def make_update_chunk(self):
        cfg, kind, fenv, pool = self.cfg, self.cfg.kind, self.fenv, self.pool_params
        n, P, central = cfg.n_envs, cfg.pool, cfg.algo == "mappo"
        keys0 = jax.random.split(jax.random.key(0), n)
        # Every pool instance's first observation and state, computed once: an automatic reset is
        # then a gather, not a vmapped reset at every step.
        obs0, state0 = jax.jit(jax.vmap(fenv.reset))(jax.random.split(jax.random.key(0), P), pool)
        take = lambda idx: jax.tree.map(lambda a: a[idx], pool)  # noqa: E731
        take0 = lambda idx: jax.tree.map(lambda a: a[idx], (obs0, state0))  # noqa: E731

        def rollout(params, env_state, key):
            def body(carry, k):
                obs, state, inst, idx, ep_ret = carry
                feats = featurize_batch(kind, obs)
                choices, logps = act_batch(params["actor"], kind, feats, k)
                values = values_batch(params["critic"], kind, feats, central)
                acts = {r: jax.vmap(partial(to_env_action, kind))(choices[r]) for r in ROLES}
                obs2, state2, reward, done, info = jax.vmap(fenv.step)(keys0, state, acts, inst)
                # automatic reset onto a fresh training instance
                new_idx = jax.random.randint(jax.random.fold_in(k, 99), (n,), 0, P)
                idx2 = jnp.where(done, new_idx, idx)
                inst2 = take(idx2)
                obs_r, state_r = take0(idx2)
                sel = lambda a, b: jax.vmap(jnp.where)(done, a, b)  # noqa: E731
                obs2 = jax.tree.map(sel, obs_r, obs2)
                state2 = jax.tree.map(sel, state_r, state2)
                tr = {"feats": feats, "choice": choices, "logp": logps, "value": values,
                      "reward": reward.astype(jnp.float32), "done": done, "score": info["score"].astype(jnp.float32)}
                return (obs2, state2, inst2, idx2, ep_ret), tr

            carry, traj = jax.lax.scan(body, env_state, jax.random.split(key, cfg.n_steps))
            last_values = values_batch(params["critic"], kind, featurize_batch(kind, carry[0]), central)
            return carry, traj, last_values

        def gae(values, rewards, dones, last):
            def body(carry, x):
                adv, next_v = carry
                v, r, d = x
                nonterm = 1.0 - d.astype(jnp.float32)
                delta = r + cfg.gamma * next_v * nonterm - v
                adv = delta + cfg.gamma * cfg.gae_lambda * nonterm * adv
                return (adv, v), adv

            _, adv = jax.lax.scan(body, (jnp.zeros_like(last), last), (values, rewards, dones), reverse=True)
            return adv, adv + values

        def loss_fn(params, piece, inv_m):
            # One piece of a minibatch of m samples: every mean over the minibatch is a sum over
            # the piece times 1/m, so the pieces' gradients add up to the minibatch's gradient.
            feats = piece["feats"]
            values = values_batch(params["critic"], kind, feats, central)
            total, stats = 0.0, {}
            vloss = 0.0
            for r in ROLES:
                logits = jax.vmap(nets.actor_logits, (None, None, 0))(params["actor"][r], kind, feats[r])
                logp, ent = log_prob_entropy(kind, logits, piece["choice"][r])
                adv = piece["adv"][r]  # normalised over the whole minibatch (mb_step)
                ratio = jnp.exp(logp - piece["logp"][r])
                pg = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - cfg.clip, 1 + cfg.clip) * adv).sum() * inv_m
                total = total + pg - cfg.ent_coef * ent.sum() * inv_m
                if not central or r == ROLES[0]:
                    vloss = vloss + ((values[r] - piece["target"][r]) ** 2).sum() * inv_m
                stats[f"entropy_{r}"] = ent.sum() * inv_m
            total = total + cfg.vf_coef * vloss
            stats["value_loss"] = vloss
            return total, stats

        inv_m, n_pieces = 1.0 / self.minibatch, self.minibatch // self.micro_batch

        def piece_grad(params, piece):
            (_, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, piece, inv_m)
            return grads, stats

        def minibatch_grad(params, mb):
            mb = {**mb, "adv": {r: (a - a.mean()) / (a.std() + 1e-8) for r, a in mb["adv"].items()}}
            pieces = jax.tree.map(lambda a: a.reshape((n_pieces, self.micro_batch) + a.shape[1:]), mb)

            def add_piece(acc, piece):  # from zeros: 0 + g is g exactly, so one piece is the old update
                return jax.tree.map(jnp.add, acc, piece_grad(params, piece)), None

            first = jax.tree.map(lambda a: a[0], pieces)
            zeros = jax.tree.map(lambda x: jnp.zeros(x.shape, x.dtype), jax.eval_shape(piece_grad, params, first))
            return jax.lax.scan(add_piece, zeros, pieces)[0]

        def update(carry, key):
            params, opt_state, env_state, scale = carry
            k_roll, k_perm = jax.random.split(key)
            env_state, traj, last = rollout(params, env_state, k_roll)
            rewards = traj["reward"] / scale
            adv, target = {}, {}
            for r in ROLES:
                adv[r], target[r] = gae(traj["value"][r], rewards, traj["done"], last[r])
            batch = {"feats": traj["feats"], "choice": traj["choice"], "logp": traj["logp"], "adv": adv, "target": target}
            N = cfg.n_steps * n
            batch = jax.tree.map(lambda a: a.reshape((N,) + a.shape[2:]), batch)

            def epoch(carry, k):
                params, opt_state = carry
                perm = jax.random.permutation(k, N)
                mbs = jax.tree.map(lambda a: a[perm].reshape((cfg.minibatches, N // cfg.minibatches) + a.shape[1:]), batch)

                def mb_step(carry, mb):
                    params, opt_state = carry
                    grads, stats = minibatch_grad(params, mb)
                    upd, opt_state = self.optimizer.update(grads, opt_state, params)
                    return (optax.apply_updates(params, upd), opt_state), stats

                return jax.lax.scan(mb_step, (params, opt_state), mbs)

            (params, opt_state), stats = jax.lax.scan(epoch, (params, opt_state), jax.random.split(k_perm, cfg.epochs))
            done = traj["done"]
            finished = done.sum()
            ep_score = jnp.where(finished > 0, (traj["score"] * done).sum() / jnp.maximum(finished, 1), jnp.nan)
            metrics = {"train_score": ep_score, "episodes": finished,
                       **{k: v.mean() for k, v in stats.items()}}
            return (params, opt_state, env_state, scale), metrics

        @partial(jax.jit, static_argnames="length")
        def run_chunk(params, opt_state, env_state, scale, key, length):
            (params, opt_state, env_state, _), metrics = jax.lax.scan(
                update, (params, opt_state, env_state, scale), jax.random.split(key, length))
            return params, opt_state, env_state, metrics

        def init_env_state(key):
            idx = jax.random.randint(key, (n,), 0, P)
            obs, state = take0(idx)
            return (obs, state, take(idx), idx, jnp.zeros(n))

        return run_chunk, init_env_state

    def train(self) -> dict[str, Any]:
        """Run the budget; returns ``{"best": actor params, "history": ..., "timing": ...}``."""
        cfg = self.cfg
        key = jax.random.key(cfg.seed)
        key, k_init, k_env = jax.random.split(key, 3)
        params = init_params(cfg, self.dims, k_init)
        opt_state = self.optimizer.init(params)
        run_chunk, init_env_state = self.make_update_chunk()
        evaluate_val = self.make_evaluator(self.val_horizon)
        env_state = init_env_state(k_env)
        steps_per_update = cfg.n_envs * cfg.n_steps
        n_updates = max(1, cfg.total_steps // steps_per_update)

        t0 = time.perf_counter()
        val_scores, *_ = evaluate_val(params["actor"], self.val_params)
        init_val = float(np.mean(np.asarray(val_scores)))
        if cfg.reward_scale is None:
            cfg.reward_scale = float(max(np.mean(np.abs(np.asarray(val_scores))), 1e-3))
        scale = jnp.float32(cfg.reward_scale)
        compile_s = eval_s = 0.0
        history = {"update": [0], "env_steps": [0], "val_score": [init_val], "train_score": [], "train_update": [],
                   "wall_s": [0.0]}
        best = (init_val, params["actor"], 0)
        self.log(f"{cfg.env} {cfg.algo}: {n_updates} updates x {steps_per_update} env steps; "
                 f"untrained validation score {init_val:.4g} (reward scale {cfg.reward_scale:.4g})")
        done_updates, train_s = 0, 0.0
        while done_updates < n_updates:
            if cfg.max_wall_s is not None and time.perf_counter() - t0 > cfg.max_wall_s:
                self.log(f"  wall-clock budget {cfg.max_wall_s:.0f} s reached after {done_updates} updates")
                break
            length = min(cfg.chunk, n_updates - done_updates)
            key, k = jax.random.split(key)
            s = time.perf_counter()
            if done_updates == 0 or length != cfg.chunk:
                compiled = run_chunk.lower(params, opt_state, env_state, scale, k, length=length).compile()
                compile_s += time.perf_counter() - s
                s = time.perf_counter()
            params, opt_state, env_state, metrics = jax.block_until_ready(
                compiled(params, opt_state, env_state, scale, k))
            train_s += time.perf_counter() - s
            done_updates += length
            s = time.perf_counter()
            val_scores, *_ = evaluate_val(params["actor"], self.val_params)
            val = float(np.mean(np.asarray(val_scores)))
            eval_s += time.perf_counter() - s
            ts = np.asarray(metrics["train_score"])
            history["train_update"] += list(range(done_updates - length + 1, done_updates + 1))
            history["train_score"] += [float(x) for x in ts]
            history["update"].append(done_updates)
            history["env_steps"].append(done_updates * steps_per_update)
            history["val_score"].append(val)
            history["wall_s"].append(time.perf_counter() - t0)
            if val > best[0]:
                best = (val, params["actor"], done_updates)
            self.log(f"  update {done_updates:5d}  env steps {done_updates * steps_per_update:9d}  "
                     f"train score {np.nanmean(ts):.4g}  validation {val:.4g}  "
                     f"({done_updates * steps_per_update / max(train_s, 1e-9):,.0f} env steps/s)")
        timing = {"wall_s": time.perf_counter() - t0, "train_s": train_s, "compile_s": compile_s, "eval_s": eval_s,
                  "env_steps": done_updates * steps_per_update, "updates": done_updates,
                  "steps_per_s": done_updates * steps_per_update / max(train_s, 1e-9), "instance_gen_s": self.gen_s}
        return {"best": best[1], "best_val": best[0], "best_update": best[2], "final": params["actor"],
                "init_val": init_val, "history": history, "timing": timing}


def train(env: str, algo: str = "ippo", steps: int = 200_000, out=None, log=print, **overrides):
    """Train IPPO or MAPPO on ``env``'s training regimes and save the best-on-validation checkpoint
    to ``out`` (when given). Returns ``(out or None, result dict)``; ``overrides`` are :class:`Config` fields."""
    from baselines.rl.policy import save

    cfg = Config(env=env, algo=algo, total_steps=steps, **overrides)
    start = time.perf_counter()
    trainer = Trainer(cfg, log=log)
    result = trainer.train()
    summary = {"best_val": result["best_val"], "best_update": result["best_update"], "init_val": result["init_val"],
               "timing": {**result["timing"], "total_wall_s": time.perf_counter() - start},
               "history": result["history"]}
    result["summary"] = summary
    path = save(out, result["best"], cfg, trainer.dims, summary) if out is not None else None
    return path, result
