"""The DCOP exploration tensor ``u``: deterministic uniforms derived from the instance.

The paper passes every DCOP role "an evaluator-supplied deterministic random tensor"
``u`` so that programs can randomise (tie-breaking, partial commitment) without an
independent random-number generator. Storing ``u`` would cost 50 sweeps x 120
variables x (domain + 1) floats per instance, so it is derived instead from the
instance's ``seed`` by a counter-based hash: entry ``(t, i, k)`` is a pure function of
``(seed, t, i, k)``. The hash uses only 32-bit integer multiply, xor and shift, so a
JAX twin reproduces it bit for bit.

At sweep ``t`` a role owning variables ``idx`` receives ``u_t[idx]`` of shape
``(m, domain + 1)``: columns ``0..domain-1`` are one uniform per value (tie-breaking)
and column ``domain`` is one more per variable (commitment), which is how the paper's
case-study programs index it (``u[:, :domain]`` and ``u[:, domain]``).
"""

from __future__ import annotations

import numpy as np

_M1 = np.uint32(0x7FEB352D)
_M2 = np.uint32(0x846CA68B)
_GOLDEN = np.uint32(0x9E3779B9)
_STREAM = np.uint32(0x632BE5AB)


def mix32(x: np.ndarray) -> np.ndarray:
    """A 32-bit integer hash with good avalanche (Wellons' "lowbias32")."""
    x = x.astype(np.uint32, copy=True)
    x ^= x >> np.uint32(16)
    x *= _M1
    x ^= x >> np.uint32(15)
    x *= _M2
    x ^= x >> np.uint32(16)
    return x


def exploration(seed: int, t: int, n_vars: int, width: int, stream: int = 0) -> np.ndarray:
    """The uniforms of sweep ``t``: a float64 array of shape ``(n_vars, width)`` in [0, 1).

    Each value is a multiple of 2**-24, exactly representable in float32 and float64.
    ``stream`` selects an independent sequence for solvers that need more draws than the
    role's ``u`` (LSGA-DSA's population); stream 0 is the ``u`` the roles observe.
    """
    with np.errstate(over="ignore"):
        key = mix32(np.array([seed], dtype=np.uint32) ^ mix32(np.array([t], dtype=np.uint32) * _GOLDEN))
        key ^= mix32(np.array([stream], dtype=np.uint32) * _STREAM)  # mix32(0) == 0: stream 0 is unchanged
        counter = np.arange(n_vars * width, dtype=np.uint32).reshape(n_vars, width)
        bits = mix32(counter ^ key) ^ key
        bits = mix32(bits)
    return (bits >> np.uint32(8)).astype(np.float64) * (1.0 / (1 << 24))
