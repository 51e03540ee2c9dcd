"""A grid spec: which methods, benchmarks, interfaces and run seeds, with which LLM and budget.

Example (TOML)::

    name = "dcop-main"
    methods = ["relic", "eoh", "reevo"]
    envs = ["dgc", "dimes"]
    seeds = [0, 1, 2]
    llm = "offline"            # or "openai:gpt-4o-mini" (key from OPENAI_API_KEY)
    # optional: interfaces = ["paper"], base_url = "...", batches = 5, proposals = 10,
    #           ablation = "none", communication = "full"   (RELIC cells only),
    #           rpm = 500, tpm = 200000   (one limit for all cells: requests/tokens per minute)

Every combination is one :class:`~relic_experiments.cell.Cell`. Unknown keys and bad
values raise :class:`~relic_envs.errors.InvalidConfig` naming the key.
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from pathlib import Path
from typing import Any

import relic_envs
from relic_envs.errors import InvalidConfig
from relic_learner.stream import check_positive_int

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

RELIC = "relic"


def known_methods() -> tuple[str, ...]:
    from baselines.ahd import METHODS

    return (RELIC, *sorted(METHODS))


@dataclasses.dataclass(frozen=True, kw_only=True)
class SearchChoices:
    """What a grid passes unchanged to every one of its cells: the LLM and the search's budget and variant."""

    llm: str = "offline"
    base_url: str | None = None
    batches: int = 5
    proposals: int = 10
    ablation: str = "none"
    communication: str = "full"

    def search_choices(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(SearchChoices)}


@dataclasses.dataclass(frozen=True)
class GridSpec(SearchChoices):
    name: str
    methods: tuple[str, ...]
    envs: tuple[str, ...]
    seeds: tuple[int, ...] = (0, 1, 2)
    interfaces: tuple[str, ...] = ("paper",)
    rpm: int | None = None  # the whole grid's LLM requests per minute (every cell, every node)
    tpm: int | None = None  # and tokens per minute
    rate_window_s: float = 60.0  # the window rpm and tpm count in (60 s: per minute; tests use shorter ones)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidConfig(f"name must be a non-empty string, got {self.name!r}")
        for key, allowed in (("methods", known_methods()), ("envs", relic_envs.names()),
                             ("interfaces", ("paper", "alt"))):
            values = getattr(self, key)
            if not values:
                raise InvalidConfig(f"{key} must list at least one value")
            bad = [v for v in values if v not in allowed]
            if bad:
                raise InvalidConfig(f"{key}: unknown {bad}; allowed: {list(allowed)}")
        if not self.seeds or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in self.seeds):
            raise InvalidConfig(f"seeds must be non-negative ints, got {list(self.seeds)}")
        for key in ("batches", "proposals"):
            check_positive_int(key, getattr(self, key))
        if self.batches > 5:
            raise InvalidConfig(f"batches must be at most 5 (the canonical training stream), got {self.batches}")
        for key in ("rpm", "tpm"):
            value = getattr(self, key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise InvalidConfig(f"{key} must be a positive int (per minute), got {value!r}")
        if isinstance(self.rate_window_s, bool) or not isinstance(self.rate_window_s, int | float) \
                or not self.rate_window_s > 0:
            raise InvalidConfig(f"rate_window_s must be a number of seconds > 0, got {self.rate_window_s!r}")
        if not (self.llm == "offline" or self.llm.startswith("openai:")):
            raise InvalidConfig(f"llm must be 'offline' or 'openai:MODEL', got {self.llm!r}")

    def rate_limiter(self, out: str | Path):
        """The grid's shared :class:`~relic_learner.llm.ratelimit.RateLimiter` (``OUT/llm_rate.json``), or None."""
        if self.rpm is None and self.tpm is None:
            return None
        from relic_learner.llm.ratelimit import RateLimiter

        return RateLimiter(Path(out) / "llm_rate.json", rpm=self.rpm, tpm=self.tpm, window_s=self.rate_window_s)

    def cells(self) -> list:
        """Every cell of the grid, in a fixed order (method, env, interface, seed)."""
        from relic_experiments.cell import Cell

        out = []
        for method, env, interface, seed in itertools.product(self.methods, self.envs, self.interfaces, self.seeds):
            if interface != "paper" and interface not in relic_envs.get_benchmark(env).interfaces:
                continue  # the alternative interface exists for MAPP and MAS only
            out.append(Cell(method, env, interface, seed, **self.search_choices()))
        return out


_LISTS = ("methods", "envs", "seeds", "interfaces")


def parse_spec(data: dict[str, Any]) -> GridSpec:
    fields = {f.name for f in dataclasses.fields(GridSpec)}
    unknown = sorted(set(data) - fields)
    if unknown:
        raise InvalidConfig(f"unknown grid keys {unknown}; allowed: {sorted(fields)}")
    missing = [k for k in ("name", "methods", "envs") if k not in data]
    if missing:
        raise InvalidConfig(f"grid spec misses {missing}")
    kw = dict(data)
    for key in _LISTS:
        if key in kw:
            if not isinstance(kw[key], list):
                raise InvalidConfig(f"{key} must be a list, got {kw[key]!r}")
            kw[key] = tuple(kw[key])
    return GridSpec(**kw)


SHIPPED = Path(__file__).with_name("grids")  # the specs that come with the package (package data)


def shipped_specs() -> list[str]:
    """The names of the grid specs shipped with the package (``relic-grid run NAME`` takes them)."""
    return sorted(p.stem for p in SHIPPED.glob("*.toml"))


def spec_path(spec: str | Path) -> Path:
    """The TOML file ``spec`` names: a path that exists, else a shipped spec's name
    (``dcop-offline-small``, or ``grids/dcop-offline-small.toml`` as the repository once had it).

    Raises
    ------
    InvalidConfig
        Neither; the message lists the shipped specs.
    """
    path = Path(spec)
    if path.is_file():
        return path
    shipped = SHIPPED / f"{path.stem}.toml"
    if path.suffix in ("", ".toml") and shipped.is_file():
        return shipped
    raise InvalidConfig(f"no grid spec {str(spec)!r}: give a TOML file's path or a shipped spec's name "
                        f"({', '.join(shipped_specs())})")


def load_spec(path: str | Path) -> GridSpec:
    """Read and check a TOML grid spec: a file's path or a shipped spec's name (:func:`spec_path`)."""
    path = spec_path(path)
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise InvalidConfig(f"{path}: not valid TOML: {exc}") from None
    return parse_spec(data)
