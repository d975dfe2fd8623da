"""Formulas of the library's docstrings rendered as math in the library reference.

The docstrings are written for ``help()`` and a terminal: formulas are plain
text (``N_{t-1} > 1``, ``C(gamma) = 1 + r - (q + r) p_tau``, ``mu_t``),
sometimes between double backquotes. In the rendered reference they read as
raw TeX or as code. This extension (an ``autodoc-process-docstring`` handler,
after napoleon) rewrites them as ``:math:`` roles:

* a double-backquoted literal that is a formula (only mathematical names:
  single letters, Greek letters by name, a few functions; at least one
  operator or script) becomes math; code (``model="leak"``, ``np.inf``,
  ``population[..., t]``) stays code;
* in running text, a run of formula words that holds a sub- or superscript
  (``N_{t-1}``, ``gamma^2``, ``C_1(gamma) > 1``) becomes math.

Parameter names, types, roles, links, doctests and literal blocks are left
alone. Nothing in the source docstrings changes; :func:`to_tex` and
:func:`convert_line` are tested in ``tests/test_docstring_math.py``.
"""

from __future__ import annotations

import re

GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "eps", "eta", "theta", "kappa", "lambda", "mu", "nu",
         "rho", "sigma", "Sigma", "tau", "phi", "Phi", "chi", "Lambda", "Gamma", "Delta", "pi", "omega", "xi",
         "zeta", "psi", "Omega", "Theta", "Psi"}
_TEX_GREEK = {"epsilon": r"\varepsilon", "eps": r"\varepsilon"}
FUNCTIONS = {"log": r"\log", "ln": r"\ln", "exp": r"\exp", "min": r"\min", "max": r"\max", "tanh": r"\tanh",
             "sin": r"\sin", "cos": r"\cos", "arg": r"\arg", "log1p": r"\operatorname{log1p}",
             "Tr": r"\mathrm{Tr}", "Var": r"\mathrm{Var}", "Cov": r"\mathrm{Cov}", "Corr": r"\mathrm{Corr}",
             "clip": r"\mathrm{clip}", "cap": r"\mathrm{cap}", "Bin": r"\mathrm{Bin}",
             "Binomial": r"\mathrm{Binomial}", "Uniform": r"\mathrm{Uniform}", "sqrt": r"\sqrt",
             "inf": r"\infty", "sum": r"\sum", "prod": r"\prod", "lambda_max": r"\lambda_{\max}",
             "expm1": r"\operatorname{expm1}", "Poisson": r"\mathrm{Poisson}", "floor": r"\mathrm{floor}", "prod": r"\prod", "argmin": r"\arg\min", "argmax": r"\arg\max"}
_UNICODE = {"−": "-", "≤": r"\le ", "≥": r"\ge ", "≈": r"\approx ", "‖": r"\|", "·": r"\cdot ",
            "×": r"\times ", "²": "^2", "³": "^3", "⁻¹": "^{-1}", "∈": r"\in ", "→": r"\to ", "∞": r"\infty ",
            "√": r"\sqrt ", "…": r"\dots ", "χ": r"\chi ", "̄": ""}
_SUPERSCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_WORD = re.compile(r"[^\W\d_][^\W_]*")
#: words that may follow "_" in a formula (others make a Python identifier: n_jobs, leak_fraction)
_SCRIPT_WORDS = {"max", "min", "hat", "total", "in", "out", "exact", "paper", "band", "clip", "ag"}


def _is_math_name(name: str) -> bool:
    """A name that can stand in a formula: one letter (with digits), a Greek letter, a known function."""
    base = re.sub(r"\d+$", "", name)
    return len(base) <= 1 or base in GREEK or name in FUNCTIONS or base in FUNCTIONS or name in ("E", "I")


def _names(text: str) -> list[str]:
    """Names of ``text``, a script's letters included (``N_{t-1}`` -> N, t; ``p_tau`` -> p, tau)."""
    return _WORD.findall(re.sub(r"\\[A-Za-z]+|[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]", " ", text))


def looks_like_code(text: str) -> bool:
    """Python rather than a formula: quotes, attribute access, slices, keywords, dict braces, identifiers."""
    for base, script in re.findall(r"(?<![\\\w])([^\W\d_]\w*?)_([A-Za-z]{2,})", text):
        if script not in GREEK and script not in _SCRIPT_WORDS and not script.startswith(("hat", "max", "min")):
            return True                          # n_jobs, p_value: a name of the code
    if re.search(r"[\"'`#@]|\b(True|False|None|np|self|lambda\s*:)\b|\w\.\w|\*\*|::|\[\s*\.\.\.|\.\.\.\s*\]|:\]|\[:",
                 text):
        return True
    if re.search(r"(?<![_^])\{", text):          # braces that are not a script
        return True
    if re.search(r"\b[a-z]\w*=(?!=)", re.sub(r"[_^]\{[^{}]*\}", "", text)):    # a keyword argument
        return True
    return False


def is_formula(text: str, *, strong: bool = False) -> bool:
    """Whether ``text`` reads as a formula (see the module docstring); ``strong``: it must hold a script."""
    text = text.strip()
    if not text or looks_like_code(text):
        return False
    names = [n for part in re.split(r"[_^]", text) for n in _names(part)]
    if not names and re.search(r"\d[_^]|\d[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]", text):
        return True                              # a number with an exponent: 10^{-6}, 2⁻⁶⁴
    if not names or not all(_is_math_name(n) for n in _names(re.sub(r"[_^]\{[^{}]*\}|[_^][A-Za-z0-9]+", "", text))):
        return False
    scripted = re.search(r"(?:[^\W_]|[)\]}|‖])[_^]|[²³⁻]", text) is not None
    if strong:
        return scripted
    operator = re.search(r"[-+*/=<>~|≤≥≈−×·]", text) is not None
    return scripted or (operator and len(names) >= 1 and len(text) > 1)


def _balanced(text: str, i: int, open_: str, close: str) -> int:
    """Index just after the bracket that closes the one at ``text[i]`` (or -1)."""
    depth = 0
    for k in range(i, len(text)):
        if text[k] == open_:
            depth += 1
        elif text[k] == close:
            depth -= 1
            if depth == 0:
                return k + 1
    return -1


def to_tex(text: str) -> str:
    """Plain-text formula -> TeX: ``N_{t-1} C(gamma)`` -> ``N_{t-1} C(\\gamma)``, ``Sigma^-1`` -> ``\\Sigma^{-1}``.

    Examples
    --------
    >>> to_tex("1/2 + beta"), to_tex("gamma^2 Tr(Sigma^-1)"), to_tex("E[N_t | N_{t-1}] >= 1")
    ('1/2 + \\\\beta', '\\\\gamma^2 \\\\mathrm{Tr}(\\\\Sigma^{-1})', '\\\\mathbb{E}[N_t \\\\mid N_{t-1}] \\\\ge 1')
    """
    s = re.sub(r"[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+", lambda m: "^{%s}" % m.group(0).translate(_SUPERSCRIPT_DIGITS), text)
    for uni, tex in _UNICODE.items():
        s = s.replace(uni, tex)
    s = s.replace("||", r"\|")
    # sqrt(x) -> \sqrt{x}
    while True:
        m = re.search(r"\bsqrt\(", s)
        if not m:
            break
        end = _balanced(s, m.end() - 1, "(", ")")
        if end < 0:
            break
        s = s[:m.start()] + r"\sqrt{" + s[m.end():end - 1] + "}" + s[end:]
    s = re.sub(r"(?<![\\A-Za-z])([A-Za-z]+)_hat(?![A-Za-z0-9])", lambda m: r"\hat{%s}" % _name_tex(m.group(1)), s)
    s = re.sub(r"(?<=[\dA-Za-z])\.\.(?=[\dA-Za-z])", r", \\dots, ", s)
    s = s.replace("<-", r"\leftarrow ")
    # scripts: ^-1 -> ^{-1}, ^(x) -> ^{x}, _word -> _{\mathrm{word}}
    s = re.sub(r"\^(-?[A-Za-z0-9]+)", lambda m: "^{%s}" % m.group(1) if len(m.group(1)) > 1 else "^" + m.group(1), s)
    s = re.sub(r"\^\(([^()]*)\)", r"^{\1}", s)
    s = re.sub(r"_([A-Za-z][A-Za-z0-9]+)\b",
               lambda m: "_%s" % (("{%s}" % _name_tex(m.group(1))) if _is_math_name(m.group(1))
                                  else r"{\mathrm{%s}}" % m.group(1)), s)
    # E[...] expectations, | as "given" inside them
    s = re.sub(r"(?<![A-Za-z\\])E(_[A-Za-z]+)?\[", lambda m: r"\mathbb{E}" + (m.group(1) or "") + "[", s)
    s = re.sub(r"(?<=\S) \| (?=\S)", r" \\mid ", s)
    # the normal law: N(0, ...) and N(mu, ...)
    s = re.sub(r"(?<![A-Za-z\\])N\((?=0|mu|\\mu)", r"\\mathcal{N}(", s)
    s = s.replace("<=", r"\le ").replace(">=", r"\ge ").replace("!=", r"\ne ").replace("->", r"\to ")
    s = s.replace("...", r"\dots ").replace("~", r"\sim ").replace("*", r"\cdot ")
    # names: Greek letters and functions (not inside \mathrm{...} and the like)
    s = re.sub(r"\\(?:mathrm|operatorname|mathcal|mathbb)\{[^{}]*\}|\\[A-Za-z]+|(?<![A-Za-z0-9])([A-Za-z][A-Za-z0-9]*)(?![A-Za-z0-9])",
               lambda m: _name_tex(m.group(1)) if m.group(1) else m.group(0), s)
    s = re.sub(r" +", " ", s).replace(r"\le  ", r"\le ")
    return s.strip()


def _name_tex(name: str) -> str:
    if name in GREEK:
        return _TEX_GREEK.get(name, "\\" + name)
    if name in FUNCTIONS:
        return FUNCTIONS[name]
    base = re.sub(r"\d+$", "", name)
    if base in GREEK and base != name:
        return _TEX_GREEK.get(base, "\\" + base) + "_{%s}" % name[len(base):]
    if len(name) > 1 and not re.fullmatch(r"[A-Za-z]\d+", name) and name not in ("E", "I"):
        return r"\mathrm{%s}" % name
    return name


# pieces of a line that are never touched: roles, literals, bold and italic spans, links, math
_PROTECTED = re.compile(r"(:[a-z:]+:`[^`]*`|``[^`]+``|`[^`]+`_?|\*\*[^*]+\*\*|\*[^*\s][^*]*\*|https?://\S+|\$[^$]+\$)")
_WORDS_STOP = re.compile(r"^[A-Za-z]{2,}[,.;:]?$")


def _nested(text: str) -> bool:
    """Brackets of ``text`` close in order and all of them close."""
    stack = []
    for ch in text:
        if ch in "([{":
            stack.append(ch)
        elif ch in ")]}":
            if not stack or "([{"[")]}".index(ch)] != stack.pop():
                return False
    return not stack


def _word_kind(word: str):
    """"strong" (holds a script), "weak" (could be part of a formula) or None, for one word of running text."""
    if word in ("...", "..", "…"):
        return "weak"                                    # the ellipsis of a sum: a_0 + ... + a_{N-1}
    bare = word.strip(",.;:")
    if not bare or (_WORDS_STOP.match(word) and bare not in GREEK and bare not in FUNCTIONS) or looks_like_code(bare):
        return None
    if re.fullmatch(r"[=+\-/<>~|≤≥≈−×·*]+|<=|>=|\d+(\.\d+)?[)]*", bare):
        return "weak"
    if not re.search(r"[^\W_]", bare):
        return None                                      # punctuation only
    if not re.fullmatch(r"[\w()\[\]{},;+\-*/=<>~|^.‖²³⁻¹−·×≤≥≈√̄]+", bare):
        return None
    names = _names(re.sub(r"[_^]\{[^{}]*\}|[_^]-?[A-Za-z0-9]+", "", bare))
    if not all(_is_math_name(n) for n in names):
        return None
    return "strong" if is_formula(bare, strong=True) else "weak"


def _render_run(pieces: list[str]) -> str:
    """A run of formula words (and the spaces between them) as text with ``:math:`` roles.

    The longest prefix that is a formula with closed brackets is converted, then
    the rest of the run in the same way.
    """
    original = "".join(pieces)
    words = [k for k, p in enumerate(pieces) if not p.isspace()]
    if not words:
        return original
    for last in range(len(words), 0, -1):
        chunk = "".join(pieces[:words[last - 1] + 1])
        text, lead, tail = chunk, "", ""
        m = re.search(r"[,.;:]+$", text)
        if m:
            text, tail = text[:m.start()], m.group(0)
        while not _nested(text) and text.endswith(")"):        # a closing bracket of the text around
            text, tail = text[:-1], ")" + tail
        while text and not _nested(text) and text.startswith("("):
            text, lead = text[1:], lead + "("
        ops = re.match(r"^([=+/<>~|−*-]+\s+)", text)        # an operator word before the formula
        if ops:
            text, lead = text[ops.end():], lead + ops.group(0)
        ops = re.search(r"(\s+[=+/<>~|−*-]+)$", text)       # ... or after it
        if ops:
            text, tail = text[:ops.start()], ops.group(0) + tail
        if text.strip() and _nested(text) and is_formula(text, strong=True):
            rest = pieces[words[last - 1] + 1:]
            return lead + f":math:`{to_tex(text.strip())}`" + tail + _render_run(rest)
    return pieces[0] + _render_run(pieces[1:]) if len(pieces) > 1 else original


def _math_runs(text: str) -> str:
    """Wrap the formula runs of a piece of running text in ``:math:``."""
    out, run = [], []

    def flush():
        spaces = []
        while run and run[-1].isspace():
            spaces.insert(0, run.pop())
        out.append(_render_run(run) if run else "")
        out.extend(spaces)
        run.clear()

    for piece in re.split(r"(\s+)", text):
        if not piece:
            continue
        if piece.isspace():
            (run if run else out).append(piece)
            continue
        if _word_kind(piece):
            run.append(piece)
            if piece.endswith(".") and not piece.endswith("..."):
                flush()                                  # the end of a sentence ends a formula
            continue
        flush()
        out.append(piece)
    flush()
    return "".join(out)


#: "|x|" in running text: docutils would read a substitution reference (which docstrings never use)
_ABS_BARS = re.compile(r"(?<![\\|])\|(?=\S)([^|`]*?\S)\|")


def convert_line(line: str) -> str:
    """One line of a (napoleon-processed) docstring with its formulas as ``:math:`` roles.

    Examples
    --------
    >>> convert_line("the ``N_{t-1}`` current users, ``model=\\"leak\\"``")
    'the :math:`N_{t-1}` current users, ``model="leak"``'
    >>> convert_line("Keeps C_1(gamma) > 1 at the start.")
    'Keeps :math:`C_1(\\\\gamma) > 1` at the start.'
    >>> convert_line("scipy's ``gammaln`` (log |Γ(x)|)")
    "scipy's ``gammaln`` (log \\\\|Γ(x)|)"
    """
    # a field marker (":ivar gamma_c:") or a bullet at the start of the line stays as it is
    head = re.match(r"^(\s*(?::\w+(?: [^:`]+)?:(?!`)|[*\-+] |\d+\. )?)", line).group(1)
    line = line[len(head):]
    parts = _PROTECTED.split(line)
    out = [head]
    for k, part in enumerate(parts):
        if k % 2:
            if part.startswith("``") and part.endswith("``") and is_formula(part[2:-2]):
                out.append(f":math:`{to_tex(part[2:-2])}`")
            else:
                out.append(part)
        else:
            # an absolute value in prose ("log |Γ(x)|") is not a substitution reference: its bar escaped
            out.append(_math_runs(part) if re.search(r"[_^²⁻]", part) else _ABS_BARS.sub(r"\\|\1|", part))
    # inline markup needs a space or punctuation around it: an escaped space (which renders as nothing)
    text = "".join(out)
    text = re.sub(r"(?<=[^\s\-:/'\"<(\[{])(:math:`)", r"\\ \1", text)
    text = re.sub(r"(:math:`[^`]*`)(?=[^\s\-.,:;!?\\/'\")\]}>])", r"\1\\ ", text)
    return text


def convert(lines: list[str]) -> list[str]:
    """Convert a docstring's lines in place of running text; skip doctests, literal blocks and directives."""
    result, literal_indent, in_doctest = [], None, False
    for k, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if literal_indent is not None:
            if stripped and indent <= literal_indent:
                literal_indent = None
            else:
                result.append(line)
                continue
        if stripped.startswith(">>>"):
            in_doctest = True
        elif not stripped:
            in_doctest = False
        if in_doctest or stripped.startswith(".. ") or re.match(r"^:\w[\w ]*:\s*$", stripped):
            result.append(line)
            if stripped.startswith(".. ") and "::" in stripped:
                literal_indent = indent     # a directive's body (math, code) stays as it is
            continue
        converted = convert_line(line)
        result.append(converted)
        if stripped.endswith("::"):
            literal_indent = indent
    return result


def _process(app, what, name, obj, options, lines):
    lines[:] = convert(lines)


def setup(app):
    # after napoleon (priority 500), which turns numpydoc sections into fields
    app.connect("autodoc-process-docstring", _process, priority=800)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
