"""Policy gradient entirely inside ``jit`` on the functional JAX envs, against the same learner on the PettingZoo env.

    pip install 'relic-envs[jax,render]' optax
    python examples/jax_pg.py --env dgc --plot docs/images/jax_pg_dgc.png
    python examples/jax_pg.py --env mapp_pc --plot docs/images/jax_pg_mapp_pc.png

The learner: REINFORCE with independent linear policies (one small parameter vector per
role), a batch of training instances per update, reward-to-go with the batch's mean as
baseline (normalised), and Adam (``optax``). Each role scores its choices with a few features read from its own
observation (the roles observe different things; the features are built per role):

- DCOP (DGC, DiMES, SensorDCSP, SHDS): for every owned variable and every value, the
  value's local cost ``delta`` (scaled) and whether it is the current value; each
  variable's new value is a softmax draw over the values.
- MAPP (PC, AR, DS; paper interface): for every node, its distance from the agent, its
  remaining value (prize or request value where the observation has one) and value per
  distance, and whether it is the depot; the next node is a softmax draw over the
  admitted ones (``action_mask``).

Two drivers of the *same* learner, compared in one run:

``jax``
    rollouts (``lax.scan`` over the steps of ``vmap`` over instances of the functional
    env's ``step``), the loss, the gradient and the Adam update in one jitted function;
    ``lax.scan`` over updates.
``pettingzoo``
    the same policy, sampled in numpy, steps the PettingZoo parallel env one instance at
    a time; the recorded features, actions and returns go through the same jitted loss
    and update.

Printed: the mean training return every few updates (the learning curve), and the env
steps per second of each driver (one env step = one joint step of one instance).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import relic_envs
from relic_envs.core.env import RelicParallelEnv
from relic_envs.core.functional import make

try:
    import optax
except ImportError as exc:  # pragma: no cover - the example says what it needs
    raise SystemExit("this example needs optax: pip install optax") from exc

ROLES = ("A", "B", "C")
DCOPS = ("dgc", "dimes", "sensor_dcsp", "shds")


# -- per-role features: (M decisions, K choices, D features) and a (M, K) choice mask ------------------
# Written once for jax.numpy (inside jit) and numpy (the PettingZoo driver): ``xp`` is the module.
def dcop_features(role: str, obs: dict[str, Any], xp=jnp) -> tuple[Any, Any]:
    delta = xp.asarray(obs["delta"], dtype=xp.float32)  # (m, K): local cost of each value of each owned variable
    scale = xp.abs(delta).max() + 1.0
    current = (xp.asarray(obs["cur"])[:, None] == xp.arange(delta.shape[1])).astype(xp.float32)
    feats = xp.stack([-delta / scale, current], axis=-1)
    return feats, xp.ones(delta.shape, dtype=bool)


def _mapp_view(role: str, obs: dict[str, Any], xp) -> tuple[Any, Any]:
    """(distance from the agent to every node, remaining value of every node) from this role's observation."""
    if role == "A":
        dist = xp.asarray(obs["dist_mat"])[obs["current"]]
        value = xp.asarray(obs["unvisited_prizes"]["value"]) * xp.asarray(obs["unvisited_prizes"]["mask"])
    elif role == "B":
        dist = xp.asarray(obs["graph"]["dist_mat"])[obs["my_state"]["current"]]
        value = xp.asarray(obs["graph"]["nodes"])[:, 3]
    else:
        dist = xp.asarray(obs["dist_row"])
        value = xp.asarray(obs["remaining_prizes"])
    return dist.astype(xp.float32), value.astype(xp.float32)


def mapp_features(role: str, obs: dict[str, Any], xp=jnp) -> tuple[Any, Any]:
    dist, value = _mapp_view(role, obs, xp)
    depot = (xp.arange(dist.shape[0]) == 0).astype(xp.float32)
    feats = xp.stack([-dist, value, value / (dist + 0.05), depot], axis=-1)[None]  # (1, N, 4)
    return feats, (xp.asarray(obs["action_mask"]) > 0)[None]


def features_for(env: str) -> tuple[Callable, int]:
    if env in DCOPS:
        return dcop_features, 2
    if env == "mapp_pc":
        return mapp_features, 4
    raise SystemExit(f"this example covers the DCOPs and mapp_pc; {env!r} needs its own features")


# -- the policy: logits = features @ theta_role -------------------------------------------------------
def logits(theta, feats, mask):
    return jnp.where(mask, feats @ theta, -1e9)


def log_prob(theta, feats, mask, action):
    lp = jax.nn.log_softmax(logits(theta, feats, mask), axis=-1)
    return jnp.take_along_axis(lp, action[..., None], axis=-1)[..., 0].sum()


def to_action(env: str, choice):
    """The env's action from the (M,) choices: a DCOP role's values, a MAPP agent's node id."""
    return choice.astype(jnp.int32) if env in DCOPS else choice[0].astype(jnp.int32)


def advantages(rewards):
    """Reward-to-go per step, minus its mean over the batch's instances, over its std: (steps, n)."""
    to_go = jnp.cumsum(rewards[::-1], axis=0)[::-1]
    centred = to_go - to_go.mean(axis=1, keepdims=True)
    return centred / (centred.std() + 1e-8)


# -- driver 1: everything inside jit --------------------------------------------------------------------
def make_jax_trainer(env: str, fenv, params, steps: int, optimizer):
    featurize, _ = features_for(env)
    n = jax.tree.leaves(params)[0].shape[0]
    keys0 = jax.random.split(jax.random.key(0), n)

    def acting(state):
        return ~state.routing.home if env not in DCOPS else jnp.ones(3, bool)

    def episode(theta, key):
        """(rewards, log-probabilities) per step and instance, both (steps, n)."""
        obs, state = jax.vmap(fenv.reset)(keys0, params)

        def body(carry, key_t):
            obs, state, done = carry
            acts, logp = {}, jnp.zeros(n)
            live = jax.vmap(acting)(state) & ~done[:, None]  # (n, 3): the role's answer counts
            for k, role in enumerate(ROLES):
                feats, mask = jax.vmap(lambda o, role=role: featurize(role, o))(obs[role])
                draw = jax.random.categorical(jax.random.fold_in(key_t, k), logits(theta[k], feats, mask))
                acts[role] = jax.vmap(lambda c: to_action(env, c))(draw)
                lp = jax.vmap(log_prob, in_axes=(None, 0, 0, 0))(theta[k], feats, mask, draw)
                logp = logp + jnp.where(live[:, k], lp, 0.0)
            obs, state, reward, step_done, _ = jax.vmap(fenv.step)(keys0, state, acts, params)
            return (obs, state, done | step_done), (reward, logp, (~done).sum())

        _, (rewards, logps, live) = jax.lax.scan(body, (obs, state, jnp.zeros(n, bool)), jax.random.split(key, steps))
        return rewards, logps, live.sum()

    def loss(theta, key):
        rewards, logp, live = episode(theta, key)
        advantage = jax.lax.stop_gradient(advantages(rewards))
        return -(advantage * logp).sum(0).mean(), (rewards.sum(0).mean(), live)

    def train(theta, opt_state, key, iters: int):
        def update(carry, key_i):
            theta, opt_state = carry
            (_, (mean_return, live)), grad = jax.value_and_grad(loss, has_aux=True)(theta, key_i)
            updates, opt_state = optimizer.update(grad, opt_state, theta)
            return (optax.apply_updates(theta, updates), opt_state), (mean_return, live)

        (theta, opt_state), (curve, live) = jax.lax.scan(update, (theta, opt_state), jax.random.split(key, iters))
        return theta, opt_state, curve, live.sum()

    return jax.jit(train, static_argnames="iters")


# -- driver 2: the same learner stepping the PettingZoo env ---------------------------------------------
def pettingzoo_update(env: str, instances, theta, opt_state, optimizer, rng: np.random.Generator):
    featurize, _ = features_for(env)
    bench = relic_envs.get_benchmark(env)
    start = time.perf_counter()
    records = {r: [] for r in ROLES}  # (instance, step, feats, mask, choice) per decision that counts
    horizon = max(bench.max_steps(i) for i in instances) + 1
    rewards, steps = np.zeros((horizon, len(instances))), 0
    theta_np = np.asarray(theta)
    for i, instance in enumerate(instances):
        penv = RelicParallelEnv(bench, instances=[instance], on_invalid="penalize")
        obs, _ = penv.reset(seed=0)
        t = 0
        while penv.agents:
            actions = {}
            for k, role in enumerate(ROLES):
                feats, mask = featurize(role, obs[role], np)
                z = np.where(mask, feats @ theta_np[k], -1e9)
                p = np.exp(z - z.max(axis=-1, keepdims=True))
                cdf = np.cumsum(p / p.sum(axis=-1, keepdims=True), axis=-1)
                choice = np.minimum((cdf < rng.random((len(p), 1))).sum(axis=-1), p.shape[-1] - 1)
                actions[role] = choice if env in DCOPS else int(choice[0])
                if penv.episode.acting(role):
                    records[role].append((i, t, feats, mask, choice))
            obs, reward, *_ = penv.step(actions)
            rewards[t, i] = reward["A"]
            t += 1
            steps += 1
    advantage = np.asarray(advantages(jnp.asarray(rewards)))

    # Same-size instances: every decision of a role stacks into one batch, padded to a fixed
    # number of rows (weight 0) so the jitted loss compiles once.
    rows = horizon * len(instances)
    batches = []
    for role in ROLES:
        i, t, feats, mask, choice = (np.stack(col) for col in zip(*records[role]))
        pad = rows - len(i)
        weight = np.concatenate([advantage[t, i], np.zeros(pad)])
        batches.append((weight, *(np.concatenate([a, np.repeat(a[:1], pad, axis=0)]) for a in (feats, mask, choice))))
    rollout_s = time.perf_counter() - start
    grad = _pz_grad(theta, batches, len(instances))
    updates, opt_state = optimizer.update(grad, opt_state, theta)
    return optax.apply_updates(theta, updates), opt_state, float(rewards.sum(0).mean()), steps, rollout_s


@jax.jit
def _pz_grad(theta, batches, n_instances):
    """The same loss on the recorded decisions."""
    def loss(theta):
        total = 0.0
        for k, (weight, feats, mask, choice) in enumerate(batches):
            lp = jax.vmap(log_prob, in_axes=(None, 0, 0, 0))(theta[k], feats, mask, choice)
            total = total + (weight * lp).sum()
        return -total / n_instances

    return jax.grad(loss)(theta)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="dgc", choices=[*DCOPS, "mapp_pc"])
    parser.add_argument("--iters", type=int, default=300, help="policy-gradient updates of the jax driver")
    parser.add_argument("--batch", type=int, default=64, help="training instances per update")
    parser.add_argument("--lr", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated training instances")
    parser.add_argument("--pz-iters", type=int, default=2, help="updates of the PettingZoo driver (it is slow)")
    parser.add_argument("--plot", default=None, help="save the learning curve to this PNG file")
    args = parser.parse_args()

    fenv = make(args.env)
    bench = relic_envs.get_benchmark(args.env)
    # Fresh instances from the training regimes (train1..train5 in turn; the held-out test
    # regimes are never used), the same ones at every update.
    regimes = [r for r in bench.regimes() if r.startswith("train")]
    gen = np.random.default_rng(args.seed)
    instances = [bench.generate(regimes[k % len(regimes)], gen) for k in range(args.batch)]
    params = fenv.params(instances)
    steps = max(bench.max_steps(i) for i in instances) + 1
    _, dims = features_for(args.env)
    optimizer = optax.adam(args.lr)
    theta = jnp.zeros((3, dims), jnp.float32)  # uniform policies to start
    opt_state = optimizer.init(theta)

    train = make_jax_trainer(args.env, fenv, params, steps, optimizer)
    start = time.perf_counter()
    compiled = train.lower(theta, opt_state, jax.random.key(1), iters=args.iters).compile()
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    theta_j, _, curve, live_steps = jax.block_until_ready(compiled(theta, opt_state, jax.random.key(1)))
    jax_s = time.perf_counter() - start
    curve = np.asarray(curve)
    jax_steps = int(live_steps)  # steps of live episodes; the scan's identity steps after an episode ends not counted
    from relic_envs.core.rollout import rollout
    from relic_envs.seeds import seed_team

    seeds = np.mean([r.score for r in rollout(args.env, seed_team(args.env), instances, progress=False)])
    print(f"{args.env}: {len(instances)} training instances per update, episodes of at most {steps} steps; "
          f"the seed team's mean return on them: {seeds:.4g} (a return is the team score)")
    print("update | mean training return (jax driver)")
    for it in sorted({0, *range(9, args.iters, max(1, args.iters // 10)), args.iters - 1}):
        print(f"{it + 1:6d} | {curve[it]:.4g}")

    rng = np.random.default_rng(0)
    theta_p, opt_p = theta, optimizer.init(theta)
    pz_steps, pz_curve, pz_s, pz_rollout_s = 0, [], 0.0, 0.0
    for it in range(args.pz_iters + 1):  # the first update compiles the loss: not timed, as for the jax driver
        start = time.perf_counter()
        theta_p, opt_p, mean_return, n_steps, rollout_s = pettingzoo_update(
            args.env, instances, theta_p, opt_p, optimizer, rng)
        pz_curve.append(mean_return)
        if it:
            pz_steps, pz_s, pz_rollout_s = pz_steps + n_steps, pz_s + time.perf_counter() - start, pz_rollout_s + rollout_s
    print(f"pettingzoo driver, first {args.pz_iters + 1} updates: mean training return "
          f"{', '.join(f'{r:.4g}' for r in pz_curve)} (jax driver: "
          f"{', '.join(f'{r:.4g}' for r in curve[:args.pz_iters + 1])})")
    jax_rate, pz_rate = jax_steps / jax_s, pz_steps / pz_s
    print(f"env steps per second of training: jax {jax_rate:,.0f} (compile {compile_s:.1f} s, not counted) | "
          f"pettingzoo {pz_rate:,.0f} (its rollouts alone: {pz_steps / pz_rollout_s:,.0f}) | ratio {jax_rate / pz_rate:,.0f}x "
          f"(device: {jax.devices()[0].platform}, {jax.device_count()} device(s))")
    if args.plot:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(5, 3.2))
        ax = fig.subplots()
        ax.plot(np.arange(1, args.iters + 1), curve, label="jax driver (inside jit)")
        ax.plot(np.arange(1, len(pz_curve) + 1), pz_curve, "o", label="pettingzoo driver")
        ax.axhline(seeds, color="grey", ls=":", label="seed team (programs), same instances")
        ax.set_xlabel("policy-gradient update")
        ax.set_ylabel("mean training return")
        ax.set_title(f"REINFORCE on {args.env} ({len(instances)} instances per update)")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"curve: {args.plot}")


if __name__ == "__main__":
    main()
