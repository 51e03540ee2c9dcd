"""The JAX side's shared pieces (relic_envs.core.jax_kit): the errors every family's evaluators now share."""

import numpy as np
import pytest

pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

from relic_envs.core.jax_kit import (  # noqa: E402
    Batch,
    RoleTables,
    batch_runner,
    benchmark_module,
    check_team,
    integer_answer,
    one_size,
    stack_arrays,
)
from relic_envs.errors import InvalidConfig, InvalidReturn  # noqa: E402


def test_a_batch_has_one_size_and_says_which_sizes_it_got():
    assert one_size([3, 3, 3], lambda n: n) == 3
    with pytest.raises(InvalidConfig, match="empty"):
        one_size([], lambda n: n)
    with pytest.raises(InvalidConfig, match=r"one size N; got sizes \[3, 5\]"):
        one_size([3, 5, 3], lambda n: n, "size N")


def test_stacking_names_the_field_whose_shapes_differ():
    data = stack_arrays([{"a": np.zeros(2), "b": np.float64(1)}, {"a": np.ones(2), "b": np.float64(2)}])
    assert data["a"].shape == (2, 2) and data["b"].tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="'a'"):
        stack_arrays([{"a": np.zeros(2)}, {"a": np.zeros(3)}])
    assert Batch(data, 2).shape is None  # a family without a size key


def test_an_answer_of_the_wrong_shape_or_dtype_is_refused_with_its_reason():
    assert int(integer_answer("A", jnp.int32(4), (), "node id")) == 4
    assert integer_answer("B", jnp.arange(3), (3,), "array of values").shape == (3,)
    with pytest.raises(InvalidReturn, match="shape") as shape:
        integer_answer("A", jnp.arange(2), (), "node id")
    with pytest.raises(InvalidReturn, match="float32") as dtype:
        integer_answer("C", jnp.float32(1.0), (), "job id")
    assert (shape.value.reason, dtype.value.reason) == ("shape", "dtype")


def test_an_interface_the_jax_problem_lacks_is_named():
    class Problem(RoleTables):
        name, roles = "toy", {"paper": {"A": {}}}

    assert Problem().role_table("paper") == {"A": {}}
    with pytest.raises(NotImplementedError, match=r"no 'alt' interface yet; available: \['paper'\]"):
        Problem().role_table("alt")


def test_a_team_missing_a_role_is_named_before_anything_is_traced():
    with pytest.raises(InvalidConfig, match=r"missing \['B'\]"):
        check_team({"A": abs, "C": abs})
    check_team({"A": abs, "B": abs, "C": abs})


def test_an_unknown_or_unwritten_benchmark_module_is_not_implemented():
    with pytest.raises(NotImplementedError, match=r"no toy evaluator for 'z'; available: \['x', 'y'\]"):
        benchmark_module({"x": "json", "y": "relic_envs.no_such_module"}, "z", "toy evaluator")
    with pytest.raises(NotImplementedError, match="not written yet"):
        benchmark_module({"y": "relic_envs.no_such_module"}, "y", "toy evaluator")
    assert benchmark_module({"x": "json"}, "x", "toy evaluator").__name__ == "json"


def test_a_batch_runner_returns_numpy_in_the_precision_asked():
    batch = Batch({"v": np.arange(4, dtype=np.float64)}, 4)
    for x64, dtype in ((True, np.float64), (False, np.float32)):
        out = batch_runner(lambda data: {"twice": 2 * data["v"]}, x64=x64)(batch)
        assert type(out["twice"]) is np.ndarray and out["twice"].dtype == dtype
        assert out["twice"].tolist() == [0.0, 2.0, 4.0, 6.0]
    prepared = batch_runner(lambda data: data["v"] + 1, x64=True, prepare=lambda data: {"v": data["v"] * 10})
    assert prepared(batch).tolist() == [1.0, 11.0, 21.0, 31.0]
    assert prepared.jitted.lower(batch.data) is not None  # what benchmarks/jax_throughput.py measures


def test_a_familys_per_benchmark_modules_come_from_the_one_benchmark_table():
    from relic_envs.core.registry import SPECS, family_modules

    for family in ("mapp", "mas", "co", "dcop"):
        modules = family_modules(family, "jax_eval")
        assert sorted(modules) == sorted(s.name for s in SPECS if s.family == family)
        for name, path in modules.items():
            assert benchmark_module(modules, name, "JAX evaluator").__name__ == path
    assert family_modules("dcop", "roles")["sensor_dcsp"] == "relic_envs.dcop.sensor_dcsp.roles"
    with pytest.raises(InvalidConfig, match="unknown family 'ml'"):
        family_modules("ml", "jax_eval")
