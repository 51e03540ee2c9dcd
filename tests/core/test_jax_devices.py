"""Every family's JAX evaluator gives the same results with its batch split over two
XLA CPU devices (``relic_envs.core.jax_devices.over_devices``) as on one device.

The device count is fixed when JAX starts its CPU backend, so the two-device run is a
subprocess (this file run as a script); this process has JAX's default single device.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")

# one evaluator of each kind: the DCOP sweep (DGC with its contiguous roles, and
# LSGA-DSA's solver), MAPP routing, MAS dispatch, the CO event loop (HMTSP, cyclic;
# FJAGV, batched) and the CO constructive loop (MRCPS)
CASES = ["dgc", "dgc-lsga", "mapp_pc", "mas_jd", "hmtsp", "fjagv", "mrcps"]
BATCH = 4


def outputs(case: str, check_split: bool = False) -> list[np.ndarray]:
    """The evaluator's results on the first ``BATCH`` test instances, as a list of arrays.

    ``check_split``: also assert that the results come back spread over all devices.
    """
    import relic_envs

    name = case.split("-")[0]
    family = relic_envs.get_benchmark(name).family
    splits = relic_envs.splits(name)
    if family == "dcop":
        from relic_envs.dcop import jax_eval

        instances = splits.test_instances()[:BATCH]
        if case.endswith("lsga"):
            from baselines.dcop.lsga_jax import lsga_evaluator, stack_lsga

            batch, run = stack_lsga(name, instances), lsga_evaluator(name)
        else:
            from baselines.dcop.dsa_jax import dsa_jax_team

            batch, run = jax_eval.stack(name, instances), jax_eval.evaluator(name, dsa_jax_team())
    else:
        instances = splits.test[sorted(splits.test)[0]][:BATCH]
        if family == "co":
            from relic_envs.co import jax_eval
            from relic_envs.co.jax_eval import seed_jax_team
        elif family == "mas":
            from relic_envs.mas import jax_eval
            from relic_envs.mas.jax_seeds import seed_jax_team
        else:
            from relic_envs.mapp import jax_eval
            from relic_envs.mapp.jax_seeds import seed_jax_team
        batch, run = jax_eval.stack(name, instances), jax_eval.evaluator(name, seed_jax_team(name))
    if check_split:
        with jax.enable_x64(True):
            leaves = jax.tree.leaves(run.jitted(batch.data))
        assert all(len(leaf.sharding.device_set) == jax.device_count() for leaf in leaves), case
    return [np.asarray(leaf) for leaf in jax.tree.leaves(run(batch))]


def test_two_cpu_devices_give_the_single_device_results(tmp_path):
    out = tmp_path / "two.npz"
    env = dict(os.environ, XLA_FLAGS=os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2")
    subprocess.run([sys.executable, __file__, str(out)], check=True, env=env, cwd=os.getcwd())
    two = np.load(out)
    assert jax.device_count() == 1
    for case in CASES:
        one = outputs(case)
        assert len(one) == int(two[f"{case}/n"]), case
        for k, leaf in enumerate(one):
            np.testing.assert_array_equal(two[f"{case}/{k}"], leaf, err_msg=case)


if __name__ == "__main__":  # the two-device run
    from relic_envs.core.jax_devices import batch_devices

    assert jax.device_count() == 2, jax.devices()
    assert [len(batch_devices(n)) for n in (1, 3, 4)] == [1, 1, 2]  # a batch that does not divide stays whole
    arrays = {}
    for case in CASES:
        leaves = outputs(case, check_split=True)
        arrays[f"{case}/n"] = np.array(len(leaves))
        arrays.update({f"{case}/{k}": leaf for k, leaf in enumerate(leaves)})
    np.savez(sys.argv[1], **arrays)
