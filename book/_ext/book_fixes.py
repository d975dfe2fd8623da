"""Two small fixes of the rendered HTML, local to this book.

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

2. Load each inline script once per page. In a Jupyter Book build the
configuration scripts of sphinx-thebe and sphinx-togglebutton reach the page
twice; the second copy of sphinx-thebe's redeclares a ``const`` and raises a
JavaScript error on every page.
"""

from docutils import nodes


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
