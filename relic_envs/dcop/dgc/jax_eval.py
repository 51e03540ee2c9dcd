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

    def arrays(self, instance):
        return {
            "src": np.asarray(instance.edges[:, 0], np.int32),
            "dst": np.asarray(instance.edges[:, 1], np.int32),
            "w": np.asarray(instance.weights, np.float64),
        }

    def cost(self, data, x):
        return jnp.sum(data["w"] * (x[data["src"]] == x[data["dst"]]))

    def landscape(self, data, x):
        n = x.shape[0]
        src = jnp.concatenate([data["src"], data["dst"]])
        dst = jnp.concatenate([data["dst"], data["src"]])
        w = jnp.concatenate([data["w"], data["w"]]).astype(jnp.result_type(float))
        return jnp.zeros(n * D, w.dtype).at[src * D + x[dst]].add(w).reshape(n, D)

    def features(self, data, state, landscape, role, idx):
        return js.graph_features(data, state, landscape, landscape, role, idx, D)


PROBLEM = DGCJax()
peers = simulator.peers
