"""Training throughput of IPPO/MAPPO in JAX beside the functional env's random-policy throughput.

    python benchmarks/rl_throughput.py [--env dgc mapp_pc ...] [--updates 3]

Per benchmark, in one process: (1) the functional env alone, a uniformly random legal
policy, ``lax.scan`` over ``--n-steps`` steps of ``vmap`` over ``--n-envs`` instances, a new
training instance drawn where an episode ends; it resets by a ``vmap``-ped ``reset`` at every
step (kept where an episode ended), where the trainer gathers first observations computed once:
this column pays a reset per step that training does not (on HMTSP and FSTSP it measured
below the next column); (2) the IPPO update without learning (``epochs=0``: the
rollout with the networks choosing the actions, and GAE), which says how much of a training
step is acting and how much is learning; (3) IPPO and MAPPO updates (rollout with the
networks, GAE, 4 epochs x 4 minibatches of PPO) at the trainer's defaults. One env step =
one joint step of one instance. Compile time is excluded from every rate; an update's rate is
the fastest of three calls. Prints a table;
asserts nothing.

``--before`` adds IPPO trained the way it was before 2026-12-07 (each minibatch's gradient in one
piece, ``micro_batch`` = the minibatch) beside the default (pieces sized to the CPU's cache,
:func:`baselines.rl.ppo.auto_micro_batch`): the same gradient, so the ratio is the speed-up alone.

``--acting-split`` adds the networks' forward pass alone per env step (three actors and the critic,
scanned over stored batches of the rollout's shape, no env), beside the random policy's step:
acting pays one env step plus one forward pass, so the last column estimates "acting, % of random".

``--split`` adds where an IPPO update's time goes: the same update with one epoch of one
minibatch (one gradient pass over the whole batch) beside the default 4 x 4, and the
shares of the default update's time spent acting (rollout, networks, GAE) and learning
(the 16 minibatch steps), from the three measured rates.
"""

from __future__ import annotations

import argparse
import os
import time

import jax
import jax.numpy as jnp

import relic_envs
from baselines.rl.features import kind_of
from baselines.rl.ppo import ROLES, Config, Trainer


def random_throughput(trainer: Trainer, n_steps: int, repeats: int) -> float:
    fenv, pool, n = trainer.fenv, trainer.pool_params, trainer.cfg.n_envs
    P, kind = trainer.cfg.pool, trainer.cfg.kind
    keys0 = jax.random.split(jax.random.key(0), n)
    take = lambda idx: jax.tree.map(lambda a: a[idx], pool)  # noqa: E731

    def random_action(obs, k):
        if kind == "dcop":
            K = obs["delta"].shape[-1]
            return jax.random.randint(k, obs["cur"].shape, 0, K).astype(jnp.int32)
        logits = jnp.where(obs["action_mask"] > 0, 0.0, -1e9)
        return (jax.random.categorical(k, logits) - (1 if kind == "pointer_idle" else 0)).astype(jnp.int32)

    @jax.jit
    def run(carry, key):
        def body(carry, k):
            obs, state, inst = carry
            acts = {r: jax.vmap(random_action)(obs[r], jax.random.split(jax.random.fold_in(k, i), n))
                    for i, r in enumerate(ROLES)}
            obs2, state2, _, done, _ = jax.vmap(fenv.step)(keys0, state, acts, inst)
            inst2 = take(jnp.where(done, jax.random.randint(k, (n,), 0, P), 0))
            obs_r, state_r = jax.vmap(fenv.reset)(keys0, inst2)
            sel = lambda a, b: jax.vmap(jnp.where)(done, a, b)  # noqa: E731
            inst2 = jax.tree.map(sel, inst2, inst)
            return (jax.tree.map(sel, obs_r, obs2), jax.tree.map(sel, state_r, state2), inst2), None

        carry, _ = jax.lax.scan(body, carry, jax.random.split(key, n_steps))
        return carry

    inst = take(jnp.arange(n) % P)
    obs, state = jax.vmap(fenv.reset)(keys0, inst)
    carry = jax.block_until_ready(run((obs, state, inst), jax.random.key(1)))  # compile
    start = time.perf_counter()
    for i in range(repeats):
        carry = run(carry, jax.random.key(2 + i))
    jax.block_until_ready(carry)
    return repeats * n_steps * n / (time.perf_counter() - start)


TIMED_CALLS = 3


def fastest(call, calls: int = TIMED_CALLS) -> float:
    """Seconds of the fastest of ``calls`` calls of ``call()`` (blocked until ready): this VM's
    neighbours add noise, never speed."""
    best = float("inf")
    for i in range(calls):
        s = time.perf_counter()
        jax.block_until_ready(call(i))
        best = min(best, time.perf_counter() - s)
    return best


def update_throughput(cfg: Config, updates: int) -> tuple[float, float]:
    """(env steps per second, compile seconds) of ``updates`` PPO updates of ``cfg`` in one compiled chunk,
    the fastest of :data:`TIMED_CALLS` calls."""
    from baselines.rl.ppo import init_params

    trainer = Trainer(cfg, log=lambda *a: None)
    params = init_params(cfg, trainer.dims, jax.random.key(0))
    opt_state = trainer.optimizer.init(params)
    run_chunk, init_env_state = trainer.make_update_chunk()
    env_state = init_env_state(jax.random.key(1))
    scale = jnp.float32(1.0)
    s = time.perf_counter()
    compiled = run_chunk.lower(params, opt_state, env_state, scale, jax.random.key(2), length=updates).compile()
    compile_s = time.perf_counter() - s
    best = fastest(lambda i: compiled(params, opt_state, env_state, scale, jax.random.key(3 + i)))
    return updates * cfg.n_envs * cfg.n_steps / best, compile_s


def network_forward_us(trainer: Trainer) -> float:
    """Microseconds per env step of the networks alone, as the rollout calls them: a ``lax.scan`` over
    ``n_steps`` stored batches of ``n_envs`` feature rows, the three actors' logits and sampling and the
    critic's values at each step, no env; the fastest of five calls."""
    from baselines.rl.ppo import act_batch, featurize_batch, init_params, values_batch

    cfg = trainer.cfg
    params = init_params(cfg, trainer.dims, jax.random.key(0))
    P, kind, central = cfg.pool, cfg.kind, cfg.algo == "mappo"
    T, n = cfg.n_steps, cfg.n_envs
    obs, _ = jax.jit(jax.vmap(trainer.fenv.reset))(jax.random.split(jax.random.key(0), P), trainer.pool_params)
    feats = jax.jit(lambda o: featurize_batch(kind, o))(jax.tree.map(lambda a: a[jnp.arange(T * n) % P], obs))
    feats = jax.tree.map(lambda a: a.reshape((T, n) + a.shape[1:]), feats)

    @jax.jit
    def forward(params, feats, key):
        def body(_, x):
            f, k = x
            choices, logps = act_batch(params["actor"], kind, f, k)
            return None, (choices, logps, values_batch(params["critic"], kind, f, central))

        return jax.lax.scan(body, None, (feats, jax.random.split(key, T)))[1]

    jax.block_until_ready(forward(params, feats, jax.random.key(1)))  # compile
    return 1e6 * fastest(lambda i: forward(params, feats, jax.random.key(2 + i)), calls=5) / (T * n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", nargs="+", default=None, help="benchmarks (default: all fourteen)")
    parser.add_argument("--algo", nargs="+", default=["ippo", "mappo"])
    parser.add_argument("--updates", type=int, default=3, help="timed PPO updates per algorithm (after one compiled)")
    parser.add_argument("--n-envs", type=int, default=32)
    parser.add_argument("--n-steps", type=int, default=64)
    parser.add_argument("--random-repeats", type=int, default=10)
    parser.add_argument("--split", action="store_true", help="also where an IPPO update's time goes (module doc)")
    parser.add_argument("--acting-split", action="store_true",
                        help="also the networks' forward alone per env step beside the random policy's step")
    parser.add_argument("--before", action="store_true", help="also IPPO with whole-minibatch gradients (module doc)")
    args = parser.parse_args()
    rows = []
    for env in args.env or relic_envs.names():
        common = dict(env=env, n_envs=args.n_envs, n_steps=args.n_steps, pool=64, n_val=4)
        trainer = Trainer(Config(algo="ippo", **common), log=lambda *a: None)
        rates = {"random": random_throughput(trainer, args.n_steps, args.random_repeats)}
        rates["acting"], _ = update_throughput(Config(algo="ippo", epochs=0, **common), args.updates)
        if args.before:
            rates["ippo_before"], _ = update_throughput(Config(algo="ippo", micro_batch=trainer.minibatch, **common),
                                                        args.updates)
            rates["micro"] = float(trainer.micro_batch)
        if args.acting_split:
            rates["net_us"] = network_forward_us(trainer)
        for algo in args.algo:
            rates[algo], rates[f"{algo}_compile"] = update_throughput(Config(algo=algo, **common), args.updates)
        if args.split:
            rates["one_pass"], _ = update_throughput(Config(algo="ippo", epochs=1, minibatches=1, **common),
                                                     args.updates)
            if "ippo" not in rates:
                rates["ippo"], _ = update_throughput(Config(algo="ippo", **common), args.updates)
        rows.append((env, kind_of(env), rates))
        print(f"{env}: " + ", ".join(f"{k} {v:,.1f}" for k, v in rates.items()), flush=True)
    print(f"\nbatch {args.n_envs} instances x {args.n_steps} steps per update; jax {jax.__version__}, "
          f"{jax.devices()[0].platform}, {jax.device_count()} device(s), {os.cpu_count()} CPU(s)")
    head = "| benchmark | head | random policy, env steps/s | IPPO acting only (no learning), env steps/s | " + " | ".join(
        f"{a.upper()} training, env steps/s | {a.upper()} compile s" for a in args.algo) + " |"
    print(head)
    print("|" + "---|" * (4 + 2 * len(args.algo)))
    for env, kind, r in rows:
        cells = " | ".join(f"{r[a]:,.0f} | {r[a + '_compile']:.0f}" for a in args.algo)
        print(f"| {env} | {kind} | {r['random']:,.0f} | {r['acting']:,.0f} | {cells} |")
    if args.before:
        print("\nIPPO training before (whole-minibatch gradients) and after (pieces sized to the cache), one process")
        print("| benchmark | acting, % of random | piece, samples | before, env steps/s | after, env steps/s | after / before |")
        print("|---|---|---|---|---|---|")
        for env, _, r in rows:
            if "ippo" in r:
                print(f"| {env} | {100 * r['acting'] / r['random']:.0f}% | {r['micro']:.0f} | {r['ippo_before']:,.0f} | "
                      f"{r['ippo']:,.0f} | {r['ippo'] / r['ippo_before']:.2f}x |")
    if args.acting_split:
        print("\nacting against the random policy, microseconds per env step: the env with random actions, the"
              " networks' forward alone (the rollout's batches), and acting as measured")
        print("| benchmark | random policy step, us | networks' forward, us | acting (IPPO, epochs=0), us | "
              "acting, % of random | env / (env + forward) |")
        print("|---|---|---|---|---|---|")
        for env, _, r in rows:
            env_us, net_us, act_us = 1e6 / r["random"], r["net_us"], 1e6 / r["acting"]
            print(f"| {env} | {env_us:.1f} | {net_us:.1f} | {act_us:.1f} | {100 * env_us / act_us:.0f}% | "
                  f"{100 * env_us / (env_us + net_us):.0f}% |")
    if args.split:
        print("\nwhere an IPPO update's time goes (seconds per env step from the rates above)")
        print("| benchmark | acting, % of random | 1 epoch x 1 minibatch, env steps/s | 4 x 4, env steps/s | "
              "acting share | 16 minibatch steps share | learning time / acting time |")
        print("|---|---|---|---|---|---|---|")
        for env, _, r in rows:
            act, total = 1 / r["acting"], 1 / r["ippo"]
            learn = max(total - act, 0.0)
            print(f"| {env} | {100 * r['acting'] / r['random']:.0f}% | {r['one_pass']:,.0f} | {r['ippo']:,.0f} | "
                  f"{100 * act / total:.0f}% | {100 * learn / total:.0f}% | {learn / act:.1f}x |")


if __name__ == "__main__":
    main()
