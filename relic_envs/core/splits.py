"""Canonical train/test splits: shipped as ``.npz`` files, regenerable from seeds.

Every split file of benchmark ``name`` and regime ``regime`` holds the instances
drawn, in order, from::

    rng = np.random.default_rng(np.random.SeedSequence([ROOT_SEED, crc32(name), crc32(regime)]))

``relic_envs/data/manifest.json`` records each file's regime, count and sha256;
:func:`splits` refuses a file whose bytes do not match, and ``relic-envs splits
--write`` regenerates them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import zlib
from importlib import resources
from pathlib import Path

import numpy as np

from relic_envs.core.instance import Instance, load_instances, save_instances
from relic_envs.core.registry import get_benchmark
from relic_envs.errors import InvalidInstance

ROOT_SEED = 20_260_531
DATA_DIR = Path(str(resources.files("relic_envs") / "data"))
MANIFEST = DATA_DIR / "manifest.json"

# Instances per regime, from the paper's Table app-data-summary.
TRAIN_BATCH_SIZE = 10
TEST_SIZE = {"dcop": 50, "mapp": 20, "mas": 20, "co": 20}


@dataclasses.dataclass(frozen=True)
class Splits:
    """A benchmark's ordered training batches and held-out test sets.

    ``train[b]`` is batch ``b + 1`` (ten instances of that batch's regime);
    ``test`` maps each test regime (``"test"`` for the DCOPs) to its instances.
    """

    name: str
    train: tuple[tuple[Instance, ...], ...]
    test: dict[str, tuple[Instance, ...]]

    def test_instances(self, regime: str | None = None) -> tuple[Instance, ...]:
        """The test instances of one regime (the only one when there is one)."""
        if regime is None:
            if len(self.test) != 1:
                raise ValueError(f"{self.name} has several test regimes {list(self.test)}; name one")
            (regime,) = self.test
        if regime not in self.test:
            raise ValueError(f"{self.name}: unknown test regime {regime!r}; allowed: {list(self.test)}")
        return self.test[regime]


def split_rng(name: str, regime: str) -> np.random.Generator:
    """The generator that draws a canonical split file, in order."""
    key = [ROOT_SEED, zlib.crc32(name.encode()), zlib.crc32(regime.encode())]
    return np.random.default_rng(np.random.SeedSequence(key))


def split_plan(name: str) -> list[tuple[str, int]]:
    """``(regime, count)`` of every canonical file of a benchmark, training first."""
    bench = get_benchmark(name)
    plan = []
    for regime in bench.regimes():
        count = TRAIN_BATCH_SIZE if regime.startswith("train") else TEST_SIZE[bench.family]
        plan.append((regime, count))
    return plan


def generate_split(name: str, regime: str, count: int) -> list[Instance]:
    """Draw a canonical split file's instances from its documented seed."""
    bench, rng = get_benchmark(name), split_rng(name, regime)
    return [bench.generate(regime, rng) for _ in range(count)]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_splits(name: str, data_dir: Path = DATA_DIR) -> dict[str, dict]:
    """Regenerate a benchmark's split files and return their manifest entries."""
    folder = data_dir / name
    folder.mkdir(parents=True, exist_ok=True)
    entries = {}
    for regime, count in split_plan(name):
        path = folder / f"{regime}.npz"
        save_instances(generate_split(name, regime, count), path)
        entries[f"{name}/{regime}.npz"] = {"regime": regime, "count": count, "sha256": _sha256(path)}
    return entries


def read_manifest(path: Path = MANIFEST) -> dict:
    return json.loads(path.read_text()) if path.exists() else {"root_seed": ROOT_SEED, "files": {}}


def update_manifest(entries: dict[str, dict], path: Path = MANIFEST) -> None:
    manifest = read_manifest(path)
    manifest["files"].update(entries)
    manifest["files"] = dict(sorted(manifest["files"].items()))
    path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def pin_reference(path: Path, manifest_path: Path = MANIFEST) -> None:
    """Record the sha256 of a solver reference under :data:`DATA_DIR` in the manifest's
    ``references`` (written by :mod:`relic_envs.core.references` with every cache it saves)."""
    manifest = read_manifest(manifest_path)
    references = manifest.setdefault("references", {})
    references[path.relative_to(DATA_DIR).as_posix()] = {"sha256": _sha256(path)}
    manifest["references"] = dict(sorted(references.items()))
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def check_reference(path: Path, manifest_path: Path = MANIFEST) -> None:
    """:class:`InvalidInstance` unless ``path`` (a reference under :data:`DATA_DIR`) matches its pinned sha256."""
    key = path.relative_to(DATA_DIR).as_posix()
    entry = read_manifest(manifest_path).get("references", {}).get(key)
    if entry is None:
        raise InvalidInstance(f"the reference {key} is not pinned in {manifest_path}; rewrite it with the command "
                              "that made it (its docs page names it), which pins it")
    if _sha256(path) != entry["sha256"]:
        raise InvalidInstance(f"{path} does not match its sha256 in {manifest_path}")


def splits(name: str) -> Splits:
    """The canonical splits of a benchmark, checked against the manifest's sha256.

    >>> s = splits("dgc")
    >>> len(s.train), len(s.train[0]), len(s.test_instances())
    (5, 10, 50)
    """
    files = read_manifest()["files"]
    train, test = [], {}
    for regime, count in split_plan(name):
        key = f"{name}/{regime}.npz"
        path = DATA_DIR / key
        if key not in files or not path.exists():
            raise FileNotFoundError(
                f"canonical split {key} is missing; regenerate it with `relic-envs splits --write {name}`"
            )
        if _sha256(path) != files[key]["sha256"]:
            raise InvalidInstance(f"{path} does not match its sha256 in {MANIFEST}")
        instances = tuple(load_instances(path))
        if len(instances) != count:
            raise InvalidInstance(f"{path} holds {len(instances)} instances, expected {count}")
        if regime.startswith("train"):
            train.append(instances)
        else:
            test[regime] = instances
    return Splits(name, tuple(train), test)
