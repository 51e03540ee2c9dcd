"""MkDocs hook: one generated page per benchmark, built from the registry and the spaces.

The facts table (agents, action and observation spaces, import line, ids, objective)
comes from the code at build time, so it cannot drift from it. Pages are added as
virtual files ``benchmarks/<name>.md`` plus an index ``benchmarks/index.md``; nothing is
written into ``docs/``.
"""

from __future__ import annotations

import re

from mkdocs.structure.files import File

import relic_envs
from relic_envs.core.registry import spec

FAMILY_PAGE = {"mapp": "mapp.md", "mas": "mas.md", "co": "co.md", "dcop": "dcop.md"}
RESULTS_PAGE = {"mapp": "mapp.md", "mas": "mas.md", "co": "co.md", "dcop": "dcop.md"}


def _space(space) -> str:
    """A space's repr on one table row: numpy's reprs wrap long arrays onto new lines."""
    nvec = getattr(space, "nvec", None)
    if nvec is not None and nvec.ndim == 1 and len(set(nvec.tolist())) == 1:  # MultiDiscrete([3 3 ... 3])
        return f"MultiDiscrete([{int(nvec[0])}] * {len(nvec)})"
    return " ".join(str(space).split()).replace("|", "\\|")


# A Sphinx role the docstrings use (``:class:`~a.b.C```) as Markdown renders it inside
# mkdocstrings' output: ``:class:<code>~a.b.C</code>``. MkDocs has no roles, so the
# page shows the code alone, as Sphinx would (``~`` keeps the last name only).
_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):<code>(~?)([^<]*)</code>")


def _role(match: re.Match) -> str:
    tilde, target = match.groups()
    return f"<code>{target.rsplit('.', 1)[-1] if tilde else target}</code>"


def on_page_content(html, page, config, files):
    return _ROLE.sub(_role, html)


def benchmark_page(name: str) -> str:
    bench, row = relic_envs.get_benchmark(name), spec(name)
    env = relic_envs.make(name)
    env.reset(seed=0)
    agents = ", ".join(env.possible_agents)
    lines = [
        f"# {row.title} (`{name}`)", "",
        f"{row.title}, Appendix {row.paper_section} of the RELIC paper. Objective: **{row.objective}**.", "",
        "| fact | value |", "|---|---|",
        f"| import | `relic_envs.make(\"{name}\")` or `pettingzoo.make(\"parallel\", \"relic/{name}-v0\")` |",
        f"| PettingZoo ids | `relic/{name}-v0` (parallel and AEC) |",
        f"| agents | {agents} |",
        f"| interfaces | {', '.join(f'`{i}`' for i in bench.interfaces)} |",
        f"| objective direction | {'minimised (reward = -cost change)' if bench.minimize else 'maximised'} |",
        f"| training stream | {len(relic_envs.splits(name).train)} batches of "
        f"{len(relic_envs.splits(name).train[0])} instances |",
        f"| test sets | {', '.join(f'`{k}` ({len(v)})' for k, v in relic_envs.splits(name).test.items())} |",
    ]
    for agent in env.possible_agents:
        lines.append(f"| action space {agent} | `{_space(env.action_space(agent))}` |")
    lines += ["", "## Role signatures and observations", ""]
    for role, sig in bench.signatures("paper").items():
        space = env.observation_space(role)
        lines += [f"### Role {role}", "", "```python", sig.describe(), "```", "",
                  "| observation key | space |", "|---|---|"]
        lines += [f"| `{key}` | `{_space(sub)}` |" for key, sub in space.spaces.items()]
        lines.append("")
    lines += [f"![A seed-team episode of {name}](../images/render/{name}.png)", "",
              f"Definitions and the decisions the paper leaves open: [{bench.family} family page]"
              f"({FAMILY_PAGE[bench.family]}); results: [{bench.family} results](../results/"
              f"{RESULTS_PAGE[bench.family]}).", "",
              "## Version history", "",
              "| version | relic-envs | change |", "|---|---|---|",
              f"| `relic/{name}-v0` | {relic_envs.__version__} | first release: Appendix {row.paper_section} of the paper "
              "([changelog](../changelog.md)) |", ""]
    env.close()
    return "\n".join(lines)


def index_page() -> str:
    lines = ["# Every benchmark", "", "| name | benchmark | appendix | objective |", "|---|---|---|---|"]
    for name in relic_envs.names():
        row = spec(name)
        lines.append(f"| [`{name}`]({name}.md) | {row.title} | {row.paper_section} | {row.objective} |")
    return "\n".join(lines) + "\n"


def on_files(files, config):
    files.append(File.generated(config, "benchmarks/index.md", content=index_page()))
    for name in relic_envs.names():
        files.append(File.generated(config, f"benchmarks/{name}.md", content=benchmark_page(name)))
    return files
