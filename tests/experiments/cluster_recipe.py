"""docs/grid_cost.md's cluster recipe, verbatim, against a scripted endpoint: run by test_grid.py.

Run inside a network namespace that holds only a loopback interface (the test starts it
under ``bwrap --unshare-net``), so the Ray cluster and the endpoint it starts can be
reached from nowhere else, whatever addresses Ray's servers bind. The order is the
recipe's: ``ray start --head`` first, from a shell that has no key; then
``export OPENAI_API_KEY=... OPENAI_BASE_URL=...``; then ``relic-grid run ... --backend
ray --address auto`` with a relative ``--out`` from another directory; then ``relic-grid
usage`` and ``relic-grid table``. Prints one JSON object with what the test checks.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SECRET = "sk-relic-recipe-" + os.urandom(8).hex()  # a value that cannot appear anywhere by chance


def _server():
    path = HERE.parent / "learner" / "fake_openai_server.py"
    spec = importlib.util.spec_from_file_location("relic_recipe_fake_openai_server", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.FakeOpenAIServer()


def _reply(body: dict) -> str:
    """The parent program back (a valid candidate) or a principle: a pure function of the request."""
    user = body["messages"][-1]["content"]
    if body["messages"][0]["role"] == "system":
        return "```python\n" + re.findall(r"```python\n(.*?)```", user, re.S)[-1] + "```"
    return "TYPE: STRATEGY\nPRINCIPLE: Serve the closest requests first."


def _files_holding(root: Path, needle: bytes) -> list[str]:
    hits = []
    for path in root.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink() and needle in path.read_bytes():
                hits.append(str(path.relative_to(root)))
        except OSError:
            pass  # sockets and files a dying process removed
    return hits


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="rg", dir="/tmp"))  # short: Ray's socket paths live under it
    head, driver = root / "head", root / "driver"
    head.mkdir()
    driver.mkdir()
    (driver / "recipe.toml").write_text(
        'name = "recipe"\nmethods = ["relic", "eoh"]\nenvs = ["mapp_pc"]\nseeds = [0]\n'
        'llm = "openai:fake-model"\nbatches = 1\nproposals = 2\n'
    )
    base = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    base["RAY_TMPDIR"] = str(root / "ray")  # this cluster's files apart from any other Ray on the machine
    base["RAY_USAGE_STATS_ENABLED"] = "0"
    out: dict = {}
    with _server() as server:
        server.responder = _reply
        ray = [sys.executable, "-m", "ray.scripts.scripts"]
        subprocess.run([*ray, "start", "--head", "--num-cpus", "2", "--include-dashboard=false"], cwd=head,
                       env=base, check=True, capture_output=True, timeout=240)
        try:
            # The recipe's `export`, after the cluster is up.
            shell = {**base, "OPENAI_API_KEY": SECRET, "OPENAI_BASE_URL": server.base_url}
            grid = [sys.executable, "-m", "relic_experiments.cli"]
            run = subprocess.run([*grid, "run", "recipe.toml", "--out", "runs/recipe", "--backend", "ray",
                                  "--address", "auto", "--quiet"], cwd=driver, env=shell, capture_output=True,
                                 text=True, timeout=900)
            usage = subprocess.run([*grid, "usage", "runs/recipe"], cwd=driver, env=shell, capture_output=True,
                                   text=True, timeout=300)
            table = subprocess.run([*grid, "table", "runs/recipe"], cwd=driver, env=shell, capture_output=True,
                                   text=True, timeout=300)
            out.update(run_rc=run.returncode, run_out=run.stdout + run.stderr[-3000:],
                       usage_rc=usage.returncode, usage=usage.stdout, table_rc=table.returncode,
                       table=table.stdout, table_err=table.stderr[-3000:])
        finally:
            subprocess.run([*ray, "stop", "--force"], env=base, capture_output=True, timeout=120)
        auth = {v for r in server.requests for k, v in r["headers"].items() if k.lower() == "authorization"}
    out.update(
        requests=len(server.requests),
        authorizations_ok=auth == {f"Bearer {SECRET}"},
        cells_under_driver=sorted(str(p.parent.relative_to(driver)) for p in driver.rglob("result.json")),
        cells_under_head=sorted(str(p) for p in head.rglob("result.json")),
        secret_in_run_files=_files_holding(driver, SECRET.encode()),
        secret_in_ray_files=_files_holding(root / "ray", SECRET.encode()),
    )
    shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
