"""The shipped splits and the table figures are the same bits on every CPU.

Each setting emulates another CPU in a fresh Python process: OpenBLAS forced to an older
or newer kernel (``OPENBLAS_CORETYPE``), numpy's AVX2/AVX-512 loops switched off
(``NPY_DISABLE_CPU_FEATURES``, only the targets numpy reports as enabled here), glibc's
FMA variants of ``exp``/``log`` switched off (``GLIBC_TUNABLES``), and all of them at
once. Each process regenerates every shipped split file and computes a set of figures
(seed teams' objectives on the test splits, objectives and landscapes of fixed
assignments, role observations, derived instance data); the split hashes must equal
the manifest and the figures must equal those of a process without settings (whose
splits ``tests/core/test_api.py`` checks).

The file is also the worker: ``python tests/core/test_cpu_independence.py quick`` (or
``full``) prints the JSON the tests compare.

See CONTRIBUTING.md, "Numerics that do not depend on the CPU".
"""

from __future__ import annotations

import concurrent.futures
import decimal
import functools
import hashlib
import io
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import tokenize
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
QUICK_INSTANCES = 2  # per test regime in the default sweep; the slow sweep plays every test instance


# ---------------------------------------------------------------------------- worker


def _digest(value) -> str:
    h = hashlib.sha256()

    def feed(v):
        if isinstance(v, dict):
            for k in sorted(v, key=str):
                h.update(repr(k).encode())
                feed(v[k])
        elif isinstance(v, (list, tuple)):
            h.update(f"seq{len(v)}".encode())
            for item in v:
                feed(item)
        else:
            a = np.asarray(v)
            h.update(f"{a.dtype.str}{a.shape}".encode())
            h.update(np.ascontiguousarray(a).tobytes() if a.dtype != object else repr(v).encode())

    feed(value)
    return h.hexdigest()[:24]


def shipped() -> list[str]:
    """The benchmarks whose canonical splits are in the manifest (built and shipped)."""
    import relic_envs
    from relic_envs.core.splits import read_manifest

    files = read_manifest()["files"]
    return [name for name in relic_envs.names() if any(key.startswith(f"{name}/") for key in files)]


def split_hashes() -> dict[str, str]:
    """sha256 of every shipped split file, regenerated from its seed."""
    from relic_envs.core.instance import save_instances
    from relic_envs.core.splits import generate_split, split_plan

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in shipped():
            for regime, count in split_plan(name):
                path = Path(tmp) / f"{name}-{regime}.npz"
                save_instances(generate_split(name, regime, count), path)
                out[f"{name}/{regime}.npz"] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def figures(limit: int | None) -> dict[str, object]:
    """Table figures and decision-relevant floats, as exact reprs and digests."""
    import relic_envs
    from relic_envs.core.numerics import exp
    from relic_envs.core.registry import get_benchmark
    from relic_envs.core.rollout import rollout
    from relic_envs.mapp._geometry import distances
    from relic_envs.seeds import seed_team

    out: dict[str, object] = {}
    for name in shipped():
        bench = get_benchmark(name)
        splits = relic_envs.splits(name)
        for regime, instances in splits.test.items():
            instances = instances[:limit]
            for interface in bench.interfaces:
                results = rollout(name, seed_team(name, interface), instances, interface=interface)
                objectives = [r.objective for r in results]
                out[f"{name}/{regime}/{interface}/seed team mean"] = repr(float(np.mean(objectives)))
                out[f"{name}/{regime}/{interface}/seed team per instance"] = _digest(objectives)
                episode = bench.new_episode(instances[0], interface)
                out[f"{name}/{regime}/{interface}/observations"] = _digest({r: episode.observe(r) for r in bench.roles})
            first = instances[:3]
            if bench.family == "dcop":
                problem = bench.problem
                for k, inst in enumerate(first):
                    shifted = (inst.x0 + 1) % problem.domain
                    out[f"{name}/{regime}/{k}/fixed costs"] = [repr(problem.cost(inst, inst.x0)), repr(problem.cost(inst, shifted))]
                    out[f"{name}/{regime}/{k}/landscape"] = _digest([problem.landscape(inst, inst.x0), problem.landscape(inst, shifted)])
            elif name == "mapp_ar":
                from relic_envs.mapp.ar.simulator import correlation

                out[f"{name}/{regime}/rho"] = _digest([correlation(distances(i.coords), i.sigma) for i in instances])
            elif name == "mapp_ds":
                from relic_envs.mapp.ds.generator import stream

                out[f"{name}/{regime}/streams"] = _digest([vars(stream(i)) for i in instances])
    sample = np.random.default_rng(7).uniform(-200.0, 5.0, 20_000)
    out["numerics.exp sample"] = _digest(exp(sample))
    out["numerics.exp vs math.exp mismatches (info)"] = int(np.sum(exp(sample) != np.array([math.exp(v) for v in sample])))
    return out


def _openblas_core() -> str | None:
    """The kernel OpenBLAS runs in this process (Linux; None where it cannot be asked)."""
    import ctypes

    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    for lib in sorted({line.split()[-1] for line in maps.splitlines() if "openblas" in line.lower()}):
        for symbol in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename", "openblas_get_corename64_", "openblas_get_corename"):
            function = getattr(ctypes.CDLL(lib), symbol, None)
            if function is not None:
                function.restype = ctypes.c_char_p
                return function().decode()
    return None


def _worker(task: str) -> None:
    if task in ("quick", "quick-figures"):
        result = {
            "splits": split_hashes() if task == "quick" else None, "figures": figures(QUICK_INSTANCES),
            "runtime": {"openblas_core": _openblas_core(), "numpy_simd": _numpy_simd_targets()},
        }
    elif task == "full":
        result = {"figures": figures(None)}
    else:
        raise SystemExit(f"task must be quick, quick-figures or full, got {task!r}")
    print(json.dumps(result, sort_keys=True))


# ---------------------------------------------------------------------------- settings


def _cpu_features() -> tuple[dict[str, bool], list[str]]:
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    return dict(__cpu_features__), list(__cpu_dispatch__)


def _numpy_simd_targets(features: tuple[dict[str, bool], list[str]] | None = None) -> list[str]:
    """The AVX2/AVX-512 dispatch targets numpy reports as enabled (in this process).

    numpy refuses to disable baseline features (an error) and ignores names it does not
    dispatch (a warning), so only these can be switched off. numpy >= 2.4 groups them
    (X86_V3 = AVX2 + FMA3 ..., X86_V4 = AVX-512); older versions name them one by one.
    """
    enabled, dispatch = features or _cpu_features()
    wanted = re.compile(r"^(AVX2|FMA3|AVX512|X86_V3|X86_V4)")
    return [t for t in dispatch if wanted.match(t) and enabled.get(t)]


def _uses_openblas() -> bool:
    config = getattr(np, "__config__", None)
    blas = getattr(config, "CONFIG", {}).get("Build Dependencies", {}).get("blas", {})
    return "openblas" in str(blas.get("name", "")).lower()


X86 = platform.machine().lower() in ("x86_64", "amd64")
GLIBC = platform.libc_ver()[0] == "glibc"
NO_FMA_LIBM = "glibc.cpu.hwcaps=-AVX2_Usable,-FMA_Usable,-AVX2,-FMA"  # glibc < 2.33 and >= 2.33 spellings


SETTING_VARIABLES = ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES", "GLIBC_TUNABLES")


def _clean_env(overrides: dict[str, str]) -> dict[str, str]:
    """This process's environment without any CPU setting, plus ``overrides``."""
    env = {k: v for k, v in os.environ.items() if k not in SETTING_VARIABLES}
    env.update(overrides)
    env["OPENBLAS_NUM_THREADS"] = "1"
    return env


@functools.cache
def _machine() -> tuple[dict[str, bool], list[str]]:
    """numpy's view of this CPU in a process without settings (the suite itself may run
    under one, e.g. ``NPY_DISABLE_CPU_FEATURES=X86_V3 python -m pytest``)."""
    code = f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); from {Path(__file__).stem} import _cpu_features; print(json.dumps(_cpu_features()))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_clean_env({}), cwd=ROOT, timeout=120, check=True)
    enabled, dispatch = json.loads(proc.stdout.strip().splitlines()[-1])
    return enabled, dispatch


def _cpu_has(*features: str) -> bool:
    enabled, _ = _machine()
    return all(enabled.get(f, False) for f in features)


# OpenBLAS kernels to force, with the instructions they execute: a forced kernel that
# the CPU cannot run dies with SIGILL, so SkylakeX (AVX-512) runs only on AVX-512 CPUs.
OPENBLAS_CORES = {"Prescott": (), "Haswell": ("AVX2", "FMA3"), "SkylakeX": ("AVX512F", "AVX512CD", "AVX512BW", "AVX512DQ", "AVX512VL")}


def settings() -> dict[str, dict[str, str]]:
    """Environment overrides per emulated CPU (only those this machine can run)."""
    out: dict[str, dict[str, str]] = {}
    if X86 and _uses_openblas():
        for core, needs in OPENBLAS_CORES.items():
            if _cpu_has(*needs):
                out[f"OPENBLAS_CORETYPE={core}"] = {"OPENBLAS_CORETYPE": core}
    targets = _numpy_simd_targets(_machine())
    if targets:
        out["NPY_DISABLE_CPU_FEATURES=" + " ".join(targets)] = {"NPY_DISABLE_CPU_FEATURES": " ".join(targets)}
    if X86 and GLIBC:
        out["GLIBC_TUNABLES (no FMA libm)"] = {"GLIBC_TUNABLES": NO_FMA_LIBM}
    oldest = {}
    for env in out.values():
        if "OPENBLAS_CORETYPE" not in env or env["OPENBLAS_CORETYPE"] == "Prescott":
            oldest.update(env)
    if len(oldest) > 1:
        out["all of Prescott, numpy SIMD off, no FMA libm"] = oldest
    return out


def _run(task: str, env_overrides: dict[str, str]) -> dict:
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), task],
        capture_output=True, text=True, env=_clean_env(env_overrides), cwd=ROOT, timeout=600,
    )
    if proc.returncode != 0:
        raise AssertionError(f"worker {task} under {env_overrides} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _sweep(task: str, default_task: str | None = None) -> dict[str, dict]:
    """``task`` under every setting and ``default_task`` (or ``task``) under the default
    environment, in parallel."""
    runs = {"default": ({}, default_task or task), **{label: (env, task) for label, env in settings().items()}}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        futures = {label: pool.submit(_run, t, env) for label, (env, t) in runs.items()}
        return {label: f.result() for label, f in futures.items()}


@functools.cache
def _quick_sweep() -> dict[str, dict]:
    # The default process needs no split hashes: the settings' are compared with the manifest.
    return _sweep("quick", default_task="quick-figures")


def _differences(got: dict, want: dict) -> list[str]:
    keys = sorted(set(got) | set(want))
    return [f"{k}: {got.get(k)!r} != {want.get(k)!r}" for k in keys if "(info)" not in k and got.get(k) != want.get(k)]


# ---------------------------------------------------------------------------- tests


def test_every_setting_regenerates_the_shipped_splits_bit_for_bit():
    from relic_envs.core.splits import read_manifest

    runs = {label: run for label, run in _quick_sweep().items() if label != "default"}
    manifest = {k: v["sha256"] for k, v in read_manifest()["files"].items()}  # read after the runs
    assert runs, "no CPU setting applies on this machine"
    failures = []
    for label, run in runs.items():
        hashes = run["splits"]
        assert hashes, label
        bad = [f"{k}: regenerated {v[:12]}, manifest {manifest.get(k, 'missing')[:12]}" for k, v in hashes.items() if manifest.get(k) != v]
        if bad:
            failures.append(f"{label}:\n  " + "\n  ".join(bad))
    assert not failures, "split files differ from the manifest under:\n" + "\n".join(failures)


def test_every_setting_gives_the_default_figures():
    runs = {label: run["figures"] for label, run in _quick_sweep().items()}
    default = runs["default"]
    assert any(k.endswith("seed team mean") for k in default)
    failures = {label: _differences(got, default) for label, got in runs.items() if label != "default"}
    failures = {label: diff for label, diff in failures.items() if diff}
    assert not failures, "figures differ from the default run:\n" + "\n".join(
        f"{label}:\n  " + "\n  ".join(diff[:20]) for label, diff in failures.items()
    )


@pytest.mark.heavy  # the quick sweep above runs in the default suite; this one takes two minutes
def test_every_setting_gives_the_default_figures_on_the_whole_test_splits():
    runs = {label: run["figures"] for label, run in _sweep("full").items()}
    default = runs["default"]
    failures = {label: _differences(got, default) for label, got in runs.items() if label != "default"}
    failures = {label: diff for label, diff in failures.items() if diff}
    assert not failures, "figures differ from the default run:\n" + "\n".join(
        f"{label}:\n  " + "\n  ".join(diff[:20]) for label, diff in failures.items()
    )


def test_each_setting_takes_effect():
    """The emulation is real: OpenBLAS runs the forced kernel, numpy's AVX2/AVX-512 loops
    are off (glibc's non-FMA exp: see test_exp_is_glibcs_exp_without_fma)."""
    runs = _quick_sweep()
    assert runs["default"]["runtime"]["numpy_simd"] == _numpy_simd_targets(_machine())
    for label, env in settings().items():
        runtime = runs[label]["runtime"]
        if "OPENBLAS_CORETYPE" in env and runtime["openblas_core"] is not None:
            # OpenBLAS builds without DYNAMIC_OLDER alias the oldest cores to Prescott and
            # name that table after the first of them, Katmai.
            names = {"prescott": {"prescott", "katmai"}}.get(env["OPENBLAS_CORETYPE"].lower(), {env["OPENBLAS_CORETYPE"].lower()})
            assert runtime["openblas_core"].lower() in names, (label, runtime["openblas_core"])
        if "NPY_DISABLE_CPU_FEATURES" in env:
            assert runtime["numpy_simd"] == [], label


@pytest.mark.skipif(not (X86 and GLIBC), reason="glibc on x86-64 only")
def test_exp_is_glibcs_exp_without_fma():
    """Our ``exp`` is glibc's algorithm without fused multiply-adds: with glibc's FMA
    variants switched off, ``math.exp`` gives the same bits on every argument tried."""
    version = tuple(int(p) for p in platform.libc_ver()[1].split(".")[:2])
    if version < (2, 28):
        pytest.skip(f"glibc {version} predates the exp of ARM's optimized-routines")
    figures = _quick_sweep()["GLIBC_TUNABLES (no FMA libm)"]["figures"]
    assert figures["numerics.exp vs math.exp mismatches (info)"] == 0


def _ulps_apart(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ia, ib = a.view(np.int64), b.view(np.int64)
    return np.abs(ia - ib)


def test_exp_is_within_an_ulp_of_the_correctly_rounded_exp():
    from relic_envs.core.numerics import exp

    rng = np.random.default_rng(3)
    x = np.concatenate([
        rng.uniform(-160.0, 0.0, 3000), rng.uniform(-1.0, 1.0, 1000), rng.uniform(-745.0, 709.7, 1000),
        rng.uniform(-745.0, -708.0, 300),  # subnormal results
        [0.0, -0.0, 1e-300, -1e-300, 1.0, -1.0, 512.0, -512.0, 709.78, -745.13],
    ])
    ctx = decimal.Context(prec=50, traps=[])
    exact = np.array([float(ctx.exp(decimal.Decimal(float(v)))) for v in x])
    got = exp(x)
    normal = exact >= np.finfo(np.float64).tiny
    assert _ulps_apart(got[normal], exact[normal]).max() <= 1
    assert np.mean(got == exact) > 0.998
    assert np.all(np.abs(got[~normal] - exact[~normal]) <= 2.0**-1074)  # subnormal: within one unit
    assert exp(0.0) == 1.0 and exp(-np.inf) == 0.0 and exp(np.inf) == np.inf and np.isnan(exp(np.nan))
    assert exp(-800.0) == 0.0 and exp(710.0) == np.inf
    assert exp(np.zeros((2, 3))).shape == (2, 3) and isinstance(exp(1.0), float)


def test_exp_table_is_the_published_one():
    from relic_envs.core.numerics import _table

    tails, scale_bits = _table()
    # First, middle and last entries of tab[] in ARM optimized-routines math/exp_data.c.
    assert tails.view(np.uint64)[[0, 1, 64, 127]].tolist() == [0x0, 0x3C9B3B4F1A88BF6E, 0xBC93B3EFBF5E2228, 0x3C5305C14160CC89]
    assert scale_bits[[0, 1, 64, 127]].tolist() == [0x3FF0000000000000, 0x3FEFF63DA9FB3335, 0x3FEEA09E667F3BCD, 0x3FEFF3C22B8F71F1]


def test_shds_energy_total_is_the_sum_in_its_documented_order():
    from fractions import Fraction

    from relic_envs.dcop.shds.generator import energy_total

    rng = np.random.default_rng(5)
    power, duration = rng.uniform(0.5, 3.0, 120), rng.integers(1, 7, 120)
    exact = float(sum(Fraction(p) * int(d) for p, d in zip(power, duration)))
    assert abs(energy_total(power, duration) - exact) <= 4 * math.ulp(exact)
    # Fewer than 16 devices: no lanes, the products are added in order.
    small_p, small_d = power[:7], duration[:7]
    total = 0.0
    for p, d in zip(small_p, small_d):
        total += p * float(d)
    assert energy_total(small_p, small_d) == total


# Files whose floats are stored in the splits or decide a value/objective/feature: every
# benchmark's generator, simulator and roles, and the families' shared machinery. The
# JAX twins are compared with tolerances and are not listed; rendering decides nothing.
_PACKAGE = ROOT / "relic_envs"
GUARDED = sorted(
    {p for family in ("dcop", "mapp", "mas", "co") for p in (_PACKAGE / family).glob("*/[grs]*.py")
     if p.name in ("generator.py", "simulator.py", "roles.py")}
    | {p for family in ("dcop", "mapp", "mas", "co") for p in (_PACKAGE / family).glob("_*.py")
       if not p.name.startswith(("_jax", "_render", "__"))}
    | {_PACKAGE / "core" / "splits.py", _PACKAGE / "core" / "numerics.py"}
)
# BLAS entry points and numpy functions whose float64 loops are chosen per CPU.
CPU_DEPENDENT = {
    "dot", "vdot", "inner", "outer", "matmul", "einsum", "tensordot", "linalg", "kron",
    "exp", "expm1", "exp2", "log", "log1p", "log2", "log10", "power", "float_power", "cbrt",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "hypot",
}


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _cpu_dependent_calls(path: Path) -> list[str]:
    """``@``, ``np.<name>``/``math.<name>`` and ``.dot(`` uses in code, except on lines
    marked ``# exact: <why>``."""
    source = path.read_text()
    lines = source.splitlines()
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
              if t.type not in (tokenize.COMMENT, tokenize.STRING, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)]
    found = []
    for k, tok in enumerate(tokens):
        row = tok.start[0]
        hit = None
        if tok.type == tokenize.OP and tok.string in ("@", "@=") and k > 0 and tokens[k - 1].start[0] == row:
            hit = tok.string  # a decorator's @ starts its line
        elif tok.type == tokenize.NAME and tok.string in CPU_DEPENDENT and k >= 2 and tokens[k - 1].string == ".":
            owner = tokens[k - 2].string
            if owner in ("np", "numpy", "math"):
                hit = f"{owner}.{tok.string}"
            elif tok.string == "dot":
                hit = ".dot"
        if hit and "# exact:" not in lines[row - 1]:
            found.append(f"{_shown(path)}:{row}: {hit}: {lines[row - 1].strip()}")
    return found


def test_no_cpu_dependent_numerics_in_generators_simulators_and_features():
    assert len(GUARDED) >= 20
    found = [hit for path in GUARDED for hit in _cpu_dependent_calls(path)]
    assert not found, (
        "BLAS or per-CPU numpy/libm functions in code whose floats are stored or decide something "
        "(use relic_envs.core.numerics, a fixed-order sum, or mark an exact use with '# exact: <why>'; "
        "CONTRIBUTING.md, 'Numerics that do not depend on the CPU'):\n" + "\n".join(found)
    )


def test_the_guard_catches_what_it_should(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import numpy as np\nimport math\n\n@staticmethod\ndef f(a, b):\n    '''a @ b in a docstring is fine'''\n"
        "    c = a @ b\n    d = np.exp(a)\n    e = math.log(2.0)\n    g = a.dot(b)\n    h = a @ b  # exact: 0/1 entries\n"
        "    return np.sqrt(c + d + e + g + h)\n"
    )
    assert [hit.split(": ")[1] for hit in _cpu_dependent_calls(bad)] == ["@", "np.exp", "math.log", ".dot"]


if __name__ == "__main__":
    _worker(sys.argv[1] if len(sys.argv) > 1 else "quick")
