"""The reference solvers' shared loop over the test splits and their cache (baselines._test_splits):
a write, then a read, of a real benchmark's splits with a stand-in solver (no OR-Tools run)."""

import numpy as np
import pytest

import relic_envs
from baselines._test_splits import by_size, solve_test_splits

pytest.importorskip("ortools")


def test_the_loop_solves_every_test_instance_once_in_split_order():
    seen = []

    def solve(inst):
        seen.append(inst)
        return type("R", (), {"objective": float(len(seen)), "status": "feasible"})()

    results, solved = solve_test_splits("mas_jd", solve, ("objective", "status"), "stand-in", progress=False)
    test = relic_envs.splits("mas_jd").test
    assert list(results) == list(test) and by_size(results) == ["test50", "test80"]
    expected = [inst for regime in test for inst in test[regime]]
    assert len(seen) == len(expected) and all(np.array_equal(a.release, b.release) for a, b in zip(seen, expected))
    assert results["test50"]["objective"].tolist() == [float(k + 1) for k in range(len(test["test50"]))]
    assert [len(v) for v in solved.values()] == [len(v) for v in test.values()]


def test_a_written_cache_reads_back_field_by_field(tmp_path, monkeypatch):
    from baselines.mas import cpsat

    def fake(benchmark, inst, **kw):
        n = inst.n_jobs
        return cpsat.CPSATResult(np.zeros((n, 1), np.int64), np.zeros((n, 1)), float(n), float(n), 1.0, 0.0,
                                 "optimal" if n == 50 else "feasible", 0.5)

    monkeypatch.setattr(cpsat, "solve_cpsat", fake)
    path = tmp_path / "cpsat_test.npz"
    cpsat.write_cache("mas_jd", time_limit=1.0, workers=1, path=path, progress=False)
    cache = cpsat.load_cache("mas_jd", path)
    sizes = {r: len(v) for r, v in relic_envs.splits("mas_jd").test.items()}
    assert cache.field("objective").tolist() == [50.0] * sizes["test50"] + [80.0] * sizes["test80"]
    assert cache.status_counts("test50") == {"optimal": sizes["test50"]}
    assert cache.status_counts("test80", ("optimal", "feasible")) == {"optimal": 0, "feasible": sizes["test80"]}
    assert cache.meta["time_limit_s"] == 1.0
    assert "0 optimal, 20 feasible" in cpsat.summary("mas_jd", cache).splitlines()[1]


def test_every_shipped_reference_is_pinned_by_sha256():
    """Issue 55: the reference caches are in the manifest beside the splits, so nothing
    changes their contents unseen."""
    from relic_envs.core.splits import DATA_DIR, check_reference, read_manifest

    manifest = read_manifest()
    shipped = {p.relative_to(DATA_DIR).as_posix() for p in DATA_DIR.glob("*/*.npz")}
    references = shipped - set(manifest["files"])
    assert len(references) >= 17 and references == set(manifest["references"])
    for key in sorted(references):
        check_reference(DATA_DIR / key)


def test_a_changed_or_unpinned_reference_is_refused(tmp_path):
    import json

    from relic_envs.core.references import load_fields
    from relic_envs.core.splits import DATA_DIR, MANIFEST, check_reference
    from relic_envs.errors import InvalidInstance

    path = DATA_DIR / "dgc" / "cpsat_test.npz"
    assert load_fields(path) is not None  # as shipped
    manifest = json.loads(MANIFEST.read_text())
    manifest["references"]["dgc/cpsat_test.npz"]["sha256"] = "0" * 64
    (tmp_path / "changed.json").write_text(json.dumps(manifest))
    with pytest.raises(InvalidInstance, match="does not match its sha256"):
        check_reference(path, tmp_path / "changed.json")
    del manifest["references"]["dgc/cpsat_test.npz"]
    (tmp_path / "unpinned.json").write_text(json.dumps(manifest))
    with pytest.raises(InvalidInstance, match="not pinned"):
        check_reference(path, tmp_path / "unpinned.json")


def test_a_reference_written_elsewhere_is_neither_pinned_nor_checked(tmp_path):
    from relic_envs.core.references import load_fields, save_fields
    from relic_envs.core.splits import read_manifest

    before = read_manifest()
    save_fields(tmp_path / "mine.npz", {"objective": np.arange(3.0)}, {"solver": "mine"})
    fields, meta = load_fields(tmp_path / "mine.npz")
    assert fields["objective"].tolist() == [0.0, 1.0, 2.0] and meta == {"solver": "mine"}
    assert read_manifest() == before
