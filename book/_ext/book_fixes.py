"""Two small fixes of the rendered HTML, local to this book.

1. Give collapsible proofs a title bar, so that they fold like solutions.
sphinx-proof renders ``{prf:proof}`` as an admonition whose text starts with
"Proof." but without a title element. sphinx-togglebutton folds an admonition
with the ``dropdown`` class under its title, and stops with a JavaScript error
on the first one that has none -- which leaves every later dropdown of the
page (solutions included) open. This extension moves the "Proof." label of
each dropdown proof into a real title.

2. Load each inline script once per page. In a Jupyter Book build the
configuration scripts of sphinx-thebe and sphinx-togglebutton reach the page
twice; the second copy of sphinx-thebe's redeclares a ``const`` and raises a
JavaScript error on every page.
"""

from docutils import nodes


def _titled_proofs(app, doctree):
    for admonition in doctree.findall(nodes.admonition):
        classes = admonition.get("classes", [])
        if "proof" not in classes or "dropdown" not in classes:
            continue
        if admonition.children and isinstance(admonition.children[0], nodes.title):
            continue
        label = "Proof"
        for text in admonition.findall(nodes.Text):
            value = str(text)
            if value.startswith("Proof. "):
                text.parent.replace(text, nodes.Text(value[len("Proof. "):]))
            break
        admonition.insert(0, nodes.title("", label))


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


def setup(app):
    app.connect("doctree-read", _titled_proofs)
    # early: html-page-context stops at the first handler that returns a template
    app.connect("html-page-context", _unique_scripts, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
