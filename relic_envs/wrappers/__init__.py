"""Views of the suite's envs for RL libraries: flat observations, one learning role, vector envs.

- :func:`flatten_observations`: every role's ``Dict`` observation as one fixed-size
  float ``Box`` (Gymnasium's flattening; :meth:`FlatObservations.layout` names each
  slice, :meth:`FlatObservations.unflatten` inverts it), the action mask also in
  ``infos``. SuperSuit's observation wrappers run on it.
- :func:`single_agent_env`: a Gymnasium env in which one role learns and the others
  follow fixed policies (the seed programs by default); ``action_masks()`` for masked
  learners.
- :func:`vector_env`: copies of it as a Gymnasium ``SyncVectorEnv``/``AsyncVectorEnv``.

``docs/rl.md`` shows the layouts, the SuperSuit pipeline and a training example.
"""

from relic_envs.wrappers.flat import FlatField, FlatObservations, Flattener, flat_layout, flatten_observations
from relic_envs.wrappers.single import SingleAgentEnv, seed_teammates, single_agent_env, vector_env

__all__ = [
    "FlatField", "FlatObservations", "Flattener", "SingleAgentEnv", "flat_layout", "flatten_observations",
    "seed_teammates", "single_agent_env", "vector_env",
]
