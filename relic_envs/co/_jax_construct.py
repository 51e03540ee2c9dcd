"""The routing benchmarks' form of the JAX decision contract (HMTSP, FSTSP; needs
``pip install 'relic-envs[jax]'``): one pending :class:`Decision` at a time.

Both routing benchmarks decide over one identifier space (the nodes), one role at a
time, and a role may skip where the decision says so. A :class:`JaxConstructProblem`
defines ``decision`` (who decides, the candidate mask, the fallback costs, whether
``-1`` is allowed) instead of the per-role ``pending`` of
:class:`~relic_envs.co._jax_decisions.JaxDecisionProblem`, its ``start`` (the initial
state) and ``commit`` (apply the choice; turn order and skips are the benchmark's). The
decision loop, repairs and evaluators are :mod:`relic_envs.co._jax_decisions`.
"""

from __future__ import annotations

import abc
from typing import Any, NamedTuple

from relic_envs.co._jax_decisions import ALL_ROLES, JaxDecisionProblem, Pending
from relic_envs.core.benchmark import ROLES


class Decision(NamedTuple):
    """The pending decision of one construction state (``_construct.Decision`` as arrays)."""

    role: Any  # int32 () deciding role 0..2
    mask: Any  # bool (n,) feasible identifiers
    cost: Any  # float (n,) fallback cost of each identifier (only the masked ones matter)
    can_skip: Any  # bool () whether -1 is a valid answer


class JaxConstructProblem(JaxDecisionProblem):
    """A constructive routing benchmark in JAX: the pending decision is one :class:`Decision`.

    ``commit(data, s, choice, role)`` applies the choice and updates ``done``; it gets the
    same static ``role`` as :meth:`decision`: computing the same rows there and here lets
    XLA compute them once.
    """

    @abc.abstractmethod
    def decision(self, data, s, role: int | None = None) -> Decision:
        """The pending decision (meaningful only while not ``done``); ``role`` (static) is
        the deciding role where the loop knows it, so only its candidates are needed."""

    def pending(self, data, s, role: int | None = None) -> Pending:
        """The :class:`Decision` as the deciding role's mask and costs (the others' masks all
        false). A static ``role``'s mask is left as it is, without the test that ``role``
        decides: the loop reads it only where it does, and without the test XLA compiled
        FSTSP's step to a quarter fewer operations (0.77 -> 0.57 MFLOP per loop body at
        batch 16, ``compiled.cost_analysis()``)."""
        d = self.decision(data, s, role)
        masks = tuple(d.mask if k == role else d.mask & (d.role == k) for k in ALL_ROLES)
        return Pending(d.role, masks, (d.cost,) * len(ROLES), d.can_skip)
