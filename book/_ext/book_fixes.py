"""Small fixes of the rendered HTML, local to this book.

1. Give collapsible proofs a title bar and an id of their own, so that they
fold like solutions. sphinx-proof renders ``{prf:proof}`` as an admonition
whose text starts with "Proof." but without a title element, and gives every
proof the same id, ``proof``. sphinx-togglebutton folds an admonition with the
``dropdown`` class under its title: it stops with a JavaScript error on the
first one that has none -- which leaves every later dropdown of the page
(solutions included) open -- and it finds an admonition's button by the
admonition's id, so with repeated ids it folds and unfolds the first proof
once per proof and leaves the others open. This extension moves the "Proof."
label of each dropdown proof into a real title and numbers the proofs' ids
(``proof-1``, ``proof-2``, ...), and likewise the ids that sphinx-proof and
sphinx-exercise repeat on the body of every theorem, exercise and solution
(``proof-content``, ``exercise-content``, ``solution-content``), so that ids
are unique on every page.

2. Number results and exercises by chapter, and show the paper's own number apart.
sphinx-proof numbers every lemma, theorem, ... of the book in one sequence
("Lemma 14"), and a title that names the paper's result then reads "Lemma 14
(Cumulative error over a finite horizon (paper, Lemma 9))": two numbers that
look alike, in nested parentheses. Here every result and exercise of chapter N
is numbered N.1, N.2, ... (appendix A: A.1, ...), in the page and in every
cross-reference, so a book number never looks like the paper's; and a title
that ends with "(paper, X)" loses that ending, which is shown instead as a
tag "paper: X" after the title (class ``paper-ref``, styled in
``book/_static/perfpriv.css``).

3. Load each inline script once per page. In a Jupyter Book build the
configuration scripts of sphinx-thebe and sphinx-togglebutton reach the page
twice; the second copy of sphinx-thebe's redeclares a ``const`` and raises a
JavaScript error on every page.

4. Give the bibliography roles that assistive technology accepts. docutils
writes the list of citations as ``role="list"`` holding ``role="doc-biblioentry"``
entries: a role that ARIA 1.2 deprecates, not allowed on a ``div``, and not a
list item, so the list has children it does not allow (axe-core's
``aria-required-children``, critical). Each entry becomes a ``listitem``.

5. Document the constants that a package of the library reference takes from
its private submodules (``perfpriv.experiments.GAP_PROBABILITIES``, defined in
``perfpriv/experiments/_gaps.py``): autodoc reads a constant's ``#:`` comment in
the module it documents, where an import has none, and falls back on the
docstring of the value's type (``dict``). Their ``.. autodata::`` entries
(``book/_templates/autosummary/module.rst``) get the comment of the private
submodule that defines them.
"""

import importlib
import pkgutil
import re

from docutils import nodes
from sphinx.pycode import ModuleAnalyzer


_REPEATED_IDS = ("proof-content", "exercise-content", "solution-content")


def _number_repeated_ids(doctree):
    seen = dict.fromkeys(_REPEATED_IDS, 0)
    for node in doctree.findall(nodes.Element):
        ids = node.get("ids", [])
        for k, name in enumerate(ids):
            if name in seen:
                seen[name] += 1
                ids[k] = f"{name}-{seen[name]}"


def _titled_proofs(app, doctree):
    _number_repeated_ids(doctree)
    _paper_tags(doctree)
    count = 0
    for admonition in doctree.findall(nodes.admonition):
        classes = admonition.get("classes", [])
        if "proof" not in classes or "dropdown" not in classes:
            continue
        count += 1
        admonition["ids"] = [f"proof-{count}" if i == "proof" else i for i in admonition.get("ids", [])]
        if admonition.children and isinstance(admonition.children[0], nodes.title):
            continue
        label = "Proof"
        for text in admonition.findall(nodes.Text):
            value = str(text)
            if value.startswith("Proof. "):
                text.parent.replace(text, nodes.Text(value[len("Proof. "):]))
            break
        admonition.insert(0, nodes.title("", label))


_PAPER_REF = re.compile(r"\s*\(paper[,:] ([^()]*(?:\([^()]*\)[^()]*)*)\)(\)?)\s*$")   # "(paper, X)" or "(paper: X)"
#: enumerable node types numbered by chapter: the results of sphinx-proof and the exercises
_NUMBERED_BY_CHAPTER = {"theorem", "lemma", "definition", "remark", "conjecture", "corollary", "algorithm",
                        "criterion", "example", "property", "observation", "proposition", "assumption",
                        "axiom", "notation", "exercise"}


def chapter_prefix(docname: str):
    """Chapter number of a page (``book/04_gaussian_case`` -> 4, ``book/appendix_a_x`` -> "A"), or None."""
    match = re.match(r"book/(\d\d)_", docname)
    if match:
        return int(match.group(1))
    match = re.match(r"book/appendix_([a-z])_", docname)
    return match.group(1).upper() if match else None


def _paper_tags(doctree):
    """Move a trailing "(paper, X)" of a result's title into a "paper: X" tag after the title."""
    for title in doctree.findall(nodes.title):
        parent = title.parent
        if parent is None or "label" not in parent.attributes or not title.children:
            continue
        last = title.children[-1]
        if not isinstance(last, nodes.Text):
            continue
        match = _PAPER_REF.search(str(last))
        if not match:
            continue
        kept = str(last)[:match.start()] + (match.group(2) or "")
        title.replace(last, nodes.Text(kept))
        title += nodes.inline("", f"paper: {match.group(1)}", classes=["paper-ref"])


def _number_by_chapter(app, env):
    """Renumber results and exercises N.1, N.2, ... within chapter N (after Sphinx's global count)."""
    changed = []
    for docname, types in env.toc_fignumbers.items():
        prefix = chapter_prefix(docname)
        if prefix is None:
            continue
        for figtype, numbers in types.items():
            if figtype not in _NUMBERED_BY_CHAPTER:
                continue
            for k, node_id in enumerate(sorted(numbers, key=lambda i: numbers[i]), 1):
                if numbers[node_id] != (prefix, k):
                    numbers[node_id] = (prefix, k)
                    changed.append(docname)
    return sorted(set(changed))


def _unique_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        # an inline script may be registered once with filename None and once with ""
        key = (getattr(script, "filename", None) or None,
               tuple(sorted((k, str(v)) for k, v in getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique


def _bibliography_roles(app, pagename, templatename, context, doctree):
    body = context.get("body")
    if body and 'role="doc-biblioentry"' in body:
        context["body"] = body.replace('role="doc-biblioentry"', 'role="listitem"')


def _comment_of_private_submodule(app, what, name, obj, options, lines):
    package, _, attribute = name.rpartition(".")
    if what != "data" or not package.startswith("perfpriv."):
        return
    module = importlib.import_module(package)
    if not hasattr(module, "__path__") or ("", attribute) in ModuleAnalyzer.for_module(package).find_attr_docs():
        return
    for info in pkgutil.iter_modules(module.__path__):
        if info.name.startswith("_"):
            comments = ModuleAnalyzer.for_module(f"{package}.{info.name}").find_attr_docs()
            if ("", attribute) in comments:
                lines[:] = list(comments[("", attribute)])
                return


def setup(app):
    # after napoleon (priority 500), which would read "text: more text" as a type and a description
    app.connect("autodoc-process-docstring", _comment_of_private_submodule, priority=600)
    app.connect("doctree-read", _titled_proofs)
    # after Sphinx has counted the figures and results of every page (priority 500)
    app.connect("env-get-updated", _number_by_chapter, priority=900)
    # early: html-page-context stops at the first handler that returns a template
    app.connect("html-page-context", _unique_scripts, priority=100)
    app.connect("html-page-context", _bibliography_roles, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
