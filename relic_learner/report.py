"""What ``relic show`` prints first: the best team, where its gain came from, which principles were used by whom.

Built from a run directory alone (checkpoint, events, curve), so it works on a finished
run and on one that is still going or was cut off.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from relic_learner.boundary import tally


def lineage(tree: Any, node_id: int) -> list[Any]:
    """The nodes from the seed (root) to ``node_id``, in order."""
    path = []
    node = tree.nodes[node_id]
    while node is not None:
        path.append(node)
        node = tree.nodes[node.parent] if node.parent is not None else None
    return path[::-1]


def _origin(step: Any, proposal: dict[str, Any] | None, public: Any) -> str:
    """How one step of a lineage was made: operator, batch, and the peer knowledge it drew on."""
    where = f"b{step.batch}"
    if proposal is not None:
        where += f" h{proposal['h']}"
    if step.operator == "bridge" and step.public_id is not None:
        p = public.nodes[step.public_id]
        return f"{where} bridge on principle #{p.id} from {p.contributor}"
    if step.operator == "lift" and proposal is not None and proposal.get("contributor"):
        return f"{where} lift of {proposal['contributor']}'s revealed principle (batch {proposal.get('batch')})"
    return f"{where} {step.operator}"


def best_team(state: Any, proposals: list[dict[str, Any]]) -> list[str]:
    """Per role, the incumbent's lineage with the gain each step measured when it was made."""
    made = {(p["role"], p["child"]): p for p in proposals if p.get("status") == "ok"}
    lines = [f"best team: mixed-batch score {state.incumbent_score:.6g} on batch {state.b} "
             "(scores are higher-is-better)"]
    by_kind: dict[str, float] = defaultdict(float)
    for role, node_id in state.incumbent.items():
        tree = state.trees[role]
        path = lineage(tree, node_id)
        if len(path) == 1:
            lines.append(f"  {role}: the seed program (no accepted change)")
            continue
        steps = []
        for step in path[1:]:
            proposal = made.get((role, step.id))
            steps.append(f"{_origin(step, proposal, state.public)} ({step.gain:+.4g})")
            by_kind[_kind(step, proposal)] += step.gain
        kept = made.get((role, node_id), {}).get("repairs")
        repaired = "" if not kept else f"; {kept[role]:.1%} of its answers repaired when kept"
        lines.append(f"  {role}: node {node_id}, depth {len(path) - 1}: seed -> " + " -> ".join(steps) + repaired)
    if by_kind:
        total = sum(by_kind.values())
        parts = ", ".join(f"{k} {v:+.4g}" for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1]))
        lines.append(f"  where the lineages' gains came from (sum {total:+.4g}, each measured when made): {parts}")
    return lines


def _kind(step: Any, proposal: dict[str, Any] | None) -> str:
    if step.operator == "bridge":
        return "peer principles (bridge)"
    if step.operator == "lift":
        return "peer principles (lift)"
    if step.operator == "reflect":
        return "own credit map (reflect)"
    return f"own edits ({step.operator})"


def principles_used(state: Any, proposals: list[dict[str, Any]]) -> list[str]:
    """Every public principle a Bridge drew on, and every peer a Lift drew on: by whom, how often, with what effect."""
    lines = []
    uses: dict[int, list[dict[str, Any]]] = defaultdict(list)
    lifts: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for p in proposals:
        if p["operator"] == "bridge" and p.get("public_id") is not None:
            uses[p["public_id"]].append(p)
        elif p["operator"] == "lift" and p.get("contributor"):
            lifts[(p["role"], p["contributor"])].append(p)
    public = state.public
    if uses:
        lines.append("principles used through Bridge (retrievals by role: proposals, valid, improved the incumbent):")
        for pid in sorted(uses, key=lambda i: (-len(uses[i]), i)):
            node = public.nodes[pid]
            per_role = defaultdict(list)
            for p in uses[pid]:
                per_role[p["role"]].append(p)
            who = "; ".join(f"{r}: {len(ps)}, {sum(p['status'] == 'ok' for p in ps)}, "
                            f"{sum(bool(p.get('incumbent')) for p in ps)}" for r, ps in sorted(per_role.items()))
            state_text = "pruned" if node.pruned else f"E={node.E:.3g}"
            lines.append(f"  #{pid} [{node.type}] by {node.contributor} (batch {node.batch}, {state_text}) -> {who}: "
                         f"{' '.join(node.text.split())[:90]}")
    if lifts:
        lines.append("revealed principles used through Lift (recipient <- contributor: proposals, valid, improved):")
        for (role, contributor), ps in sorted(lifts.items()):
            lines.append(f"  {role} <- {contributor}: {len(ps)}, {sum(p['status'] == 'ok' for p in ps)}, "
                         f"{sum(bool(p.get('incumbent')) for p in ps)}")
    if not lines:
        lines.append("no peer principle was used (no Bridge or Lift proposal yet)")
    return lines


def curve_lines(curve: list[dict[str, Any]]) -> list[str]:
    """The learning curve against the seed team on the same instances, one line per batch."""
    lines = ["batch | team at start | team at end | seed team | end - seeds"]
    for point in curve:
        seeds, end = point.get("seeds"), point.get("end")
        margin = f"{end - seeds:+.4g}" if seeds is not None and end is not None else "-"
        lines.append(f"{point['b']} | {point['start']:.6g} | {end if end is None else format(end, '.6g')} | "
                     f"{seeds if seeds is None else format(seeds, '.6g')} | {margin}")
    return lines


def boundary_lines(events: list[dict[str, Any]], ledger: dict[str, Any]) -> list[str]:
    """The information boundary over the whole run: how much code the knowledge replies carried and lost."""
    total = tally(events)
    replies = (ledger.get("calls") or {}).get("auxiliary", 0)
    if not total["replies"]:
        return [f"information boundary: no code in any of {replies} auxiliary replies (Reveal, Distill, Cross-distill)"]
    forms = ", ".join(f"{k.replace('_', '-')} {v}" for k, v in total["forms"].items()) or "-"
    return [f"information boundary: code cut from {total['replies']} of {replies} auxiliary replies "
            f"({total['rejected']} left empty): {total['segments']} segments, {total['lines']} lines, "
            f"{total['chars']} characters removed (by form: {forms})"]


def llm_call_lines(ledger: dict[str, Any]) -> tuple[list[str], bool]:
    """A run's LLM calls in words, from its ledger snapshot, and whether every call failed.

    A run whose calls all failed kept the seed team and learned nothing; a run where most
    failed learned from few proposals. Both are said in a sentence, not left to a count.
    """
    calls = sum(ledger.get("calls", {}).values())
    failed = sum(ledger.get("failed_calls", {}).values())
    by_purpose = ", ".join(f"{n} {purpose}" for purpose, n in ledger.get("calls", {}).items() if n)
    lines = [f"LLM calls: {calls} ({by_purpose or 'none'}); {calls - failed} answered, {failed} failed"
             + (f" ({', '.join(f'{n} {why}' for why, n in ledger.get('failures', {}).items())})" if failed else "")]
    every = calls > 0 and failed == calls
    if every:
        lines.append(f"every one of the {calls} LLM calls failed: nothing was learned, the team is the seed team "
                     "(check --llm, --base-url and the key; `relic show` and events.jsonl say why each failed)")
    elif failed * 2 > calls:
        lines.append(f"most LLM calls failed ({failed} of {calls}): the search saw only {calls - failed} answers")
    return lines, every
