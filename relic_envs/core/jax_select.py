"""Index selections in the form XLA's CPU backend compiles well (needs ``relic-envs[jax]``).

``argmax`` of a mask is a paired value-and-index reduction, which XLA's CPU backend
evaluates element by element; the first index where a mask holds is also a plain min
over the indices, which it vectorises (MAPP-DS's best request, FJAGV's pending decision:
``benchmarks/RESULTS.md``). The indices are taken in the narrowest integer type that
holds them, so the reduction reads fewer bytes.

JAX is imported here, so this module stays out of ``relic_envs.core``'s imports.
"""

from __future__ import annotations

import numpy as np

from relic_envs.errors import MissingExtra

try:
    import jax.numpy as jnp
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtra("jax", "jax") from exc


def narrowest_int(top: int) -> type:
    """The narrowest signed numpy integer type (int8, int16, int32) that holds ``0..top``."""
    for kind in (np.int8, np.int16):
        if top < np.iinfo(kind).max:
            return kind
    return np.int32


def first_true(mask, axis: int = -1):
    """The first index along ``axis`` where ``mask`` holds (``mask.shape[axis]`` where it never
    does), as ``int32``: one min reduction over the indices."""
    n = mask.shape[axis]
    shape = [1] * mask.ndim
    shape[axis] = n
    ids = jnp.arange(n, dtype=narrowest_int(n)).reshape(shape)
    return jnp.min(jnp.where(mask, ids, jnp.asarray(n, ids.dtype)), axis=axis).astype(jnp.int32)


def first_argmax(values):
    """``jnp.argmax(values)`` (the first maximum; the first NaN if there is one) as a max and
    a first index, two plain reductions XLA's CPU backend vectorises."""
    return first_true((values == values.max()) | (values != values))


def first_argmin(values):
    """``jnp.argmin(values)`` (the first minimum; the first NaN if there is one), as
    :func:`first_argmax`."""
    return first_true((values == values.min()) | (values != values))
