"""Functional JAX envs of the three scheduling benchmarks (the contract: :mod:`relic_envs.core.functional`).

Built on the batch evaluator's per-instance dispatch rules (``_jax_dispatch``: ``init``,
``enter``, ``observe``, ``apply``, ``objective``). One ``step`` is one decision epoch,
as in the PettingZoo env. What this module adds is the env's bookkeeping: the team score
so far, the shared reward, ``done``, and the ``on_invalid="penalize"`` rule, which for
this family reads:

- an acting (free) resource whose answer is outside ``-1..N-1`` or a job outside its
  pool is refused: it idles this epoch (``WAIT``) and the team pays ``hi - lo + 1``
  (``Benchmark.score_bounds``);
- MAS-JD/FS team stall: at a last-chance epoch where no acting resource dispatches,
  every acting resource that answered ``-1`` beside a non-empty pool is refused (the
  numpy env blames them one at a time, first A, then B, then C, until none is left);
  nothing is dispatched, no event is left, and the episode ends with the unfinished jobs
  charged at the horizon, exactly as the numpy env does.

Busy resources' answers are ignored, as in the numpy env. Actions are ``{role: () int}``,
a job id or ``-1`` (the observation's ``action_mask`` is ``(N + 1,)``, index 0 = idle);
a non-scalar or non-integer answer is a trace-time
:class:`~relic_envs.errors.InvalidReturn`.

Observations have the PettingZoo env's keys, nesting, shapes and dtypes (pools and
buffers are ``{"mask": (N,), "value": (N, width)}`` as in the numpy env; rows outside
the mask hold the jobs' features, not zeros). After the last dispatch the numpy env
keeps the last epoch's time and pools in its final observation; so does this one.
Both interfaces, like the batch evaluator (``make(name, "alt")`` for the alternative one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from relic_envs.core.benchmark import ROLES
from relic_envs.core.functional import FunctionalEnv, cast_leaves
from relic_envs.core.instance import Instance
from relic_envs.mas import _jax_dispatch as jd
from relic_envs.mas.jax_eval import problem

REFUSED = -2  # an answer the penalize rule turned into WAIT: idles, and is neither a dispatch nor an idler


class DispatchState(NamedTuple):
    dispatch: jd.DState  # the evaluator's state, entered at the current decision epoch
    score: Any  # () the team score so far (0 before the first step)


class DispatchFunctionalEnv(FunctionalEnv):
    """MAS-JD, MAS-ST or MAS-FS as pure ``reset``/``step`` functions."""

    def __init__(self, name: str, interface: str = "paper"):
        self._bind(name, interface)
        self._problem = problem(name)
        self._problem.role_table(interface)  # an interface the JAX side lacks fails now, not at trace time
        self._sign = -1.0 if self.benchmark.minimize else 1.0  # raw objective -> score

    def params(self, instances: Sequence[Instance]) -> dict[str, np.ndarray]:
        penalty = self._penalties(instances)
        return {**jd.stack(self._problem, instances).data, "penalty": penalty}

    def _observe(self, params, state: jd.DState) -> dict[str, dict[str, Any]]:
        return {r: cast_leaves(jd.observe(self._problem, params, state, r, self.interface), self._dtypes[r])
                for r in ROLES}

    def _score(self, params, state: jd.DState):
        return self._sign * jd.objective(self._problem, params, state)

    def reset(self, key, params):
        params = jax.tree.map(jnp.asarray, params)  # numpy params work outside jit too
        state = jd.enter(self._problem, params, jd.init(self._problem, params))
        return self._observe(params, state), DispatchState(state, self._score(params, state))

    def _refuse(self, state: jd.DState, answers: list) -> tuple[list, Any]:
        """The answers after the penalize rule (refused ones become ``REFUSED``) and how many were refused."""
        n = state.pools.shape[1]
        ruled, refused = [], jnp.int32(0)
        for k, j in enumerate(answers):
            bad = (j < jd.IDLE) | (j >= n) | ((j >= 0) & ~state.pools[k, jnp.clip(j, 0, n - 1)])
            bad = state.free[k] & bad
            ruled.append(jnp.where(bad, REFUSED, j))
            refused += bad.astype(jnp.int32)
        if self._problem.must_finish:
            dispatching = jnp.any(jnp.stack([state.free[k] & (j >= 0) for k, j in enumerate(ruled)]))
            stall = state.last_chance & ~dispatching
            for k in range(len(ruled)):
                idler = stall & state.free[k] & (ruled[k] == jd.IDLE) & state.pools[k].any()
                ruled[k] = jnp.where(idler, REFUSED, ruled[k])
                refused += idler.astype(jnp.int32)
        return ruled, refused

    def step(self, key, state: DispatchState, actions, params):
        actions = self._joint(actions)
        params = jax.tree.map(jnp.asarray, params)
        before = state.dispatch
        answers = [jd.as_job(r, actions[r]) for r in ROLES]
        ruled, n_refused = self._refuse(before, answers)
        played = jd.apply(self._problem, params, before, ruled)  # REFUSED < 0: no dispatch
        entered = jd.enter(self._problem, params, played)
        # After the last dispatch the numpy episode ends without entering another epoch:
        # its final observation keeps the last epoch's time, pools and free resources.
        finished = jnp.all(played.machine[:, -1] >= 0)
        entered = entered._replace(**{f: jnp.where(finished, getattr(before, f), getattr(entered, f))
                                      for f in ("t", "pools", "free")})
        score = self._score(params, entered)
        reward = score - state.score - params["penalty"] * n_refused
        new, reward, info = self._close_step(~jd.done(before), DispatchState(entered, score), state, reward, n_refused)
        return self._observe(params, new.dispatch), new, reward, jd.done(new.dispatch), info


def make_functional(name: str, interface: str = "paper") -> DispatchFunctionalEnv:
    return DispatchFunctionalEnv(name, interface)
