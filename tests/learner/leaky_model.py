"""A scripted model that leaks code, for the information-boundary tests (Appendix C.5).

Both ``test_boundary.py`` and ``test_boundary_encodings.py`` drive a whole run with it
through :class:`~fake_openai_server.FakeOpenAIServer`; they differ only in how a
knowledge reply writes the role's program (plain forms, or encoded ones) and in what a
proposal's scale is a function of, so those two are parameters and the rest lives here.
Loaded by ``conftest.py`` and handed to the tests as the ``leaky_model`` fixture.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

from relic_envs.seeds import seed_source

FENCE = re.compile(r"```python\n(.*?)```", re.S)
ROLE = re.compile(r"Company: Role ([ABC])|You are agent ([ABC])\.|\[Source Signature\] def \w+_([ABC])\(")


def role(body: dict) -> str:
    """The role a request is for, read from the prompt's own wording."""
    text = "\n".join(m["content"] for m in body["messages"])
    return next(g for g in ROLE.search(text).groups() if g)


class LeakyModel:
    """Proposals: the parent with its constants scaled (a new, role-unique program, sometimes better, so Distill
    runs); every knowledge reply: ``leak(code, reveal)``, the role's own program written around a principle
    (``reveal``: the prompt is Reveal's, else Distill's or Cross-distill's)."""

    FACTORS = (0.6, 0.9, 1.3, 2.0)

    def __init__(self, leak: Callable[[str, bool], str], scale_key: Callable[[str, str], str] = lambda user, code: user):
        """``scale_key(user, code)`` is what the scale factor is hashed from: by default the whole user prompt."""
        self.leak, self.scale_key = leak, scale_key
        self.programs = {r: [seed_source("hmtsp", r)] for r in "ABC"}
        self.replies: list[str] = []

    def __call__(self, body: dict) -> str:
        user = body["messages"][-1]["content"]
        code = FENCE.findall(user)[-1]
        if body["messages"][0]["role"] == "system":
            digest = hashlib.sha256(self.scale_key(user, code).encode()).hexdigest()
            f = self.FACTORS[int(digest, 16) % len(self.FACTORS)]
            child = re.sub(r"\b\d+\.\d+\b", lambda m: f"{float(m.group()) * f:.3g}", code)
            child = child.replace("> budget_left:", f"> {f:.3g} * budget_left:")
            self.programs[role(body)].append(child)
            return f"```python\n{child}```"
        reply = self.leak(code, "Extract the core algorithmic principle" in user)
        self.replies.append(reply)
        return reply
