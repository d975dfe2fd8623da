"""The prose's code stays true to the library: names resolve, snippets bind.

The chapters are executed, so their code cells cannot drift from perfpriv.
Their prose can: an inline name such as ``optimize.optimal_schedule`` or a
paper-scale snippet in a ```` ```python ```` block of a markdown cell is never
run (the snippets take hours by design). A renamed function or a parameter
made keyword-only then leaves the book with code that fails for a reader who
copies it. These tests resolve every inline ``module.name`` whose first part
is a perfpriv module, parse every snippet, and bind every call of a perfpriv
function in it to the function's signature (``inspect.Signature.bind_partial``
with the call's positional count and keyword names: nothing runs).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import re
from pathlib import Path

import pytest

import perfpriv

ROOT = Path(__file__).resolve().parents[1]
#: perfpriv's public modules by the names the chapters import them under (``from perfpriv import optimize``)
MODULES = {info.name: f"perfpriv.{info.name}" for info in pkgutil.iter_modules(perfpriv.__path__)
           if not info.name.startswith("_")}
INLINE = re.compile(r"(?<![`\w])`(?:perfpriv\.)?([a-z_][a-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
SNIPPET = re.compile(r"```python\n(.*?)```", re.S)


def _markdown():
    """(where, text) of every markdown cell of the chapters, of the book's pages and of the README."""
    for path in sorted(ROOT.glob("book/*.ipynb")):
        for k, cell in enumerate(json.loads(path.read_text())["cells"]):
            if cell["cell_type"] == "markdown":
                yield f"{path.name} cell {k}", "".join(cell["source"])
    for path in sorted(ROOT.glob("book/*.md")) + [ROOT / "README.md"]:
        yield path.name, path.read_text()


def _resolve(module, attrs):
    """The object ``perfpriv.<module>.<attrs...>``; AttributeError names the missing part."""
    obj = importlib.import_module(MODULES[module])
    for name in attrs:
        obj = getattr(obj, name)
    return obj


def _dotted(node):
    """``a.b.c`` of an attribute chain rooted at a name, as a list; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id] + parts[::-1]
    return None


def inline_names():
    for where, text in _markdown():
        for m in INLINE.finditer(text):
            if m.group(1) in MODULES:
                yield where, m.group(1), m.group(2).lstrip(".").split(".")


def snippet_calls():
    """(where, snippet source, call node, dotted name) of every perfpriv call in the markdown snippets."""
    for where, text in _markdown():
        for m in SNIPPET.finditer(text):
            source = m.group(1)
            tree = ast.parse(source)
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    name = _dotted(node.func)
                    if name and name[0] in MODULES and len(name) > 1:
                        yield where, source, node, name


def test_every_inline_perfpriv_name_of_the_prose_exists():
    missing = []
    for where, module, attrs in inline_names():
        try:
            _resolve(module, attrs)
        except AttributeError:
            missing.append(f"{where}: `{module}.{'.'.join(attrs)}`")
    assert not missing, "names in the prose that perfpriv does not have:\n" + "\n".join(missing)


def test_every_snippet_of_the_prose_parses_and_binds_to_the_signatures():
    bad = []
    for where, _source, call, name in snippet_calls():
        try:
            func = _resolve(name[0], name[1:])
        except AttributeError:
            bad.append(f"{where}: {'.'.join(name)} does not exist")
            continue
        try:
            signature = inspect.signature(func)
        except (TypeError, ValueError):     # a builtin without a signature: nothing to bind
            continue
        if any(isinstance(a, ast.Starred) for a in call.args):
            continue
        keywords = {k.arg: None for k in call.keywords if k.arg is not None}
        try:
            signature.bind_partial(*[None] * len(call.args), **keywords)
        except TypeError as err:
            bad.append(f"{where}: {ast.unparse(call)[:100]}: {err}")
    assert not bad, "snippets that would fail when a reader runs them:\n" + "\n".join(bad)


def test_the_checks_see_the_faults_they_guard_against():
    # the two faults a review found in chapter 07: a function under the wrong module, and a call that
    # passes keyword-only arguments by position (then q and r; here the horizon T)
    assert "optimal_schedule" not in dir(importlib.import_module("perfpriv.schedules"))
    with pytest.raises(AttributeError):
        _resolve("schedules", ["optimal_schedule"])
    call = ast.parse("optimize.optimal_schedule(mechanism, users, 50, **paper)").body[0].value
    signature = inspect.signature(_resolve("optimize", ["optimal_schedule"]))
    with pytest.raises(TypeError):
        signature.bind_partial(*[None] * len(call.args), **{k.arg: None for k in call.keywords if k.arg})
    # and the scans find what they scan for
    assert sum(1 for _ in inline_names()) > 50 and sum(1 for _ in snippet_calls()) > 10


#: a reference to a numbered result or equation whose number has no chapter part ("Lemma 7", "eq. 10",
#: "Corollaries 1-2"): the paper's numbering, which the book's prose names as the paper's
PAPER_NUMBER = re.compile(r"\b(?:Lemmas?|Theorems?|Corollar(?:y|ies)|Remarks?|Propositions?|Definitions?|eqs?\.)"
                          r"\s*\(?\d+(?![.\d])")
#: the pages that follow the paper result by result (chapters 01-05), and the pages that cite them
PAPER_PAGES = re.compile(r"^(?:0[1-5]_\w+\.ipynb|appendix_a_\w+\.ipynb|intro\.md|notation\.md)")


def paper_numbers_in_the_prose():
    """(where, line) of each paper-numbered reference that the prose does not mark as the paper's."""
    for where, text in _markdown():
        if not PAPER_PAGES.match(where):
            continue
        fence = False
        for line in text.splitlines():
            if line.startswith("```{code") or line.startswith("```python"):
                fence = True
            elif fence and line.startswith("```"):
                fence = False
            if fence:
                continue
            for m in PAPER_NUMBER.finditer(line):
                before, after = line[max(0, m.start() - 16):m.start()], line[m.end():m.end() + 14]
                if "paper" in before or after.startswith((" of the paper", " in the paper")):
                    continue
                # a list of the paper's results after the first one ("the paper's Lemmas 5, 6, 7 and 11")
                if re.search(r"paper(?:'s|:|,)\s+(?:Lemmas?|Theorems?|Corollar\w+|Remarks?|eqs?\.|and|[\s\d,–-])*$",
                             line[:m.start()]):
                    continue
                yield where, line.strip()


def test_the_prose_uses_the_books_numbers_and_tags_the_papers():
    # "Lemma 4.4" is the book's; "Lemma 7" alone reads as the book's numbering and points to the wrong
    # result: the paper's numbers appear only as "(paper: Lemma 7)", "the paper's Lemma 7" or "Lemma 7 of
    # the paper"
    found = list(paper_numbers_in_the_prose())
    assert not found, "paper numbers used as the book's:\n" + "\n".join(f"{w}: {t}" for w, t in found)
    assert not PAPER_NUMBER.search("Lemma 4.4 (paper: Lemma 7)".replace("(paper: Lemma 7)", ""))
    assert PAPER_NUMBER.search("Lemmas 6–8, eq. 10 and the Gaussian-DP reading")
