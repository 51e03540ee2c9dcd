"""The JAX side's shared pieces (relic_envs.core.jax_kit): the errors every family's evaluators now share."""

import numpy as np
import pytest

pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

from relic_envs.core.jax_kit import Batch, RoleTables, integer_answer, one_size, stack_arrays  # noqa: E402
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
