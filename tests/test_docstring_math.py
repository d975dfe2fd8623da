"""The docstrings write their formulas as ``:math:`` roles, which the library reference renders as math.

A formula of a docstring is reStructuredText math in the source
(``:math:`N_{t-1}```, ``:math:`C(\\gamma) = 1 + r - (q + r) p_{\\tau}```), as
numpy and scipy write theirs: the reference renders it with MathJax and
``help()`` shows the TeX. These checks keep it so: no script left as raw TeX
in running text, no TeX command outside a role, no control character from a
backslash in a non-raw string; and (slow tier) the rendered pages show a few
of those formulas as math.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import perfpriv

ROOT = Path(__file__).resolve().parents[1]


def _private(name: str) -> bool:
    return any(part.startswith("_") for part in name.split("."))


def _public_docstrings():
    """(name, docstring) of every module, function, class and method of the package the reference documents.

    A public module's own names, and the names of its ``__all__`` that come from a private module
    (``perfpriv.optimize``'s functions live in ``optimize._gamma`` ...): its page documents them too
    (``:imported-members:``).
    """
    seen = set()
    for info in pkgutil.walk_packages(perfpriv.__path__, "perfpriv."):
        if _private(info.name):
            continue                                 # private modules have no page
        module = importlib.import_module(info.name)
        yield info.name, inspect.getdoc(module) or ""
        imported = {name: getattr(module, name) for name in getattr(module, "__all__", ())}
        for name, obj in [*vars(module).items(), *imported.items()]:
            owner = getattr(obj, "__module__", None) or ""
            if (name.startswith("_") or id(obj) in seen or inspect.ismodule(obj)
                    or not (owner == info.name or (name in imported and owner.startswith("perfpriv.")
                                                   and _private(owner)))):
                continue
            seen.add(id(obj))
            yield f"{info.name}.{name}", inspect.getdoc(obj) or ""
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if not attr.startswith("_") and callable(getattr(member, "__func__", member)):
                        yield f"{info.name}.{name}.{attr}", inspect.getdoc(member) or ""


def _running_text(doc: str):
    """Lines of ``doc`` outside doctests, directives and literal blocks, with roles and literals removed."""
    block, in_doctest = None, False
    for line in doc.splitlines():
        stripped, indent = line.strip(), len(line) - len(line.lstrip())
        if block is not None and (not stripped or indent > block):
            continue                                  # math and code blocks are TeX and code by design
        block = None
        if stripped.startswith(">>>"):
            in_doctest = True
        elif not stripped:
            in_doctest = False
        if in_doctest or stripped.startswith(".. "):
            if stripped.startswith(".. ") and "::" in stripped:
                block = indent
            continue
        if stripped.endswith("::"):
            block = indent
        yield re.sub(r":\w+:`[^`]*`|``[^`]*``|`[^`]*`_?", "", line)


def test_no_docstring_leaves_a_script_as_raw_tex():
    """``N_{t-1}`` or ``gamma^{2}`` in running text shows as raw TeX: it belongs in a ``:math:`` role."""
    raw = re.compile(r"[A-Za-z]_\{|\^\{")
    hits = [f"{name}: {line.strip()}" for name, doc in _public_docstrings()
            for line in _running_text(doc) if raw.search(line)]
    assert hits == []


def test_no_docstring_writes_a_subscript_as_plain_text():
    """``μ_t``, ``θ_PS`` or ``b_ij`` in running text shows an underscore: a formula belongs in a ``:math:`` role.

    A symbol (one letter, Latin or Greek, an accent allowed) with a subscript of at most three characters;
    names such as ``n_jobs`` are longer, and numpydoc's ``m_sd : float`` item lines are names, not formulas.
    """
    script = re.compile(r"(?<![\w\\])[A-Za-zΑ-Ωα-ωℓ][\u0300-\u036f]?_(?:[A-Za-z0-9Α-Ωα-ω]{1,3}|\{)(?!\w)")
    item = re.compile(r"^\s*\w+(?:, \w+)* : ")
    hits = [f"{name}: {line.strip()}" for name, doc in _public_docstrings()
            for line in _running_text(doc) if not item.match(line) and script.search(line)]
    assert hits == []


def test_no_docstring_has_a_tex_command_outside_math():
    r"""``\gamma`` outside a role renders as a backslash and a word (or a control character in a non-raw string)."""
    command = re.compile(r"\\(?:[A-Za-z]{2,}|[,;!])")
    hits = [f"{name}: {line.strip()}" for name, doc in _public_docstrings()
            for line in _running_text(doc) if command.search(line)]
    assert hits == []


def test_formulas_are_math_roles_in_the_source():
    from perfpriv import bernoulli, engine

    assert r":math:`N_t = \operatorname{bound}(N_{t-1}\, C(\ell_t; N_{t-1}))`" in engine.__doc__
    assert r":math:`X \sim B(\mu_t)`" in inspect.getdoc(bernoulli)
    with_math = sum(":math:`" in doc for _, doc in _public_docstrings())
    assert with_math > 200


def test_no_library_source_holds_control_characters():
    """A TeX backslash in a non-raw string (``"\\frac"``) turns into a control character (form feed ...)."""
    root = ROOT / "perfpriv"
    bad = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
    hits = [f"{path.relative_to(root)}:{number}"
            for path in sorted(root.rglob("*.py"))
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if bad.search(line)]
    assert hits == []


def test_no_docstring_or_documented_constant_holds_a_substitution_reference():
    """``|x|`` in reStructuredText is a substitution: the build fails on "Undefined substitution".

    ``#: The largest |coordinate| of ...`` above a public constant failed the book's build; write
    ``abs(x)``, ``‖x‖``, ``:math:`|x|``` or words. Docstrings and the ``#:`` comments of every module are
    scanned, code, math and doctests left out.
    """
    substitution = re.compile(r"(?<![|\w`\\])\|[A-Za-z_][\w ]*\|(?![|\w`])")
    root = ROOT / "perfpriv"
    hits = [f"perfpriv/{path.relative_to(root)}:{number}"
            for path in sorted(root.rglob("*.py"))
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if line.lstrip().startswith("#:") and substitution.search(re.sub(r":\w+:`[^`]*`|``[^`]*``", "", line))]
    hits += [f"{name}: {line.strip()}" for name, doc in _public_docstrings()
             for line in _running_text(doc) if substitution.search(line)]
    assert hits == []


@pytest.mark.slow
@pytest.mark.parametrize("page, formula", [
    ("perfpriv.engine", r"\(N_{t-1}\)"),
    ("perfpriv.bernoulli", r"\(X \sim B(\mu_t)\)"),
    ("perfpriv.dynamics", r"\(p_{\tau}\)"),
    ("perfpriv.leakage", r"\(\|\bar z - μ_{\bar z}\| \ge 0\)"),
    ("perfpriv.behaviour", r"\(s_{k-1}\)"),
])
def test_the_reference_renders_the_docstrings_formulas_as_math(page, formula, html_dir):
    html = (html_dir / "book" / "api" / f"{page}.html").read_text(encoding="utf-8")
    assert f'<span class="math notranslate nohighlight">{formula}</span>' in html
