"""The book's own result numbers in the prose of chapters 06-10 and the appendices, the papers' numbers apart.

The book numbers its results by chapter (Lemma 4.4, Algorithm 3.1, Theorem 6.1;
``book/_ext/book_fixes.py``). A bare "Lemma 7", "eq. 13", "Fig. 4" or
"Algorithm 1" in the prose is a number of the source paper, and a reader takes
it for the book's: the prose writes the book's number and, where it helps,
the paper's in a tag, "Lemma 4.4 (paper: Lemma 7)", or names it as the
paper's, "the paper's eq. 13". ``tests/test_book_references.py`` checks this
line by line for chapters 01-05; this file extends it to chapters 06-10 and
the appendices, paragraph by paragraph (a reference broken over two lines, "the
paper's\\neq. 6", is read whole), with figures, algorithms and assumptions as
well, and it checks two more things:

- every book-style number "Lemma 4.4" names a result the book has (counted
  from the ``prf:`` blocks of the chapters, in page order, by kind: the
  numbering of ``book_fixes``), unless it is another text's ("the P-FedAvg
  paper's Theorems 3.1-3.3");
- chapter 10 cites three papers, so there "the paper's" alone does not say
  which: a paper's number there names the source paper, the P-FedAvg paper
  or the FBi-RRM paper.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"

#: the pages this file checks (chapters 01-05 are checked by tests/test_book_references.py)
PAGES = sorted(p.name for p in BOOK.glob("*.ipynb") if re.match(r"(0[6-9]|1\d)_|appendix_[a-z]_", p.name))

#: the kinds of result the book numbers, as its prose names them -> the directive of sphinx-proof
KINDS = {"Lemma": "lemma", "Theorem": "theorem", "Proposition": "proposition", "Corollary": "corollary",
         "Definition": "definition", "Algorithm": "algorithm"}

#: a numbered reference without a chapter part: the paper's numbering ("Lemma 7", "eq. 13", "Fig. 3a",
#: "Algorithm 1."; not "Lemma 4.4")
PAPER_NUMBER = re.compile(
    r"\b(?:Lemmas?|Theorems?|Corollar(?:y|ies)|Remarks?|Propositions?|Definitions?|Assumptions?|Algorithms?|"
    r"Figs?\.|Figures?|[Ee]qs?\.|[Ee]quations?)\s*\(?\d+[a-z]?(?!\.?\d)")
#: a book-style number ("Lemma 4.4", "Algorithm 3.1", "Proposition A.1")
BOOK_NUMBER = re.compile(r"\b(Lemma|Theorem|Proposition|Corollary|Definition|Algorithm)s?\s+((?:\d+|[A-Z])\.\d+)")
#: what names a number as the paper's: "the paper's eq. 13", "(paper: Lemma 7)", "the P-FedAvg paper's"
PAPER_TAG = re.compile(r"paper(?:'s|:|,)?\s*$")
#: chapter 10's papers (it cites three), one of which a paper's number there must name
NAMED_PAPER = re.compile(r"(?:source|P-FedAvg|FBi-RRM) paper(?:'s|:|,)?\s*$")
#: a list of numbers after a tagged first one: "the paper's Figs. 4 and 5", "(paper: Lemmas 5, 6 and 7)"
LIST_TAIL = re.compile(r"paper(?:'s|:|,)?\s+(?:Lemmas?|Theorems?|Corollar\w+|Remarks?|Figs?\.|Figures?|"
                       r"[Ee]qs?\.|Algorithms?|and|[\s\d,–-]|[a-z](?=[\s,]))*$")


def _cells(name):
    return json.loads((BOOK / name).read_text(encoding="utf-8"))["cells"]


def prose(name):
    """(cell index, paragraph) of the markdown of a page, code blocks left out, lines joined."""
    for k, cell in enumerate(_cells(name)):
        if cell["cell_type"] != "markdown":
            continue
        kept, code = [], False
        for line in "".join(cell["source"]).splitlines():
            stripped = line.strip()
            if code:
                code = stripped != "```"
                continue
            # a code block: ```python, ```bash, ```{code-cell}...; a directive (```{prf:lemma}) is prose
            if re.match(r"```+\s*(?:\{code|[A-Za-z])", stripped):
                code = True
                continue
            kept.append(line)
        for paragraph in re.split(r"\n\s*\n", "\n".join(kept)):
            text = " ".join(paragraph.split())
            if text:
                yield k, text


def book_numbers() -> set[str]:
    """Every number the book gives a result ("Lemma 4.4"), counted as ``book_fixes`` numbers them."""
    numbers = set()
    for path in sorted(BOOK.glob("*.ipynb")):
        match = re.match(r"(\d\d)_|appendix_([a-z])_", path.name)
        if not match:
            continue
        chapter = str(int(match.group(1))) if match.group(1) else match.group(2).upper()
        counts: dict[str, int] = {}
        for cell in _cells(path.name):
            if cell["cell_type"] != "markdown":
                continue
            for kind in re.findall(r"^`{3,}\{prf:(\w+)\}", "".join(cell["source"]), flags=re.M):
                if kind in KINDS.values():
                    counts[kind] = counts.get(kind, 0) + 1
                    word = next(w for w, d in KINDS.items() if d == kind)
                    numbers.add(f"{word} {chapter}.{counts[kind]}")
    return numbers


def untagged_paper_numbers(name, paragraphs=None):
    """(cell, excerpt) of each paper number that the prose does not name as a paper's."""
    multi = name.startswith("10_")
    tag = NAMED_PAPER if multi else PAPER_TAG
    for k, text in (paragraphs if paragraphs is not None else prose(name)):
        for m in PAPER_NUMBER.finditer(text):
            before, after = text[max(0, m.start() - 40):m.start()], text[m.end():m.end() + 14]
            if tag.search(before) or re.search(r"\(" + tag.pattern, before):
                continue
            if not multi and after.startswith((" of the paper", " in the paper")):
                continue
            if LIST_TAIL.search(text[:m.start()]) and tag.search(_list_head(text[:m.start()])):
                continue
            yield k, text[max(0, m.start() - 50):m.end() + 20]


def _list_head(text):
    """The text before the first number of a list such as "the paper's Figs. 4 and 5, " (for its tag)."""
    head = re.search(r"(?:Lemmas?|Theorems?|Corollar\w+|Remarks?|Figs?\.|Figures?|[Ee]qs?\.|Algorithms?)"
                     r"(?:[\s\d,–-]|and|[a-z](?=[\s,]))*$", text)
    return text[:head.start()] if head else text


def unknown_book_numbers(name, known, paragraphs=None):
    """(cell, excerpt) of each "Lemma N.k" that is not a result of the book nor tagged as another text's."""
    for k, text in (paragraphs if paragraphs is not None else prose(name)):
        for m in BOOK_NUMBER.finditer(text):
            if f"{m.group(1)} {m.group(2)}" in known:
                continue
            if re.search(r"paper(?:'s|:|,)?\s*$|et al\.,? (?:\d{4},? )?$", text[max(0, m.start() - 40):m.start()]):
                continue
            yield k, text[max(0, m.start() - 50):m.end() + 20]


@pytest.fixture(scope="module")
def known():
    return book_numbers()


_NOT_YET = pytest.mark.xfail(strict=True, reason=(
    "chapter 06's prose still uses paper numbers as the book's: 'the sufficient threshold ... of Theorem 2' "
    "(cell 6: Theorem 5.1), 'Algorithm 1' for Algorithm 3.1 (cells 0-58), bare 'Fig. 4'/'Fig. 5' (cells 21-30); "
    "once the chapter is fixed this mark goes (strict: the test then fails until it does)"))


@pytest.mark.parametrize("name", [pytest.param(p, marks=_NOT_YET) if p.startswith("06_") else p for p in PAGES])
def test_the_prose_uses_the_books_numbers_and_names_the_papers(name):
    found = list(untagged_paper_numbers(name))
    assert not found, f"{name}: paper numbers used as the book's:\n" + "\n".join(
        f"  cell {k}: ...{t}..." for k, t in found)


@pytest.mark.parametrize("name", PAGES)
def test_every_book_number_of_the_prose_names_a_result_of_the_book(name, known):
    found = list(unknown_book_numbers(name, known))
    assert not found, f"{name}: numbers that name no result of the book:\n" + "\n".join(
        f"  cell {k}: ...{t}..." for k, t in found)


def test_the_checks_see_the_faults_they_guard_against(known):
    # the book's own numbering, counted from the chapters
    assert {"Lemma 4.4", "Theorem 6.1", "Algorithm 3.1", "Algorithm 10.1", "Proposition A.1"} <= known
    assert "Lemma 4.9" not in known

    def flagged(text, name="07_x.ipynb"):
        return [t for _, t in untagged_paper_numbers(name, [(0, text)])]

    # found: bare paper numbers, at the end of a sentence too, and over a joined line break
    for text in ("reproduce the expected error of Lemma 3.", "the growth factor (eq. 13) and", "the objective of Fig. 4,",
                 "exactly as Algorithm 1 and the simulators", "Lemma 7's form gives", "records of Assumption 1"):
        assert flagged(text), text
    # accepted: the book's numbers, tagged paper numbers and lists after a tag
    for text in ("Lemma 4.4 (paper: Lemma 7) gives", "the paper's eq. 13", "Theorem 1 of the paper, written",
                 "the paper's Figs. 4 and 5", "Algorithm 3.1 (paper: Algorithm 1);", "the paper's Lemmas 5, 6 and 7"):
        assert not flagged(text), text
    # chapter 10 cites three papers: "the paper's" alone does not say which
    assert flagged("as in the paper's Figure 6.", "10_x.ipynb")
    assert not flagged("as in the P-FedAvg paper's Figure 6.", "10_x.ipynb")
    assert not flagged("the private mean of the source paper's eq. 6", "10_x.ipynb")
    # a book number that names no result, unless it is another text's
    assert [t for _, t in unknown_book_numbers("x", known, [(0, "as Lemma 4.9 shows")])]
    assert not list(unknown_book_numbers("x", known, [(0, "the P-FedAvg paper's Theorems 3.1-3.3")]))
    # the scan reads the pages it is meant to
    assert any(p.startswith("10_") for p in PAGES) and any(p.startswith("appendix_a_") for p in PAGES)
    assert any(p.startswith("appendix_b_") for p in PAGES)
    assert sum(1 for p in PAGES for _ in prose(p)) > 200
