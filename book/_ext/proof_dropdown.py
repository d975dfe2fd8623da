"""Give collapsible proofs a title bar, so that they fold like solutions.

sphinx-proof renders ``{prf:proof}`` as an admonition whose text starts with
"Proof." but without a title element. sphinx-togglebutton folds an admonition
with the ``dropdown`` class under its title, and stops with a JavaScript error
on the first one that has none -- which leaves every later dropdown of the
page (solutions included) open. This extension moves the "Proof." label of
each dropdown proof into a real title.
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


def setup(app):
    app.connect("doctree-read", _titled_proofs)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
