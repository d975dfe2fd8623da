"""Serve the book's scripts from the book itself, so that its pages render without a network.

A Jupyter Book page loads MathJax (formulas), require.js and the Jupyter
widgets HTML manager (the explorers' stored states) from public CDNs. With no
network (a classroom, a train, ``file://``) every formula then shows as raw
TeX and the explorers vanish. This extension copies the files those pages
load from ``node_modules/`` (installed by ``npm ci`` from the repository's
``package.json`` and ``package-lock.json``) into ``_static/offline/`` of the
build, and points Sphinx (``mathjax_path``) and MyST-NB (``nb_ipywidgets_js``)
at the copies. Nothing is fetched at build time or when a page is read.

A missing ``node_modules`` is a build warning (an error under ``-W``) that
says to run ``npm ci``: a book built without the files would silently need
the network again.

Two small scripts of ``book/_static`` complete the set-up:

* ``widgets-offline.js`` (between require.js and the widget manager) maps the
  widget manager's module name onto its folder, so that the fonts it loads
  resolve next to it, and gives the widget manager the MathJax 2 call it uses
  (``MathJax.Hub.Queue``) on top of MathJax 3, which the book loads;
* the theme's default colour mode is set in ``_config.yml``
  (``html_theme_options.default_mode``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)

#: Folder of the copies inside the build's ``_static``.
VENDOR = "offline"

#: What the pages load: (npm package, files or folders inside it, destination inside ``_static/offline``).
#: Licences: MathJax Apache-2.0 (its LICENSE is copied), require.js MIT (in the file's header), the
#: widget manager BSD-3-Clause (its bundled licences are copied); each package.json records the version.
#: MathJax: the TeX + MathML to CHTML component, its fonts and the parts it loads on demand
#: (TeX extensions, the menu, accessibility and speech), without the SVG output and other bundles.
ASSETS = (
    ("mathjax", ("es5/tex-mml-chtml.js", "es5/output/chtml", "es5/input", "es5/ui", "es5/a11y", "es5/sre",
                 "LICENSE", "package.json"), "mathjax"),
    ("requirejs", ("require.js", "package.json"), "requirejs"),
    ("@jupyter-widgets/html-manager", ("dist/embed-amd.js", "dist/*.woff2", "dist/*.woff",
                                       "dist/embed.js.LICENSE.txt", "package.json"), "html-manager"),
)

#: The page scripts, as paths relative to ``_static``.
MATHJAX = f"{VENDOR}/mathjax/tex-mml-chtml.js"
WIDGET_SCRIPTS = (f"{VENDOR}/requirejs/require.js", "widgets-offline.js", f"{VENDOR}/html-manager/embed-amd.js")


def _node_modules(app) -> Path:
    return Path(app.srcdir) / "node_modules"


def _configure(app, config):
    """Point MathJax and the widget scripts at the local copies."""
    config.mathjax_path = MATHJAX
    config.nb_ipywidgets_js = {path: {} for path in WIDGET_SCRIPTS}


def _strip_prefix(relative: str) -> str:
    """``es5/output/chtml`` -> ``output/chtml``; ``dist/embed-amd.js`` -> ``embed-amd.js``."""
    parts = Path(relative).parts
    return str(Path(*parts[1:])) if len(parts) > 1 and parts[0] in ("es5", "dist") else relative


def copy_assets(node_modules: Path, static: Path) -> list[Path]:
    """Copy :data:`ASSETS` from ``node_modules`` into ``static/offline``; return the files written.

    Raises ``FileNotFoundError`` naming the first missing package or file.
    """
    written = []
    for package, items, target in ASSETS:
        root = node_modules / package
        for item in items:
            sources = sorted(root.glob(item)) if "*" in item else [root / item]
            if not sources or not all(s.exists() for s in sources):
                raise FileNotFoundError(f"node_modules/{package}/{item} is missing")
            for source in sources:
                dest = static / VENDOR / target / _strip_prefix(str(source.relative_to(root)))
                if source.is_dir():
                    shutil.copytree(source, dest, dirs_exist_ok=True)
                    written.extend(p for p in dest.rglob("*") if p.is_file())
                else:
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(source, dest)
                    written.append(dest)
    return written


def missing(node_modules: Path) -> str | None:
    """The first package or file of :data:`ASSETS` missing from ``node_modules`` (None if complete)."""
    for package, items, _target in ASSETS:
        root = node_modules / package
        if not root.is_dir():
            return f"node_modules/{package}"
        for item in items:
            if not (any(root.glob(item)) if "*" in item else (root / item).exists()):
                return f"node_modules/{package}/{item}"
    return None


def _check(app):
    if app.builder.format != "html":
        return
    lack = missing(_node_modules(app))
    if lack:
        logger.warning(f"offline assets: {lack} is missing. Run `npm ci` in {app.srcdir} (it installs "
                       "MathJax, require.js and the widget manager from package-lock.json); without "
                       "them the built pages need the network to show formulas and explorers.")


def _copy(app, exception):
    if exception is None and app.builder.format == "html" and not missing(_node_modules(app)):
        copy_assets(_node_modules(app), Path(app.outdir) / "_static")


def setup(app):
    app.connect("config-inited", _configure, priority=100)
    app.connect("builder-inited", _check)
    app.connect("build-finished", _copy)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
