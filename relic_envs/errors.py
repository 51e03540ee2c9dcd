"""Exceptions raised by relic-envs.

Every class also subclasses the built-in exception a caller would expect
(``ValueError``, ``TypeError``, ``ImportError``), so ``except ValueError`` keeps
working for code that does not know our hierarchy.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class RelicError(Exception):
    """Base class of every relic-envs error."""


class UnknownBenchmark(RelicError, ValueError):
    """A benchmark name that is not registered."""

    def __init__(self, name: str, known: Iterable[str]):
        known = sorted(known)
        lowered = {k.lower(): k for k in known}  # "DGC" and "MAPP-PC" are the paper's spellings
        spelled = str(name).lower().replace("-", "_")
        close = [lowered[spelled]] if spelled in lowered else difflib.get_close_matches(str(name), known, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        super().__init__(f"unknown benchmark {name!r}; known: {', '.join(known)}.{hint}")


class InvalidInstance(RelicError, ValueError):
    """An instance whose arrays have the wrong shape, dtype or range."""


class InvalidConfig(RelicError, ValueError):
    """A bad keyword argument to ``make``, a generator, a solver or the CLI."""


class ProgramError(RelicError, ValueError):
    """Program text that cannot become a policy (syntax, signature, forbidden use).

    Attributes
    ----------
    reason:
        One short category: ``"syntax"``, ``"signature"`` or ``"forbidden"``.
    """

    def __init__(self, reason: str, message: str):
        self.reason = reason
        super().__init__(f"{reason}: {message}")


class InvalidReturn(RelicError, ValueError):
    """A role's return value that breaks the benchmark's return contract.

    Attributes
    ----------
    reason:
        One short category: ``"exception"``, ``"type"``, ``"dtype"``, ``"shape"``,
        ``"domain"``, ``"non-finite"`` or ``"forbidden"``.
    """

    def __init__(self, reason: str, message: str):
        self.reason = reason
        self.message = message
        super().__init__(f"{reason}: {message}")


class InvalidAction(RelicError, ValueError):
    """An action passed to an environment's ``step`` that the benchmark cannot apply.

    Raised by the PettingZoo envs made with ``on_invalid="raise"`` (an opt-in for
    debugging; the default ``"penalize"`` refuses the action, charges a penalty and
    reports it in ``infos[agent]["invalid_actions"]`` instead), before any state
    changes, so the episode can go on with a corrected action. Malformed ``step``
    arguments (not a dict, a live agent's action missing, an agent that is not live)
    raise it in every mode.

    Attributes
    ----------
    agent:
        The role whose action was refused (``None`` when the whole ``actions``
        argument was malformed).
    reason:
        One short category (``"type"``, ``"shape"``, ``"domain"``, ``"range"``,
        ``"revisit"``, ``"budget"``, ...), the same words ``infos`` and rollouts use.
    value:
        The refused value.
    """

    def __init__(self, agent: str | None, reason: str, message: str, value: object = None):
        self.agent = agent
        self.reason = reason
        self.value = value
        who = f"agent {agent!r}: " if agent is not None else ""
        super().__init__(f"{who}invalid action ({reason}): {message}; got {_short(value)}")


def _short(value: object, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class MissingExtra(RelicError, ImportError):
    """An optional dependency that is not installed."""

    def __init__(self, module: str, extra: str):
        super().__init__(
            f"{module!r} is needed for this feature; install it with "
            f"pip install 'relic-envs[{extra}]'"
        )
