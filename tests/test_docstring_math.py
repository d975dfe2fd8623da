"""The library reference renders the docstrings' formulas as math and leaves code as code.

``book/_ext/docstring_math.py`` rewrites plain-text formulas of the
docstrings (``N_{t-1}``, ``C(gamma) = 1 + r - (q + r) p_tau``) as ``:math:``
roles when the reference is built. These cases come from the library's own
docstrings; the rendered pages are checked in ``test_rendered_book_html.py``.
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))

import docstring_math as dm  # noqa: E402


@pytest.mark.parametrize("line, expected", [
    ("a platform with ``N_{t-1}`` users", "a platform with :math:`N_{t-1}` users"),
    ("each user holds ``X ~ B(mu_t)`` and", r"each user holds :math:`X \sim B(\mu_t)` and"),
    ("kept with probability ``1/2 + beta``.", r"kept with probability :math:`1/2 + \beta`."),
    ("for C(gamma) = 1 + r - (q + r) p_tau (eq. 13),",
     r"for :math:`C(\gamma) = 1 + r - (q + r) p_{\tau}` (eq. 13),"),
    ("mean-field trajectories N_t = N_{t-1} C(gamma; N_{t-1}),",
     r"mean-field trajectories :math:`N_t = N_{t-1} C(\gamma; N_{t-1})`,"),
    ("averaged over trials (rounds with N_t >= 1), and", r"averaged over trials (rounds with :math:`N_t \ge 1`), and"),
    ("    :ivar kappa: kappa_{q,r}.", r"    :ivar kappa: :math:`\kappa_{q,r}`."),
    ("    * M = sqrt(||mu||^2 + Tr Sigma),", r"    * :math:`M = \sqrt{\|\mu\|^2 + \mathrm{Tr} \Sigma}`,"),
    ("P(χ²_{d−1} > t) = 2⁻⁶⁴", r":math:`P(\chi ^{2}_{d-1} > t) = 2^{-64}`"),
])
def test_formulas_become_math(line, expected):
    assert dm.convert_line(line) == expected


@pytest.mark.parametrize("line", [
    '``model="leak"`` (§3, Lemma 2)',
    "``np.inf`` or ``n_jobs`` workers, ``population[..., 0] = n0 = N_0``",
    "a leak_fraction of 0.3 with n_jobs workers",
    "see :func:`perfpriv.optimize.optimal_gamma` and https://example.org/a_b",
    "    :Parameters: **n_jobs** (*int, optional*) -- Workers.",
    "The figure has two panels.",
])
def test_code_names_roles_and_prose_stay_as_they_are(line):
    assert dm.convert_line(line) == line


def test_doctests_literal_blocks_and_directives_are_left_alone():
    lines = ["Text with N_t.", "", ">>> f(N_t=1)", "N_t", "", "Example::", "", "    x = N_{t-1}", "",
             ".. math::", "", "   N_t = C N_{t-1}", "", "After N_0."]
    out = dm.convert(lines)
    assert out[0] == "Text with :math:`N_t`."
    assert out[2:4] == [">>> f(N_t=1)", "N_t"]
    assert out[7] == "    x = N_{t-1}"
    assert out[11] == "   N_t = C N_{t-1}"
    assert out[13] == "After :math:`N_0`."


def test_tex_of_names_scripts_and_operators():
    assert dm.to_tex("gamma^2 Tr(Sigma^-1)") == r"\gamma^2 \mathrm{Tr}(\Sigma^{-1})"
    assert dm.to_tex("E[N_t | N_{t-1}] >= 1") == r"\mathbb{E}[N_t \mid N_{t-1}] \ge 1"
    assert dm.to_tex("(mu_hat_T - mu_T)^2") == r"(\hat{\mu}_T - \mu_T)^2"
    assert dm.to_tex("Ê_total") == r"Ê_{\mathrm{total}}"
    assert dm.to_tex("N(0, gamma^2 I_d)") == r"\mathcal{N}(0, \gamma^2 I_d)"


def test_no_library_source_holds_control_characters():
    """A TeX backslash in a non-raw string (``"\\frac"``) turns into a control character (form feed ...)."""
    import re

    root = Path(__file__).resolve().parents[1] / "perfpriv"
    bad = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
    hits = [f"{path.relative_to(root)}:{number}"
            for path in sorted(root.rglob("*.py"))
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if bad.search(line)]
    assert hits == []


def _public_docstrings():
    """(name, docstring) of every module, function, class and method of the package the reference documents."""
    import importlib
    import inspect
    import pkgutil

    import perfpriv

    seen = set()
    for info in pkgutil.walk_packages(perfpriv.__path__, "perfpriv."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue                                 # private modules have no page
        module = importlib.import_module(info.name)
        yield info.name, inspect.getdoc(module) or ""
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != info.name or id(obj) in seen:
                continue
            seen.add(id(obj))
            yield f"{info.name}.{name}", inspect.getdoc(obj) or ""
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if not attr.startswith("_") and callable(getattr(member, "__func__", member)):
                        yield f"{info.name}.{name}.{attr}", inspect.getdoc(member) or ""


def test_no_docstring_leaves_a_script_as_raw_tex_in_the_reference():
    """After the conversion, no ``x_{`` or ``^{`` is left in running text (outside math, code and doctests).

    The built-page check (the rendered book's raw-TeX scan) caught ``counts_{j+1}`` of
    ``kernels.behaviours.split_chain`` only in the slow tier; this finds it in seconds.
    """
    import re

    raw = re.compile(r"[A-Za-z]_\{|\^\{")
    hits = []
    for name, doc in _public_docstrings():
        block = None                                  # indent of a directive or literal block being skipped
        for line in dm.convert(doc.splitlines()):
            stripped, indent = line.strip(), len(line) - len(line.lstrip())
            if block is not None and (not stripped or indent > block):
                continue                              # math and code blocks are TeX and code by design
            block = indent if stripped.endswith("::") or (stripped.startswith(".. ") and "::" in stripped) else None
            if stripped.startswith((">>>", "...", ".. ")):
                continue
            text = re.sub(r":math:`[^`]*`|``[^`]*``|`[^`]*`", "", line)
            if raw.search(text):
                hits.append(f"{name}: {line.strip()}")
    assert hits == []


def test_no_docstring_or_documented_constant_holds_a_substitution_reference():
    """``|x|`` in reStructuredText is a substitution: the build fails on "Undefined substitution".

    ``#: The largest |coordinate| of ...`` above a public constant failed the book's build; write
    ``abs(x)``, ``‖x‖`` or words. Docstrings and the ``#:`` comments of every module are scanned, code,
    math and doctests left out.
    """
    import re

    substitution = re.compile(r"(?<![|\w`])\|[A-Za-z_][\w ]*\|(?![|\w`])")
    root = Path(__file__).resolve().parents[1] / "perfpriv"
    hits = [f"perfpriv/{path.relative_to(root)}:{number}"
            for path in sorted(root.rglob("*.py"))
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if line.lstrip().startswith("#:") and substitution.search(dm.convert_line(line))]
    for name, doc in _public_docstrings():
        for line in dm.convert(doc.splitlines()):        # as the build sees it: |y| <= B_y became math
            if line.lstrip().startswith((">>>", "...")):
                continue
            if substitution.search(re.sub(r":math:`[^`]*`|``[^`]*``|`[^`]*`", "", line)):
                hits.append(f"{name}: {line.strip()}")
    assert hits == []
