"""Role signatures: the paper's callable interface of one role, as data.

A :class:`Signature` is what a program must implement (function name, positional
parameters in order, their types), what each argument means (text that goes into
prompts and docs), how an environment observation becomes those arguments
(``to_kwargs``), and what a valid return is (``check_return``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any


@dataclasses.dataclass(frozen=True)
class Param:
    """One positional parameter of a role function."""

    name: str
    annotation: str  # as printed in the paper, e.g. "np.ndarray" or "int"
    doc: str  # what the argument holds: shape, dtype, meaning


@dataclasses.dataclass(frozen=True)
class Signature:
    """The exact callable interface of one role.

    Parameters
    ----------
    role:
        ``"A"``, ``"B"`` or ``"C"``.
    function:
        The function name the paper prints, e.g. ``"select_values_A"``.
    params:
        Positional parameters in the paper's order.
    returns:
        The return annotation as printed, e.g. ``"np.ndarray"``.
    returns_doc:
        What a valid return is and what an invalid one does.
    purpose:
        One sentence on what the role specialises in.
    to_kwargs:
        Maps an observation dict to keyword arguments of exactly the paper's types.
    check_return:
        ``check_return(value, obs) -> action``; raises
        :class:`~relic_envs.errors.InvalidReturn` for a value that breaks the contract.
    """

    role: str
    function: str
    params: tuple[Param, ...]
    returns: str
    returns_doc: str
    purpose: str
    to_kwargs: Callable[[Mapping[str, Any]], dict[str, Any]] = dataclasses.field(repr=False)
    check_return: Callable[[Any, Mapping[str, Any]], Any] = dataclasses.field(repr=False)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def header(self) -> str:
        """The ``def`` line as the paper prints it (no body)."""
        args = ", ".join(f"{p.name}: {p.annotation}" for p in self.params)
        return f"def {self.function}({args}) -> {self.returns}:"

    def describe(self) -> str:
        """Header plus one line per argument and the return contract (prompt/doc text)."""
        lines = [self.header(), f"    # Role {self.role}: {self.purpose}"]
        lines += [f"    # {p.name}: {p.doc}" for p in self.params]
        lines.append(f"    # returns: {self.returns_doc}")
        return "\n".join(lines)
