"""Sums and quotients in JAX with the exact bits numpy gives.

The functional envs promise observations bit-identical to the numpy env's. Two numpy
habits need care: ``np.sum`` adds a float array in a pairwise order (not left to right),
and XLA rewrites a division by a broadcast or constant divisor as a multiplication by
its reciprocal, which is not always the correctly rounded quotient numpy computes.
:func:`numpy_sum` and :func:`masked_numpy_sum` add in numpy's order (a static length;
a boolean-indexed subset of changing size), :func:`per_element_quotient` divides one
traced scalar at a time. Used by the alternative interfaces (``mapp._jax_alt``,
``mas._jax_alt``).
"""

from __future__ import annotations

import jax.numpy as jnp

_BLOCK = 128  # numpy's PW_BLOCKSIZE
_UNROLL = 8


def _combine(r):
    """numpy's combination of its 8 interleaved partial sums ``r``."""
    return ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))


def numpy_sum(a):
    """``np.sum`` of a 1-D float array in numpy's order, so with its exact bits.

    numpy adds a contiguous float array pairwise: fewer than 8 elements one by one from
    0.0; up to 128 in 8 interleaved partial sums combined as ``((r0 + r1) + (r2 + r3)) +
    ((r4 + r5) + (r6 + r7))``, then the remainder one by one; longer arrays as the sum of
    two halves split at a multiple of 8. The length is static, so this unrolls at trace
    time (checked bit for bit against ``np.sum`` in the tests, lengths 1 to 400 across
    the three cases).
    """
    n = a.shape[0]
    if n < _UNROLL:
        total = jnp.zeros((), a.dtype)
        for i in range(n):
            total = total + a[i]
        return total
    if n <= _BLOCK:
        r = a[:_UNROLL]
        stop = n - n % _UNROLL
        for i in range(_UNROLL, stop, _UNROLL):
            r = r + a[i : i + _UNROLL]
        total = _combine(r)
        for i in range(stop, n):
            total = total + a[i]
        return total
    half = n // 2
    half -= half % _UNROLL
    return numpy_sum(a[:half]) + numpy_sum(a[half:])


def per_element_quotient(values, divisor):
    """``values / divisor`` for a short vector and a scalar, one scalar division each.

    XLA rewrites a division by a broadcast scalar (or by a constant) as a multiplication
    by its reciprocal, which is not always the correctly rounded quotient numpy computes;
    scalar-by-scalar divisions of traced values are left as divisions.
    """
    return jnp.stack([values[i] / divisor for i in range(values.shape[0])])


def masked_numpy_sum(x, mask):
    """``np.sum(x[mask])`` for a 1-D float array, in numpy's order, so with its exact bits.

    numpy's pairwise order depends on the count ``m`` of selected elements (see
    :func:`numpy_sum`): under 8 one by one from 0.0, else 8
    interleaved partial sums over the first ``m - m % 8`` elements, combined as ``((r0 +
    r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, then the rest one by one. The selected
    elements are moved to the front in order and every position past them contributes an
    exact ``+ 0.0``, so one fixed-shape program follows numpy's order for every ``m``.
    Arrays longer than numpy's block of 128 split recursively at a point that depends on
    ``m``; they are not supported.
    """
    n = x.shape[0]
    if n > _BLOCK:
        raise NotImplementedError(f"masked_numpy_sum: {n} elements; numpy's order is followed up to {_BLOCK}")
    m = mask.sum()
    packed = x[jnp.argsort(~mask, stable=True)]
    index = jnp.arange(n)
    stop = m - m % _UNROLL
    blocks = jnp.where(index < stop, packed, 0.0)
    pad = (-n) % _UNROLL
    blocks = jnp.concatenate([blocks, jnp.zeros(pad, x.dtype)]).reshape(-1, _UNROLL)
    r = blocks[0]
    for row in range(1, blocks.shape[0]):
        r = r + blocks[row]
    total = _combine(r)
    tail = jnp.concatenate([packed, jnp.zeros(_UNROLL, x.dtype)])
    for i in range(_UNROLL - 1):  # the m % 8 elements after the blocks, one by one
        total = total + jnp.where(i < m % _UNROLL, tail[stop + i], 0.0)
    return total
