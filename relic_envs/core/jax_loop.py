"""A vmapped ``while_loop`` that stops paying for the instances that are done.

``jax.vmap(lax.while_loop)`` runs the loop until the batch's LONGEST episode ends and
keeps computing every finished instance (its results are masked away). Where episode
lengths have a long tail, the batch pays for the tail: MAPP-DS test instances run 12
epochs on average and 50 at most, so a batch of 1024 computed about four times the
epochs it needed.

:func:`shrinking_while` runs the same loop in stages. Each stage stops once no more
than ``1 / factor`` of its batch is still running; the running instances (plus finished
ones to fill the static size) are then gathered into a batch ``factor`` times smaller,
and the final states are scattered back at the end. Each instance sees exactly the
iterations it would see alone (finished instances are frozen, as in JAX's batched
``while_loop``), so the results are bit-identical; only the work on finished instances
is saved. A body that itself leaves a finished instance's carry unchanged can say so
(``idle_when_done``): the loop then skips the select that freezes finished instances, a
pass over every leaf of the carry at every iteration (on MAPP-DS, its request grids:
2.65e5 -> 3.3e5 epochs per second). Each stage is a copy of the loop body in the
compiled program and a gather of the batch's data, so ``stages`` trades compile time
and copies for speed: quartering 1024 -> 256 -> 64 -> 16 measured faster on MAPP-DS
than halving seven times (``benchmarks/jax_throughput.py --env mapp_ds``; figures in
``benchmarks/RESULTS.md``).

JAX is imported here, so this module stays out of ``relic_envs.core``'s imports.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp


def _take(tree, index):
    return jax.tree.map(lambda x: x[index], tree)


def _freeze(keep, new, old):
    """``new`` where ``keep`` (one flag per instance), else ``old``, leaf by leaf."""
    return jax.tree.map(lambda n, o: jnp.where(keep.reshape(keep.shape + (1,) * (n.ndim - 1)), n, o), new, old)


def _run_until(running, body, data, carry, at_most: int, idle_when_done: bool):
    """The batched loop until at most ``at_most`` instances still run (``-1``: none)."""
    step = jax.vmap(body)
    alive = jax.vmap(running)

    def go(c):
        live = alive(data, c)
        return live.any() & (live.sum() > at_most)

    def advance(c):
        if idle_when_done:  # the body keeps finished carries as they are
            return step(data, c)
        return _freeze(alive(data, c), step(data, c), c)

    return jax.lax.while_loop(go, advance, carry)


def shrinking_while(running: Callable[[Any, Any], Any], body: Callable[[Any, Any], Any], data: Any, carry: Any,
                    *, stages: int = 3, factor: int = 4, floor: int = 8, idle_when_done: bool = False) -> Any:
    """``vmap(lambda d, c: lax.while_loop(partial(running, d), partial(body, d), c))(data, carry)``,
    dividing the batch by ``factor`` up to ``stages`` times (not below ``floor``) as
    instances finish.

    ``running(data, carry) -> bool`` and ``body(data, carry) -> carry`` act on ONE instance;
    ``data`` and ``carry`` are pytrees with a leading batch axis. Returns the final carry
    of every instance, in the batch's order. ``idle_when_done=True`` is the caller's
    promise that ``body`` returns the carry of an instance that is no longer ``running``
    unchanged, bit for bit; the loop then does not freeze finished instances itself
    (``stages=0`` with it: a vmapped ``while_loop`` without the freeze).
    """
    size = jax.tree.leaves(carry)[0].shape[0]
    alive = jax.vmap(running)
    unwind = []  # (indices gathered, full carry they came from), innermost last
    while stages > 0 and size // factor >= floor:
        smaller = size // factor
        carry = _run_until(running, body, data, carry, smaller, idle_when_done)
        # Running instances first (a stable sort keeps the batch order), then enough
        # finished ones to fill the smaller batch: each running one is among the first.
        order = jnp.argsort(~alive(data, carry), stable=True)[:smaller]
        unwind.append((order, carry))
        data, carry, size, stages = _take(data, order), _take(carry, order), smaller, stages - 1
    carry = _run_until(running, body, data, carry, -1, idle_when_done)
    for order, full in reversed(unwind):
        carry = jax.tree.map(lambda f, c, i=order: f.at[i].set(c), full, carry)
    return carry
