"""The library reference: one page per public module of ``perfpriv``, generated at every build.

Nothing to update by hand when modules come and go: every module whose dotted
name has no component starting with ``_`` gets a page ``book/api/<name>.md``
(written when the build starts, not committed; ``_toc.yml`` includes them with
a glob), and ``book/api.md`` lists them with the first line of their
docstring (directive ``perfpriv-modules``). :data:`ORDER` only sets the order
of that list and which page documents an object that several modules export
(the first one in the order; the others list it with a link).

A module page documents its public names (its ``__all__`` when it has one,
imported members included), and the constants it exports from private
submodules with their ``#:`` comments, which autodoc does not find through
the import.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx import addnodes

PACKAGE = "perfpriv"
#: Preferred order of the reference (modules not listed follow, alphabetically).
ORDER = ("bernoulli", "gaussian", "projected", "leakage", "behaviour", "engine", "dynamics", "optimize",
         "schedules", "sweep", "feedback", "regression", "gradient", "performative", "experiments", "plots",
         "widgets", "exercises", "notebook", "cli")
FOLDER = "book/api"


def public_modules(package: str = PACKAGE) -> list[str]:
    """Dotted names of the public modules of ``package`` (every component without a leading ``_``), in :data:`ORDER`."""
    root = importlib.import_module(package)
    names = []
    for info in pkgutil.walk_packages(root.__path__, prefix=package + "."):
        parts = info.name.split(".")[1:]
        if any(p.startswith("_") for p in parts):
            continue
        names.append(info.name)
    rank = {f"{package}.{name}": k for k, name in enumerate(ORDER)}
    return sorted(names, key=lambda n: (rank.get(n, len(rank)), n))


def exported(module) -> dict:
    """Public names of ``module``: its ``__all__``, else public attributes defined in it (or its private submodules)."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, obj in vars(module).items() if not n.startswith("_")
                 and getattr(obj, "__module__", module.__name__).startswith(module.__name__)
                 and not inspect.ismodule(obj)]
    return {n: getattr(module, n) for n in names if hasattr(module, n)}


def _summary(module) -> str:
    doc = inspect.getdoc(module) or ""
    return doc.strip().splitlines()[0].rstrip(".") if doc.strip() else ""


def _is_constant(obj) -> bool:
    return not (inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj) or callable(obj))


def _constant_doc(module, name):
    """The ``#:`` comment of ``name`` in the private submodule of ``module`` that defines it."""
    from sphinx.pycode import ModuleAnalyzer

    candidates = [module.__name__] + [f"{module.__name__}.{info.name}" for info in
                                      pkgutil.iter_modules(getattr(module, "__path__", []))]
    for candidate in candidates:
        try:
            docs = ModuleAnalyzer.for_module(candidate).find_attr_docs()
        except Exception:   # noqa: BLE001 - a module without source: no comment
            continue
        if ("", name) in docs:
            return [line for line in docs[("", name)] if line.strip()]
    return []


def page(name: str, owners: dict) -> str:
    """The MyST source of the page of module ``name``."""
    module = importlib.import_module(name)
    names = exported(module)
    here = [n for n in names if owners.get((n, id(names[n]))) == name]
    elsewhere = {n: owners[(n, id(names[n]))] for n in names if n not in here and (n, id(names[n])) in owners}
    options = ["   :members:"]
    if hasattr(module, "__all__"):
        options.append("   :imported-members:")
    if elsewhere:
        options.append("   :exclude-members: " + ", ".join(sorted(elsewhere)))
    body = [f"# `{name}`", "", "```{eval-rst}", f".. automodule:: {name}", *options]
    if not here:
        body.append("   :no-index:")
    for n in here:
        obj = names[n]
        if _is_constant(obj) and getattr(module, "__path__", None):   # a package: constants come from its submodules
            doc = _constant_doc(module, n)
            if doc:
                body += ["", f".. py:data:: {name}.{n}", ""] + [f"   {line}" for line in doc]
    body.append("```")
    if elsewhere:
        body += ["", "Also available here, and documented with the module that the chapters import them from:", ""]
        body += [f"- `{n}`: {{py:obj}}`{owners_name}.{n} <{owners_name}.{n}>`" for n, owners_name in sorted(elsewhere.items())]
    return "\n".join(body) + "\n"


def owners_of(modules: list[str]) -> dict:
    """(name, id(object)) -> the first module in ``modules`` that exports it."""
    owners = {}
    for name in modules:
        for n, obj in exported(importlib.import_module(name)).items():
            owners.setdefault((n, id(obj)), name)
    return owners


def write_pages(srcdir: Path) -> list[Path]:
    """Write one page per public module into ``srcdir/book/api`` (unchanged files left alone); remove stale ones."""
    folder = Path(srcdir) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    modules = public_modules()
    owners = owners_of(modules)
    written = []
    for name in modules:
        path = folder / f"{name}.md"
        text = page(name, owners)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        written.append(path)
    for stale in set(folder.glob("*.md")) - set(written):
        stale.unlink()
    return written


class ModuleList(Directive):
    """``perfpriv-modules``: a list of links to the module pages, with their one-line summaries."""

    has_content = False

    def run(self):
        items = nodes.bullet_list()
        for name in public_modules():
            module = importlib.import_module(name)
            ref = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget=f"/{FOLDER}/{name}",
                                        refexplicit=True, refwarn=True)
            ref += nodes.literal(name, name)
            para = nodes.paragraph("", "", ref)
            summary = _summary(module)
            if summary:
                para += nodes.Text(f": {summary}.")
            items += nodes.list_item("", para)
        return [items]


def _generate(app, config):
    write_pages(Path(app.srcdir))


def setup(app):
    app.connect("config-inited", _generate)
    app.add_directive("perfpriv-modules", ModuleList)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
