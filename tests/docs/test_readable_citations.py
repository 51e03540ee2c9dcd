"""Issue 55: the docs cite the paper by what a reader can find in the PDF (a table's caption,
a section's title), not by LaTeX labels or files of our design notes a reader cannot open."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
LABEL = re.compile(r"\b(?:tab|lst|sec|app|eq|fig|alg):[a-z][a-z0-9-]+|relic\.tex|DESIGN(?:\.md| §| contract)")


def test_no_page_cites_a_latex_label_or_a_design_file():
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        if page.name == "changelog.md":  # a record of what each release said at the time
            continue
        for k, line in enumerate(page.read_text().splitlines(), 1):
            found += [f"{page.relative_to(DOCS)}:{k}: {m.group(0)}" for m in LABEL.finditer(line)]
    assert not found, "\n".join(found[:20])
