"""Floating point that gives the same bits on every CPU.

Three things under numpy pick their code per CPU, and each can change the last bit of a
result: OpenBLAS picks its kernel, and so the order and the fusing of the multiply-adds
behind ``@``, ``dot`` and ``matmul``; numpy dispatches ``np.exp``, ``np.expm1``,
``np.log``, ``np.power`` and others to per-CPU SIMD code (float64 ``exp`` has its own
AVX-512 version); and the C library's ``exp`` and ``log`` come in FMA and non-FMA
variants that it chooses per CPU, so ``math.exp`` differs between CPUs too (glibc picks
the FMA one on CPUs that have FMA). :func:`exp` avoids all three: it uses only IEEE-754
basic operations, each a separate numpy call so nothing can fuse them, and integer
operations on the bits, so it returns the same bits on every CPU and platform.

:func:`exp` is the exponential of ARM's optimized-routines (``math/exp.c``, MIT
licence, Szabolcs Nagy 2018), the one inside glibc 2.28+ and musl, evaluated without
fused multiply-adds. The authors give its error as below 0.511 ulp. Its table of
``2**(k/128)`` is rebuilt here with :mod:`decimal`: ``H[k]`` is ``2**(k/128)`` rounded
to a double and ``T[k]`` is ``(2**(k/128) - H[k]) / H[k]`` rounded to a double, which
gives the published table bit for bit (checked by the tests). We chose it over a
correctly rounded exponential because it gives the values that were shipped: those
came from glibc's ``exp`` on the machine that wrote the splits, and glibc's FMA and
non-FMA versions agree on every argument the shipped splits use. A correctly rounded
``exp`` differs from it on about one argument in 1400, and that would have changed one
MAPP-PC test instance.

Where each benchmark uses it, and the rules for new code, are in CONTRIBUTING.md,
"Numerics that do not depend on the CPU".
"""

from __future__ import annotations

import decimal
import functools

import numpy as np

_TABLE_BITS = 7
_N = 1 << _TABLE_BITS
_INV_LN2_N = float.fromhex("0x1.71547652b82fep0") * _N
_NEG_LN2_HI_N = -float.fromhex("0x1.62e42fefa0000p-8")
_NEG_LN2_LO_N = -float.fromhex("0x1.cf79abc9e3b3ap-47")
_SHIFT = float.fromhex("0x1.8p52")
_C2 = float.fromhex("0x1.ffffffffffdbdp-2")
_C3 = float.fromhex("0x1.555555555543cp-3")
_C4 = float.fromhex("0x1.55555cf172b91p-5")
_C5 = float.fromhex("0x1.1111167a4d017p-7")
_TOP_TINY, _TOP_LARGE, _TOP_HUGE = 0x3C9, 0x408, 0x409  # top 12 bits of 2**-54, 512, 1024


@functools.cache
def _table() -> tuple[np.ndarray, np.ndarray]:
    """``(T, S)``: ``2**(k/128) = H[k] (1 + T[k])`` and ``S[k] = bits(H[k]) - (k << 45)``."""
    ctx = decimal.Context(prec=60)
    ln2 = ctx.ln(decimal.Decimal(2))
    tails, scales = [], []
    for k in range(_N):
        exact = ctx.exp(ctx.multiply(ctx.divide(decimal.Decimal(k), _N), ln2))
        head = float(exact)
        tails.append(float(ctx.divide(ctx.subtract(exact, decimal.Decimal(head)), decimal.Decimal(head))))
        scales.append(head)
    scale_bits = np.array(scales).view(np.uint64) - (np.arange(_N, dtype=np.uint64) << np.uint64(52 - _TABLE_BITS))
    return np.array(tails), scale_bits


def _core(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``exp(x) ~= scale + scale * tmp``: returns ``(tmp, sbits, ki)`` for ``|x| < 1024``."""
    tails, scale_bits = _table()
    kd = _INV_LN2_N * x + _SHIFT  # x = k ln2/128 + r with integer k, |r| <= ln2/256
    ki = kd.view(np.uint64)
    kd = kd - _SHIFT
    r = (x + kd * _NEG_LN2_HI_N) + kd * _NEG_LN2_LO_N
    j = ki & np.uint64(_N - 1)
    sbits = scale_bits[j] + (ki << np.uint64(52 - _TABLE_BITS))  # wraps like C's uint64_t
    r2 = r * r
    tmp = ((tails[j] + r) + r2 * (_C2 + r * _C3)) + (r2 * r2) * (_C4 + r * _C5)
    return tmp, sbits, ki


def _large(tmp: np.ndarray, sbits: np.ndarray, ki: np.ndarray) -> np.ndarray:
    """The reference's ``specialcase``: ``512 <= |x| < 1024`` (overflow, subnormal results)."""
    positive = (ki & np.uint64(0x80000000)) == 0
    up = (sbits - (np.uint64(1009) << np.uint64(52))).view(np.float64)
    y_up = float.fromhex("0x1p1009") * (up + up * tmp)
    down = (sbits + (np.uint64(1022) << np.uint64(52))).view(np.float64)
    y = down + down * tmp
    # Below 1.0 the result is subnormal: round it to its final precision before scaling.
    lo = (down - y) + down * tmp
    hi = 1.0 + y
    lo = ((1.0 - hi) + y) + lo
    rounded = (hi + lo) - 1.0
    rounded = np.where(rounded == 0.0, 0.0, rounded)
    y = np.where(y < 1.0, rounded, y)
    return np.where(positive, y_up, float.fromhex("0x1p-1022") * y)


def exp(x):
    """``e**x`` elementwise as float64, the same bits on every CPU (see the module doc).

    Takes a scalar or an array; returns a Python float for a scalar.

    >>> exp(0.0), exp(1.0), exp(-1.0)
    (1.0, 2.718281828459045, 0.36787944117144233)
    """
    arr = np.asarray(x, dtype=np.float64)
    flat = arr.reshape(-1)
    abstop = (flat.view(np.uint64) >> np.uint64(52)) & np.uint64(0x7FF)
    tiny = abstop < _TOP_TINY
    huge = abstop >= _TOP_HUGE
    large = (abstop >= _TOP_LARGE) & ~huge
    main = ~(tiny | huge | large)
    out = np.empty_like(flat)
    with np.errstate(all="ignore"):  # overflow to inf and underflow to 0 are the answers there
        out[tiny] = 1.0 + flat[tiny]
        if main.any():
            tmp, sbits, _ = _core(flat[main])
            scale = sbits.view(np.float64)
            out[main] = scale + scale * tmp
        if large.any():
            out[large] = _large(*_core(flat[large]))
        if huge.any():
            h = flat[huge]
            out[huge] = np.where(np.isnan(h), h, np.where(h > 0, np.inf, 0.0))
    return float(out[0]) if arr.ndim == 0 else out.reshape(arr.shape)
