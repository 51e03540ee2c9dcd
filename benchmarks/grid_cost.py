"""What the paper's whole grid costs, measured from small runs: cells, LLM calls, prompt sizes, machine time.

    python benchmarks/grid_cost.py --out runs/cost                  # every method x benchmark, tiny budget
    python benchmarks/grid_cost.py --out runs/cost --envs dgc --methods relic eoh

Each (method, benchmark) pair runs one small search with the offline backend (``--batches``
batches of ``--proposals`` proposals per role; default 1 x 2) through a client that
measures every request it is sent: the prompts are the real ones (the same prompt
builders as with a model), the replies are the offline backend's programs. Then the
final team is evaluated on the held-out test sets, as a grid cell does. Printed per pair:

- calls per cell at the paper's budget (5 batches x 10 proposals x 3 roles) from each
  method's accounting (``relic_experiments.cli.llm_calls``: candidate calls exact,
  auxiliary calls as the accounting's range);
- mean prompt characters per call, measured, and prompt tokens per cell estimated as
  ``characters / 4`` (no tokenizer dependency; a model's tokenizer will differ by tens of
  percent) times the paper-budget calls;
- mean reply characters per call, measured on the offline backend's replies (programs
  only: a model's reply adds prose around the code, so read it as a lower bound);
- machine seconds per cell at the paper's budget: the measured search time scaled by
  (paper proposals / measured proposals), plus the measured test evaluation.

Totals for the paper's main grid (6 methods x 14 benchmarks x 3 runs) close the table.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

import relic_envs
from relic_experiments.cell import Cell, _config, _search_class, test_objectives
from relic_experiments.cli import llm_calls
from relic_experiments.spec import known_methods
from relic_learner.llm import OfflineClient
from relic_learner.llm.base import Completion

PAPER = dict(batches=5, proposals=10, runs=3)


class MeasuringClient(OfflineClient):
    """The offline backend, recording the size of every request and reply it handles."""

    def __init__(self, seed: int = 0):
        super().__init__(seed)
        self.sizes: list[tuple[str, int, int]] = []  # (purpose, prompt characters, reply characters)

    def _complete(self, messages, purpose, *, tag, cache_salt) -> Completion:
        completion = super()._complete(messages, purpose, tag=tag, cache_salt=cache_salt)
        self.sizes.append((purpose, sum(len(m["content"]) for m in messages), len(completion.text)))
        return completion


def measure(method: str, env: str, out: Path, batches: int, proposals: int) -> dict[str, Any]:
    cell = Cell(method, env, "paper", 0, batches=batches, proposals=proposals)
    client = MeasuringClient(seed=0)
    start = time.perf_counter()
    search = _search_class(cell)(_config(cell), cell.path(out), llm=client)
    team = search.learn()
    searched = time.perf_counter() - start
    start = time.perf_counter()
    test_objectives(env, "paper", team)
    tested = time.perf_counter() - start
    prompt = [p for _, p, _ in client.sizes]
    reply = [r for _, _, r in client.sizes]
    return {"method": method, "env": env, "calls": len(client.sizes), "proposals": 3 * batches * proposals,
            "prompt_chars": float(np.mean(prompt)), "reply_chars": float(np.mean(reply)),
            "search_s": searched, "test_s": tested}


def paper_cell(m: dict[str, Any]) -> dict[str, Any]:
    """One paper-budget cell's cost from a small measurement."""
    cell = Cell(m["method"], m["env"], "paper", 0, batches=PAPER["batches"], proposals=PAPER["proposals"])
    candidates, aux = llm_calls(cell)
    aux_hi = int(str(aux).split(" to ")[-1])
    calls = candidates + aux_hi
    scale = 3 * PAPER["batches"] * PAPER["proposals"] / m["proposals"]
    return {"calls": calls, "aux": aux, "prompt_tok": calls * m["prompt_chars"] / 4,
            "reply_tok": calls * m["reply_chars"] / 4, "seconds": m["search_s"] * scale + m["test_s"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="runs/grid_cost")
    parser.add_argument("--envs", nargs="*", default=list(relic_envs.names()))
    parser.add_argument("--methods", nargs="*", default=list(known_methods()))
    parser.add_argument("--batches", type=int, default=1)
    parser.add_argument("--proposals", type=int, default=2)
    args = parser.parse_args()
    out = Path(args.out)
    measured_path = out / "measured.json"
    measured = json.loads(measured_path.read_text()) if measured_path.exists() else {}
    for env in args.envs:
        for method in args.methods:
            key = f"{method}/{env}/{args.batches}x{args.proposals}"
            if key not in measured:  # a rerun only measures what is missing
                measured[key] = measure(method, env, out / "cells", args.batches, args.proposals)
                out.mkdir(parents=True, exist_ok=True)
                measured_path.write_text(json.dumps(measured, indent=1))
    print(f"measured at {args.batches} batch(es) x {args.proposals} proposals per role (offline backend); "
          f"extrapolated to the paper's {PAPER['batches']} x {PAPER['proposals']}, one run:")
    print("| method | benchmark | calls (aux) | prompt chars/call | reply chars/call | prompt tok/cell (est.) "
          "| reply tok/cell (est., lower bound) | machine s/cell |")
    print("|---|---|---|---|---|---|---|---|")
    totals = np.zeros(4)
    for env in args.envs:
        for method in args.methods:
            m = measured[f"{method}/{env}/{args.batches}x{args.proposals}"]
            p = paper_cell(m)
            totals += [p["calls"], p["prompt_tok"], p["reply_tok"], p["seconds"]]
            print(f"| {method} | {env} | {p['calls']} ({p['aux']}) | {m['prompt_chars']:.0f} | {m['reply_chars']:.0f} "
                  f"| {p['prompt_tok']:.3g} | {p['reply_tok']:.3g} | {p['seconds']:.0f} |")
    runs = PAPER["runs"]
    pairs = len(args.envs) * len(args.methods)
    print(f"\nwhole grid ({len(args.methods)} methods x {len(args.envs)} benchmarks x {runs} runs = {pairs * runs} cells): "
          f"{totals[0] * runs:.0f} LLM calls (upper end of the auxiliary range), "
          f"{totals[1] * runs / 1e6:.1f} M prompt tokens and >= {totals[2] * runs / 1e6:.2f} M reply tokens (estimated), "
          f"{totals[3] * runs / 3600:.1f} machine-hours of one core")


if __name__ == "__main__":
    main()
