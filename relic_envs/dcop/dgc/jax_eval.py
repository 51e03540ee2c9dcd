"""DGC in JAX: the functional twin of ``simulator.py`` + ``roles.py``.

Use through :func:`relic_envs.dcop.jax_eval.evaluate` or
``relic_envs.dcop.jax_eval.evaluator("dgc", policies)``.
"""

from __future__ import annotations

import numpy as np

from relic_envs.dcop import _jax_sweep as js
from relic_envs.dcop._jax_sweep import jnp
from relic_envs.dcop.dgc import simulator

D = simulator.N_COLORS


class DGCJax(js.JaxProblem):
    domain = D
    contiguous = True

    def arrays(self, instance):
        # Integer weights (what the generator draws) stay integers: their landscape sums
        # are then exact in int32 whatever the order, which the batched scatter uses.
        weights = np.asarray(instance.weights)
        exact_int = weights.dtype.kind in "iu" and 2 * np.abs(weights).sum() < 2**31
        return {
            "src": np.asarray(instance.edges[:, 0], np.int32),
            "dst": np.asarray(instance.edges[:, 1], np.int32),
            "w": weights.astype(np.int32 if exact_int else np.float64),
        }

    def relabel(self, data, inverse):
        return {"src": inverse[data["src"]], "dst": inverse[data["dst"]]}

    def cost(self, data, x):
        return jnp.sum(data["w"] * (x[data["src"]] == x[data["dst"]])).astype(jnp.result_type(float))

    def landscape(self, data, x):
        return self.batch_landscape({k: v[None] for k, v in data.items()}, x[None])[0]

    def batch_landscape(self, data, x):
        """One scatter over the flattened batch: faster on CPU than the vmapped one (dcop_profile.py).

        Integer weights are summed in int32 (exact in any order, and faster than float64).
        """
        b, n = x.shape
        offset = (jnp.arange(b, dtype=jnp.int32) * n)[:, None]
        src = jnp.concatenate([data["src"], data["dst"]], axis=1) + offset
        dst = jnp.concatenate([data["dst"], data["src"]], axis=1) + offset
        w = jnp.concatenate([data["w"], data["w"]], axis=1)
        if not jnp.issubdtype(w.dtype, jnp.integer):
            w = w.astype(jnp.result_type(float))
        bins = jnp.zeros(b * n * D, w.dtype).at[(src * D + x.reshape(-1)[dst]).reshape(-1)].add(w.reshape(-1))
        return bins.reshape(b, n, D).astype(jnp.result_type(float))

    def features(self, data, state, landscape, role, idx, shared=None):
        rows = landscape[idx]
        return js.graph_features(data, state, rows, rows, role, idx, D)


PROBLEM = DGCJax()
peers = simulator.peers
