"""The event-driven scheduling benchmarks' form of the JAX decision contract (FJAGV,
MRCPS; needs ``pip install 'relic-envs[jax]'``): event time.

A :class:`JaxEventProblem` keeps the deciding role in its state (``s["role"]``,
:data:`~relic_envs.co._jax_decisions.NONE` once the construction is complete), gives
per role the candidate mask over the role's identifier space and the fallback costs
(``candidates``), and moves between decisions with ``apply`` (commit a choice) and
``advance`` (jump event time until a decision is pending or the construction is
complete). This module turns those into the shared contract of
:class:`~relic_envs.co._jax_decisions.JaxDecisionProblem` (``start`` is ``advance`` of
``init``, ``commit`` is ``apply`` then ``advance``); the decision loop, repairs and
evaluators are :mod:`relic_envs.co._jax_decisions`. Neither benchmark lets a role skip.
"""

from __future__ import annotations

import abc
from typing import Any

from relic_envs.co._jax_decisions import JaxDecisionProblem, Pending, jnp


class JaxEventProblem(JaxDecisionProblem):
    """What one event-driven benchmark defines in JAX; the decision loop is shared."""

    # ``advance`` after a decision only of the roles set here, where the caller knows the
    # role (``cyclic``): after MRCPS's A and B the next decision is always pending at the
    # same time, so advancing would not move.
    advances_after: tuple[bool, bool, bool] = (True, True, True)

    @abc.abstractmethod
    def init(self, data) -> dict:
        """The construction state before the first ``advance``; must hold ``done`` (bool) and ``role`` (int)."""

    @abc.abstractmethod
    def advance(self, data, s) -> dict:
        """Jump event time until a decision is pending (``role``) or the construction is complete (``done``)."""

    @abc.abstractmethod
    def candidates(self, data, s) -> tuple[tuple[Any, Any], ...]:
        """Per role ``(mask, cost)`` over its identifier space; only the deciding role's is used."""

    @abc.abstractmethod
    def apply(self, data, s, choice) -> dict:
        """Commit the (valid) ``choice`` of the deciding role. With ``s["role"] == NONE`` (-1) it
        must return ``s`` unchanged, bit for bit, and ``advance`` of an advanced state
        must change nothing: the free-order batched loop relies on both to let finished
        instances idle (``rollout_batch``; the batched-loop test checks it against
        ``rollout_one``)."""

    def start(self, data) -> dict:
        return self.advance(data, self.init(data))

    def pending(self, data, s, role: int | None = None) -> Pending:
        deciding = s["role"]
        picked = self.candidates(data, s)
        masks = tuple(mask & (deciding == k) for k, (mask, _) in enumerate(picked))
        return Pending(deciding, masks, tuple(cost for _, cost in picked), jnp.bool_(False))

    def commit(self, data, s, choice, role: int | None = None) -> dict:
        s = self.apply(data, s, choice)
        return self.advance(data, s) if role is None or self.advances_after[role] else s

