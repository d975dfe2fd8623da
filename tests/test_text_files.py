"""No control characters in the sources, docs and chapters.

A TeX command written in a plain (non-raw) Python string loses its backslash
to an escape: ``"\\varepsilon"`` typed as ``"\varepsilon"`` becomes a vertical
tab followed by ``arepsilon``, ``"\\right"`` a carriage return and ``ight``.
The rendered page then shows garbage where a formula was. Every text file of
the repository, and every cell of every chapter, is scanned for such
characters (tabs included: the code is indented with spaces).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")


def _texts():
    for pattern in ("perfpriv/**/*.py", "tests/*.py", "benchmarks/*.py", "book/*.md", "book/_ext/*.py", "*.md",
                    "*.yml", ".ci/run"):
        for path in ROOT.glob(pattern):
            yield str(path.relative_to(ROOT)), path.read_bytes().decode("utf-8")
    for path in sorted(ROOT.glob("book/*.ipynb")):
        for k, cell in enumerate(json.loads(path.read_text())["cells"]):
            yield f"{path.relative_to(ROOT)} cell {k}", "".join(cell["source"])


def test_no_control_characters_in_sources_docs_or_chapters():
    bad = []
    for name, text in _texts():
        for m in CONTROL.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            bad.append(f"{name}:{line}: {m.group()!r} in {text[max(0, m.start() - 20):m.start() + 20]!r}")
    assert not bad, "\n".join(bad[:20])


def test_the_scan_sees_an_escaped_tex_command():
    assert CONTROL.search("$\varepsilon$") and CONTROL.search("\right)") and not CONTROL.search(r"$\varepsilon$")


def test_the_bibliography_parses_and_every_entry_has_a_year():
    # a merge once left two entries unclosed: the book build then fails at its first page
    from pybtex.database import parse_file

    db = parse_file(str(ROOT / "book" / "references.bib"))
    assert len(db.entries) >= 10
    assert all("year" in entry.fields for entry in db.entries.values())
