"""The one table of benchmarks; everything else is derived from it.

From :data:`SPECS` come ``names()``, ``make()``, the PettingZoo registrations
(``relic/<name>-v0`` for ``"parallel"`` and ``"aec"``), the README's status table and
the conformance-test parametrisation. Entry points are ``"module:attr"`` strings,
imported only when a benchmark is used, so ``import relic_envs`` stays light.
"""

from __future__ import annotations

import dataclasses
import importlib
import warnings
from collections.abc import Sequence
from functools import cache
from typing import Any

from relic_envs.core.benchmark import Benchmark
from relic_envs.core.instance import Instance
from relic_envs.errors import InvalidConfig, UnknownBenchmark

VERSION = 0  # the "-v0" of every id; bump per benchmark when its behaviour changes


@dataclasses.dataclass(frozen=True)
class BenchmarkSpec:
    """One row of the benchmark table.

    ``entry_point`` is ``None`` for benchmarks not built yet; ``make`` then raises
    ``NotImplementedError`` naming what is missing.
    """

    name: str
    title: str
    family: str
    paper_section: str  # appendix section of relic.tex that defines it
    objective: str  # short form with direction
    entry_point: str | None  # "module:attr" of the Benchmark object

    @property
    def env_id(self) -> str:
        return f"relic/{self.name}-v{VERSION}"

    @property
    def implemented(self) -> bool:
        return self.entry_point is not None

    @property
    def package(self) -> str:
        """The benchmark's folder as a package, ``relic_envs.<family>.<name>`` (its five modules live there)."""
        if self.entry_point is None:
            raise NotImplementedError(f"{self.name} is not built yet: it has no package")
        return self.entry_point.split(":")[0].rsplit(".", 1)[0]


# family -> (appendix section, package under relic_envs)
_FAMILIES = {"mapp": ("B.1", "mapp"), "mas": ("B.2", "mas"), "co": ("B.3", "co"), "dcop": ("B.4", "dcop")}


def _row(family: str, name: str, module: str, title: str, objective: str) -> BenchmarkSpec:
    """A built benchmark whose ``Benchmark`` is ``relic_envs.<family>.<module>.envs:BENCHMARK``."""
    section, package = _FAMILIES[family]
    return BenchmarkSpec(name, title, family, section, objective, f"relic_envs.{package}.{module}.envs:BENCHMARK")


SPECS: tuple[BenchmarkSpec, ...] = (
    _row("mapp", "mapp_pc", "pc", "Multi-Agent Prize Collection (MAPP-PC)", "collected prize (max)"),
    _row("mapp", "mapp_ar", "ar", "Multi-Agent Area Reconnaissance (MAPP-AR)", "uncertainty removed (max)"),
    _row("mapp", "mapp_ds", "ds", "Multi-Agent Dynamic Servicing (MAPP-DS)", "value of served requests (max)"),
    _row("mas", "mas_jd", "jd", "Multi-Agent Job Dispatch (MAS-JD)", "total weighted tardiness (min)"),
    _row("mas", "mas_st", "st", "Multi-Agent Skilled-Task Scheduling (MAS-ST)", "value of tasks done by their deadlines (max)"),
    _row("mas", "mas_fs", "fs", "Multi-Agent Flow-Shop Scheduling (MAS-FS)", "total weighted completion time (min)"),
    _row("co", "hmtsp", "hmtsp", "Heterogeneous Multi-Depot Multiple TSP (HMTSP)",
         "sum L_k + 0.5 max L_k + 5 sum budget excess (min)"),
    _row("co", "fstsp", "fstsp", "Flying Sidekick TSP (FSTSP)", "T_sync + 0.05 D_truck (min)"),
    _row("co", "fjagv", "fjagv", "Flexible Job Shop with AGVs (FJAGV)", "C_max + 0.2 sum w_j T_j + 0.02 D_AGV (min)"),
    _row("co", "mrcps", "mrcps", "Multi-Project Multi-Skilled RCPSP (MRCPS)", "0.25 max C_p + sum w_p T_p + 0.01 C_labor (min)"),
    _row("dcop", "dgc", "dgc", "Distributed Graph Coloring (DGC)", "weighted conflicts (min)"),
    _row("dcop", "dimes", "dimes", "Distributed Multi-Event Scheduling (DiMES)", "off-slot + travel + preference cost (min)"),
    _row("dcop", "sensor_dcsp", "sensor_dcsp", "Sensor Network DCSP (SensorDCSP)", "coverage + incompatibility cost (min)"),
    _row("dcop", "shds", "shds", "Smart Home Device Scheduling (SHDS)", "energy + preference + overload cost (min)"),
)
_BY_NAME = {s.name: s for s in SPECS}


def family_modules(family: str, module: str) -> dict[str, str]:
    """Benchmark name -> ``relic_envs.<family>.<name>.<module>`` for every built benchmark of a family,
    e.g. ``family_modules("mas", "jax_eval")`` for the family's per-benchmark JAX evaluators."""
    if family not in _FAMILIES:
        raise InvalidConfig(f"unknown family {family!r}; known: {sorted(_FAMILIES)}")
    return {s.name: f"{s.package}.{module}" for s in SPECS if s.family == family and s.implemented}


def names(*, include_planned: bool = False) -> list[str]:
    """Names of the benchmarks that can be made (all 14 with ``include_planned``)."""
    return [s.name for s in SPECS if include_planned or s.implemented]


def spec(name: str) -> BenchmarkSpec:
    """The table row of a benchmark; ``UnknownBenchmark`` lists the known names."""
    if name not in _BY_NAME:
        raise UnknownBenchmark(name, _BY_NAME)
    return _BY_NAME[name]


@cache
def get_benchmark(name: str) -> Benchmark:
    """The :class:`Benchmark` object of a built benchmark."""
    row = spec(name)
    if row.entry_point is None:
        raise NotImplementedError(
            f"benchmark {name!r} ({row.title}, Appendix {row.paper_section}) is not built yet; "
            f"built: {', '.join(names())}"
        )
    module, attr = row.entry_point.split(":")
    return getattr(importlib.import_module(module), attr)


def make(
    name: str,
    *,
    api: str = "parallel",
    interface: str = "paper",
    instances: Sequence[Instance] | None = None,
    regime: str | None = None,
    max_cycles: int | None = None,
    render_mode: str | None = None,
    on_invalid: str = "penalize",
) -> Any:
    """Make a benchmark's PettingZoo environment.

    Parameters
    ----------
    name:
        A name from :func:`names`, e.g. ``"dgc"``.
    api:
        ``"parallel"`` for a ``ParallelEnv`` (all roles act at once), ``"aec"`` for the
        AEC form (PettingZoo's ``parallel_to_aec`` of the same env).
    interface:
        ``"paper"`` (the paper's A/B/C signatures, default) or ``"alt"`` (MAPP and MAS).
    instances:
        Instances to play (``reset(seed=k)`` plays ``instances[k % len]``); default:
        fresh instances of ``regime`` from the generator.
    regime:
        Generator regime for fresh instances (default: the benchmark's test regime).
    max_cycles:
        Truncate after this many steps (default: the benchmark's natural length).
    render_mode:
        ``None``, ``"rgb_array"`` or ``"human"``; see
        :class:`~relic_envs.core.env.RelicParallelEnv`.
    on_invalid:
        What ``step`` does with an action the benchmark cannot apply: ``"penalize"``
        (default) refuses it, charges the team a penalty and lists it in
        ``infos[agent]["invalid_actions"]``; ``"raise"`` raises
        :class:`~relic_envs.errors.InvalidAction` (opt-in, for debugging);
        ``"program"`` applies the paper's program semantics. See
        :mod:`relic_envs.core.env`.

    Examples
    --------
    >>> env = make("dgc")
    >>> sorted(env.possible_agents)
    ['A', 'B', 'C']
    """
    from relic_envs.core.env import RelicParallelEnv, to_aec

    if api not in ("parallel", "aec"):
        raise InvalidConfig(f"api must be 'parallel' or 'aec', got {api!r}")
    env = RelicParallelEnv(
        get_benchmark(name),
        instances=instances,
        regime=regime,
        interface=interface,
        max_cycles=max_cycles,
        render_mode=render_mode,
        on_invalid=on_invalid,
    )
    return env if api == "parallel" else to_aec(env)


def register_pettingzoo() -> None:
    """Register every built benchmark in PettingZoo's registry (idempotent)."""
    import pettingzoo

    for row in SPECS:
        if not row.implemented:
            continue
        module = row.entry_point.split(":")[0]
        for env_type, attr in (("parallel", "parallel_env"), ("aec", "env")):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # re-registration on reload only overrides ours
                pettingzoo.register(env_type, row.env_id, entry_point=f"{module}:{attr}")


def pettingzoo_factories(name: str):
    """``(parallel_env, env)`` constructors of a benchmark, for its ``envs`` module.

    PettingZoo's registry and ``max_cycles_test`` expect module-level functions
    ``parallel_env(**kw)`` and ``env(**kw)``; both forward to :func:`make`.
    """

    def parallel_env(**kwargs: Any):
        return make(name, api="parallel", **kwargs)

    def env(**kwargs: Any):
        return make(name, api="aec", **kwargs)

    parallel_env.__doc__ = f"The {name} benchmark as a PettingZoo ParallelEnv (see relic_envs.make)."
    env.__doc__ = f"The {name} benchmark as a PettingZoo AECEnv (see relic_envs.make)."
    return parallel_env, env
