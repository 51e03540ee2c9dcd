"""RELIC's prompts, worded as in Appendix C.3-C.4.

Every code-generation prompt is the shared system instruction, the role's target
block and an operator payload (Lift, Bridge or Reflect); the auxiliary prompts are
Reveal, Distill and Cross-distill. Functions return chat ``messages`` lists. Only
the role's own code, its signature, principle text and the evaluator's summary
ever enter a prompt (the information boundary of Appendix C.5).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from relic_envs.core.signature import Signature

Messages = list[dict[str, str]]

SYSTEM = (
    "You are an expert algorithm designer. Write a Python function that serves as a decision-making skill "
    "in a multi-agent planning problem. The function must be correct, concise, self-contained, total, and "
    "deterministic for every contract-valid input. Never raise an exception, return None, or choose outside "
    "a supplied feasible collection. Use an idle sentinel only when the contract permits it and required work "
    "can still complete. Only use NumPy, imported as np. Do not call np.random; use only randomness explicitly "
    "supplied in the arguments. No other imports."
)

SEED_NOTE = (
    "The seed is a tested starting point, not a design constraint. Preserve correctness and useful invariants, "
    "but search beyond constant tuning by exploiting the full target signature."
)

RETURN_ONLY = "Return only the complete function, starting with the exact target signature."


def seed_description(seed_source: str, function: str) -> str:
    """The human seed's strategy in words: its docstring (first paragraph kept whole)."""
    try:
        tree = ast.parse(seed_source)
    except SyntaxError:
        return "(no description)"
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            doc = ast.get_docstring(node)
            return doc.strip() if doc else "(the seed has no docstring)"
    return "(no description)"


def target_block(signature: Signature, seed_source: str, hint: str | None = None) -> str:
    """The shared target block: agent, signature, contract, seed description, hint."""
    return "\n".join([
        "[Target Function]",
        f"Company: Role {signature.role}",
        f"Signature: {signature.header()}",
        "Description:",
        signature.describe(),
        "[Human Seed Baseline]",
        seed_description(seed_source, signature.function),
        SEED_NOTE,
        f"Hint: {hint or signature.purpose}",
    ])


def _proposal(target: str, payload: str) -> Messages:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"{target}\n\n{payload}"}]


def _code(source: str) -> str:
    return f"```python\n{source.rstrip()}\n```"


def lift(target: str, parent_source: str, principle: str) -> Messages:
    """Lift: instantiate a locally revealed principle (no source program, no score)."""
    return _proposal(target, "\n".join([
        "[Principle to Implement]", principle, "", "[Current Skill (parent)]", _code(parent_source), "",
        "Write a new version of the skill that implements the principle within the target signature. You may "
        "retain useful parts of the parent, but the core logic must express the principle. " + RETURN_ONLY,
    ]))


def bridge(target: str, parent_source: str, principle: str, contributor: str) -> Messages:
    """Bridge: revise through a public principle (its contributor named)."""
    return _proposal(target, "\n".join([
        "[Current Skill (parent)]", _code(parent_source), "",
        f"[Public Principle] (proposed by {contributor})", principle, "",
        "Write a new version that (1) keeps useful structural elements of the parent and (2) incorporates the "
        "public principle through variables available under the target signature. " + RETURN_ONLY,
    ]))


def reflect(target: str, parent_source: str, credit_summary: str) -> Messages:
    """Reflect: reshape behaviour using the evaluator's credit map."""
    return _proposal(target, "\n".join([
        "[Current Skill (parent)]", _code(parent_source), "", "[Reflection]",
        "We measured your actual contribution by comparing the team containing your learned skill with the "
        "adapter's fixed reference behavior for this role. The per-instance gap identifies where you pull "
        "weight and where teammates already cover effectively.",
        credit_summary, "",
        "Write a new version that (1) preserves behavior on dominant cases, where the role is difficult to "
        "replace, and (2) reshapes behavior on redundant cases by changing coverage, horizon, or priorities. "
        + RETURN_ONLY,
    ]))


def refine(target: str, parent_source: str) -> Messages:
    """Our fallback when an ablation leaves no operator available: revise with no guidance."""
    return _proposal(target, "\n".join([
        "[Current Skill (parent)]", _code(parent_source), "",
        "Write a new version of the skill that improves the team's objective. " + RETURN_ONLY,
    ]))


def reveal(signature: Signature, incumbent_source: str) -> Messages:
    """Reveal: abstract an incumbent for local delivery to teammates."""
    return [{"role": "user", "content": "\n".join([
        f"[Source Signature] {signature.header()}", "[Source Code]", _code(incumbent_source), "",
        "Extract the core algorithmic principle behind this function. Output only a concise two-to-five-sentence "
        "description of the strategy, independent of variable names and parameter types. Do not include code.",
    ])}]


FORMAT = "TYPE: STRATEGY or PATTERN or COORDINATION\nPRINCIPLE: <two-to-four sentences>"


def distill(role: str, source: str, gain: float, public_summary: str) -> Messages:
    """Distill: a transferable public principle from the strongest positive new node."""
    return [{"role": "user", "content": "\n".join([
        f"You are agent {role}. The following skill improved team performance by {gain:.6g}.",
        "[Skill Code]", _code(source), "[Existing Public Principles]", public_summary, "",
        "Extract one principle that is generic, contains no code, variable names, or signature details, is "
        "useful to agents with different signatures, and is not a duplicate of existing principles. Output:",
        FORMAT,
    ])}]


def cross_distill(role: str, incumbent_source: str, delivered: Sequence[str]) -> Messages:
    """Cross-distill: coordination principles from the own incumbent and teammates' principles only."""
    lines = [
        f"You are agent {role}. Each teammate's best skill has been abstracted into a principle.",
        "[My Best Skill (code)]", _code(incumbent_source),
    ]
    for text in delivered:
        lines += ["[Other agent -- abstracted principle]", text]
    lines += [
        "",
        "You cannot see teammate code. Identify abstract patterns or strategies that appear across multiple "
        "agents and are therefore plausible robust coordination principles. Output one or two entries, each "
        "formatted as:",
        FORMAT,
    ]
    return [{"role": "user", "content": "\n".join(lines)}]
