"""The codecs' decoded values: exactly the paper's Python types, entry by entry."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from relic_envs.core.codecs import Graph, SparseDict

_FLOATS = st.floats(allow_nan=False, allow_infinity=False, width=64)


def _entry_by_entry(row, ints):
    return tuple(int(v) if k in ints else float(v) for k, v in enumerate(row))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(
    arrays(np.float64, (n, 4), elements=_FLOATS), arrays(np.int8, (n,), elements=st.integers(0, 1)))))
def test_graph_and_sparse_rows_are_python_ints_and_floats(case):
    table, mask = case
    table[:, 0] = np.arange(len(table))  # node ids
    graph = Graph(1).decode({"dist_mat": np.zeros((len(table), len(table))), "nodes": table})
    assert graph["nodes"] == [_entry_by_entry(r, (0,)) for r in table]
    assert all(type(v) is (int if k == 0 else float) for row in graph["nodes"] for k, v in enumerate(row))
    wide = SparseDict(4, ints=(0, 2)).decode({"mask": mask, "value": table})
    assert wide == {int(i): _entry_by_entry(table[i], (0, 2)) for i in np.flatnonzero(mask)}
    assert all(type(k) is int for k in wide) and all(type(row[2]) is int and type(row[1]) is float for row in wide.values())
    narrow = SparseDict().decode({"mask": mask, "value": table[:, 1]})
    assert narrow == {int(i): float(table[i, 1]) for i in np.flatnonzero(mask)}
    assert list(narrow) == sorted(narrow) and all(type(v) is float for v in narrow.values())
