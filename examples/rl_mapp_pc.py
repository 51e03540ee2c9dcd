"""Train role C of MAPP-PC with a masked PPO while the seed programs play A and B.

The single-agent view (``relic_envs.wrappers.single_agent_env``) hands role C to
sb3-contrib's ``MaskablePPO``: C sees its flat observation (the paper's
``select_next_C`` arguments: ``current``, ``dist_row``, ``remaining_prizes``,
``remaining_budget``, plus the ``action_mask``), picks a node among the legal ones, and
is rewarded with the team's collected prize. Teammates A and B are the seed programs.
Spaces depend on the instance size, so training uses fresh instances of the ``test50``
regime (N = 50) drawn by the generator, validation 20 more, and the final evaluation
the 20 held-out ``test50`` instances of the canonical split, which training never sees.

The trained C is an ordinary policy (``Dict observation -> node``), evaluated with
``relic_envs.rollout`` beside the seed C, two masked-random Cs and C absent.

Install and run (not part of the test suite; about 15 minutes on 2 CPU cores)::

    pip install -e '.[rl]'      # stable-baselines3, sb3-contrib (torch), matplotlib
    python examples/rl_mapp_pc.py --timesteps 300000 --out docs/images/rl_mapp_pc.png

It writes the learning-curve figure and, beside it, a JSON file with every number.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import relic_envs
from relic_envs.seeds import seed_team
from relic_envs.wrappers import Flattener, single_agent_env

NAME, ROLE, REGIME = "mapp_pc", "C", "test50"


class LearnedRole:
    """A trained MaskablePPO model as a relic policy: ``Dict observation -> node id``."""

    def __init__(self, model, flattener: Flattener):
        self.model, self.flattener = model, flattener

    def __call__(self, obs) -> int:
        vector = self.flattener.flatten(obs)
        action, _ = self.model.predict(vector, action_masks=obs["action_mask"].astype(bool), deterministic=True)
        return int(action)


class MaskedRandom:
    """A uniformly random legal node; ``customers_first``: the depot only when nothing else is legal."""

    def __init__(self, seed: int, customers_first: bool = False):
        self.rng, self.customers_first = np.random.default_rng(seed), customers_first

    def __call__(self, obs) -> int:
        legal = np.flatnonzero(obs["action_mask"])
        if self.customers_first and legal.size > 1:
            legal = legal[legal != 0]
        return int(self.rng.choice(legal))


def team_with(role_policy) -> dict:
    team = seed_team(NAME)
    team[ROLE] = role_policy
    return team


def mean_score(role_policy, instances) -> float:
    return float(np.mean([r.score for r in relic_envs.rollout(NAME, team_with(role_policy), instances)]))


def baselines(instances, repeats: int = 5) -> dict[str, float]:
    """Team scores with C replaced by each reference behaviour (randoms averaged over ``repeats`` seeds)."""
    return {
        "seed C": mean_score(seed_team(NAME)[ROLE], instances),
        "masked-random C": float(np.mean([mean_score(MaskedRandom(s), instances) for s in range(repeats)])),
        "masked-random C, customers first": float(
            np.mean([mean_score(MaskedRandom(s, customers_first=True), instances) for s in range(repeats)])),
        "C absent (stays at the depot)": mean_score(lambda obs: 0, instances),
    }


def train(args):
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    torch.set_num_threads(args.threads)
    bench = relic_envs.get_benchmark(NAME)
    val_rng = np.random.default_rng(args.seed + 10_000)
    validation = [bench.generate(REGIME, val_rng) for _ in range(args.val_size)]
    test = relic_envs.splits(NAME).test_instances(REGIME)

    def make_env():
        return single_agent_env(NAME, ROLE, regime=REGIME, dtype=np.float32)

    vec = make_vec_env(make_env, n_envs=args.n_envs, seed=args.seed)
    flattener = vec.envs[0].unwrapped.flattener
    model = MaskablePPO(
        "MlpPolicy", vec, n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=10, learning_rate=3e-4,
        gamma=0.99, gae_lambda=0.95, ent_coef=0.01, policy_kwargs={"net_arch": [256, 256]}, seed=args.seed, verbose=0,
    )
    policy = LearnedRole(model, flattener)
    curve = {"train": [], "validation": []}
    started = time.time()

    class Curve(BaseCallback):
        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    curve["train"].append((self.num_timesteps, float(info["episode"]["r"])))
            if self.n_calls % max(1, args.eval_every // args.n_envs) == 0:
                score = mean_score(policy, validation)
                curve["validation"].append((self.num_timesteps, score))
                print(f"{self.num_timesteps:>8} steps  {time.time() - started:6.0f} s  validation {score:.2f}", flush=True)
            return True

    curve["validation"].append((0, mean_score(policy, validation)))
    model.learn(total_timesteps=args.timesteps, callback=Curve())
    wall = time.time() - started
    if curve["validation"][-1][0] == model.num_timesteps:  # evaluated during the last rollout, before the last update
        curve["validation"].pop()
    curve["validation"].append((model.num_timesteps, mean_score(policy, validation)))

    results = {
        "benchmark": NAME, "role": ROLE, "regime": REGIME, "timesteps": model.num_timesteps,
        "wall_s": round(wall, 1), "n_envs": args.n_envs, "seed": args.seed,
        "validation": {"learned C": curve["validation"][-1][1], **baselines(validation)},
        "test (held-out split)": {"learned C": mean_score(policy, test), **baselines(test)},
        "curve": {"train": binned(curve["train"], args.bin_steps), "validation": curve["validation"]},
    }
    if args.save_model is not None:
        model.save(args.save_model)
    return results


def binned(episodes: list[tuple[int, float]], size: int) -> list[tuple[int, float, int]]:
    """Training episodes as ``(last step of bin, mean return, episodes)`` per ``size`` steps."""
    out: dict[int, list[float]] = {}
    for step, ret in episodes:
        out.setdefault((step - 1) // size, []).append(ret)
    return [((b + 1) * size, float(np.mean(r)), len(r)) for b, r in sorted(out.items())]


def plot(results, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.6), dpi=120)
    train = np.array(results["curve"]["train"])
    if len(train):
        size = int(train[0, 0])
        ax.plot(train[:, 0] - size / 2, train[:, 1], color="tab:blue", alpha=0.5,
                label=f"training episodes, sampled actions (mean per {size:,} steps, fresh instances)")
    val = np.array(results["curve"]["validation"])
    ax.plot(val[:, 0], val[:, 1], "o-", color="tab:blue", markersize=3, label="learned C, masked argmax, 20 validation instances")
    styles = {"seed C": "tab:green", "masked-random C": "tab:red", "masked-random C, customers first": "tab:orange",
              "C absent (stays at the depot)": "tab:gray"}
    for label, colour in styles.items():
        ax.axhline(results["validation"][label], color=colour, linestyle="--", linewidth=1, label=f"{label} (validation)")
    ax.set_xlabel("environment steps of role C (decisions)")
    ax.set_ylabel("team score: collected prize")
    ax.set_title(f"MAPP-PC (N = 50): role C trained by MaskablePPO, A and B seed programs\n"
                 f"{results['timesteps']:,} steps, {results['wall_s'] / 60:.0f} min on {results['n_envs']} envs, CPU",
                 fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timesteps", type=int, default=300_000)
    parser.add_argument("--n-envs", type=int, default=8)
    parser.add_argument("--n-steps", type=int, default=256, help="PPO rollout length per env")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--eval-every", type=int, default=10_000, help="steps between validation evaluations")
    parser.add_argument("--val-size", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--bin-steps", type=int, default=5000, help="training-curve bin width in the JSON")
    parser.add_argument("--out", type=Path, default=Path("docs/images/rl_mapp_pc.png"))
    parser.add_argument("--save-model", type=Path, default=None, help="also save the trained model (.zip)")
    parser.add_argument("--replot", action="store_true", help="redraw the figure from the JSON beside --out")
    args = parser.parse_args(argv)

    if args.replot:
        plot(json.loads(args.out.with_suffix(".json").read_text()), args.out)
        return
    results = train(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(results) + "\n")
    plot(results, args.out)
    for split in ("validation", "test (held-out split)"):
        print(f"\n{split}: mean team score over {args.val_size if split == 'validation' else 20} instances")
        for label, score in results[split].items():
            print(f"  {label:<36} {score:7.2f}")
    print(f"\n{results['timesteps']} steps in {results['wall_s']:.0f} s; figure {args.out}")


if __name__ == "__main__":
    main()
