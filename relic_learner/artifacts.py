"""What a run directory keeps for an audit, beyond the events (issue 17, DESIGN §11).

* ``provenance.json`` - the package version, the git commit of the checkout when there
  is one, the Python version and a digest of the benchmark's split manifest entries,
  so a result can be tied to the code and data that produced it;
* ``transcripts/NAME.json.gz`` - every LLM call's messages and reply (Reflect summaries
  and delivered principles included), one gzip file per call, named by its place in
  the run (``b2-A-h3-lift``, ``b2-B-reveal``);
* ``invalid/NAME.py`` - the source of every candidate that passed intake but failed
  evaluation (an intake rejection's reply text is in its transcript).

Files are written atomically and named by position, so a resumed run that redoes a
step overwrites them with identical bytes (gzip with a zero timestamp).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import platform
import subprocess
from pathlib import Path
from typing import Any

import relic_envs
from relic_envs.core.splits import read_manifest
from relic_learner.runlog import atomic_write


def splits_digest(env: str) -> str:
    """sha256 of the manifest entries (count, regime, file sha256) of ``env``'s canonical splits."""
    manifest = read_manifest()
    entries = {k: v for k, v in manifest["files"].items() if k.startswith(f"{env}/")}
    text = json.dumps({"root_seed": manifest.get("root_seed"), "files": entries}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def git_commit(path: Path) -> dict[str, Any] | None:
    """The checkout's commit and whether it has local changes; ``None`` outside a git checkout."""
    try:
        head = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": head, "dirty": bool(status.strip())}


def provenance(env: str, isolation: str = "full") -> dict[str, Any]:
    from relic_learner import jail

    return {
        "relic_envs": relic_envs.__version__,
        "git": git_commit(Path(relic_envs.__file__).resolve().parent),
        "python": platform.python_version(),
        "splits_sha256": splits_digest(env),
        # what a role worker's jail holds on this machine (docs/learner.md, "The layers")
        "isolation": {"mode": isolation, "layers": jail.probe()},
    }


def save_transcript(run: Path, name: str, record: dict[str, Any]) -> None:
    data = gzip.compress(json.dumps(record, sort_keys=True).encode(), mtime=0)
    (run / "transcripts").mkdir(exist_ok=True)
    atomic_write(run / "transcripts" / f"{name}.json.gz", data)


def load_transcript(path: Path) -> dict[str, Any]:
    return json.loads(gzip.decompress(path.read_bytes()))


def save_invalid(run: Path, name: str, source: str) -> None:
    (run / "invalid").mkdir(exist_ok=True)
    atomic_write(run / "invalid" / f"{name}.py", source.encode())
