"""Alt text of an explorer's figure: what it plots, at which values, and what its curves do.

An explorer's figure changes with its sliders, so its description must too: :func:`figure_alt` writes
one sentence for the figure shown, its curves read from the drawn figure itself
(:func:`describe_figure`: "population :math:`N_t` against round t: ε = 0.5 (mean) from 400 to 812"),
which keeps one description for every explorer, true to what is drawn.
"""

from __future__ import annotations

import html as _html
import math
import numbers
import re

import numpy as np

from ..plots import check_text
from ..plots import html as tex_html

__all__ = ["plain_text", "describe_figure", "figure_alt", "format_value", "check_words"]

#: most curves, markers or reference lines described per panel (the rest are counted)
MAX_ITEMS = 4


def plain_text(text: str) -> str:
    r"""A label as plain text: TeX between dollars or the HTML of a control, with Unicode symbols.

    Parameters
    ----------
    text : str
        A figure label (``"population $N_t$"``) or a control's HTML (``"<i>q</i> (leave)"``).

    Returns
    -------
    str
        What a screen reader can say: Greek letters and operators in Unicode, scripts as Unicode
        sub/superscripts (``Nₜ``) or ``_``/``^`` (:math:`ε_c`); no tags, dollars or backslashes.

    Raises
    ------
    TypeError
        If ``text`` is not a string.

    Examples
    --------
    >>> plain_text("population $N_t$"), plain_text("<i>q</i> (leave)"), plain_text(r"$\gamma^*$ = 0.56")
    ('population Nₜ', 'q (leave)', 'γ* = 0.56')
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string; got {text!r:.60}")
    parts = re.split(r"(?<!\\)\$([^$]*)\$", text.replace("\n", "; "))
    out = "".join(tex_html(_tex(part), unicode_scripts=True) if k % 2 else part for k, part in enumerate(parts))
    out = re.sub(r"<sub>(.*?)</sub>", lambda m: "_" + re.sub(r"<[^>]+>", "", m.group(1)), out)
    out = re.sub(r"<sup>(.*?)</sup>", lambda m: "^" + re.sub(r"<[^>]+>", "", m.group(1)), out)
    out = _html.unescape(re.sub(r"<[^>]+>", "", out)).replace("^*", "*")
    return " ".join(out.replace("\\", "").split())


#: TeX commands of the figures' labels that ``perfpriv.plots.html`` does not write, as plain text
_TEX_PLAIN = {r"\mid": "|", r"\sim": "~", r"\leq": "≤", r"\geq": "≥", r"\|": "‖", r"\theta": "θ",
              r"\psi": "ψ", r"\phi": "φ", r"\Phi": "Φ", r"\Delta": "Δ", r"\ell": "ℓ", r"\pi": "π",
              r"\chi": "χ", r"\xi": "ξ", r"\omega": "ω", r"\partial": "∂", r"\to": "→", r"\pm": "±"}


def _tex(expr: str) -> str:
    for command, text in _TEX_PLAIN.items():
        expr = re.sub(re.escape(command) + r"(?![A-Za-z])", text, expr)
    expr = re.sub(r"\\bar\s*(\\[A-Za-z]+|[A-Za-z])", "\\1\u0304", expr)     # ε̄: a combining macron
    expr = re.sub(r"\\(?:rm|mathcal|mathbf|hat|tilde|left|right|big|Big)(?![A-Za-z])\s*", "", expr)
    # a one-character script before other characters: N_0), gamma^2) (the converter would take the bracket along)
    return re.sub(r"([_^])([0-9A-Za-z*])", r"\1{\2}", expr)


def format_value(value) -> str:
    """A control value as the alt text writes it: ``2000``, ``0.0056``, ``0.3``, ``∞``, ``yes``.

    Parameters
    ----------
    value : bool, int, float or str
        The value of a control (or a number read from a figure).

    Returns
    -------
    str
        ``yes``/``no``, an integral value without decimals, another number to three significant digits,
        ``∞``/``−∞``, ``undefined`` for NaN, anything else as ``str(value)``.

    Examples
    --------
    >>> format_value(True), format_value(2000), format_value(0.005623), format_value(3.0), format_value(float("inf"))
    ('yes', '2000', '0.00562', '3', '∞')
    """
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        value = float(value)
        if math.isnan(value):
            return "undefined"
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        if value == int(value) and abs(value) < 1e7:
            return str(int(value))
        return format(value, ".3g")
    return str(value)


def _number(value: float) -> str:
    return format_value(float(value)).replace("e+0", "e").replace("e+", "e").replace("e-0", "e−").replace("-", "−")


def _axis_name(label: str) -> str | None:
    """The symbol of an axis label, for "at t = 36": its last word once parentheses are dropped."""
    bare = label
    while True:
        shorter = re.sub(r"\s*\([^()]*\)", "", bare)
        if shorter == bare:
            break
        bare = shorter
    words = bare.split()
    return words[-1] if words else None


def _reference(label: str, name: str | None, value: float) -> str:
    """A vertical or horizontal line: its label, and where it is unless the label says it already."""
    number = _number(value)
    if number in label:
        return label
    return f"{label} at {name} = {number}" if name else f"{label} at {number}"


def _curve_text(label: str, x, y, xname) -> str:
    """A curve over a monotone x: first and last value, and an inner lowest or highest point if there is one."""
    text = f"{label} from {_number(y[0])} to {_number(y[-1])}"
    low, high = int(np.argmin(y)), int(np.argmax(y))
    ends = (0, y.size - 1)
    # an inner extremum counts when it passes the nearer end by more than 0.1 % (of that end, or of the range)
    below = min(y[0], y[-1]) - y[low] if low not in ends else 0.0
    above = y[high] - max(y[0], y[-1]) if high not in ends else 0.0
    tol = 1e-3 * (min(abs(y[0]), abs(y[-1])) or float(np.ptp(y)))
    if max(below, above) <= tol:
        return text
    k, kind = (low, "lowest") if below >= above else (high, "highest")
    where = f"{xname} = {_number(x[k])}" if xname else _number(x[k])
    return f"{text}, {kind} {_number(y[k])} at {where}"


def _finite(line):
    x = np.asarray(line.get_xdata(), dtype=float)
    y = np.asarray(line.get_ydata(), dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], y[ok]


def _is_reference(x, y) -> bool:
    """A horizontal or vertical line (``axhline``, ``axvline``) or a single point."""
    return y.size < 2 or bool(np.all(y == y[0]) or np.all(x == x[0]))


def _line_text(line, xname) -> str | None:
    label = line.get_label()
    if not label or label.startswith("_"):
        return None
    label = plain_text(label)
    x, y = _finite(line)
    if y.size == 0:
        return None                                    # a legend entry only (e.g. "mean field, dashed")
    if y.size == 1:
        return label                                   # a marked point: its label says what it marks
    if np.all(y == y[0]):
        return _reference(label, None, y[0])           # a horizontal line (axhline) or a flat curve
    if np.all(x == x[0]):
        return _reference(label, xname, x[0])          # a vertical line (axvline)
    if np.all(np.diff(x) > 0) or np.all(np.diff(x) < 0):
        return _curve_text(label, x, y, xname)
    return label


def describe_figure(fig) -> str:
    """What a drawn figure shows, panel by panel, read from the figure itself.

    Each panel with data is "<y label> against <x label>", its title, and at most :data:`MAX_ITEMS`
    labelled curves (first and last value, an inner minimum or maximum), marked points, reference lines
    and shaded areas; unlabelled curves (the thin trial runs) are counted with the range of their ends.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The drawn figure.

    Returns
    -------
    str
        The figure's title (``suptitle``) if any, then one sentence per panel (``left``/``right``,
        ``left``/``middle``/``right`` or ``panel k``).

    Examples
    --------
    >>> from perfpriv.plots import new_figure
    >>> fig, axes = new_figure(1, 1, width=3, height=2)
    >>> _ = axes[0, 0].plot([0, 1, 2], [100, 300, 812], label="mean $N_t$")
    >>> _ = axes[0, 0].set(xlabel="round $t$", ylabel="population $N_t$")
    >>> describe_figure(fig)
    'population Nₜ against round t: mean Nₜ from 100 to 812.'
    """
    from matplotlib.collections import PolyCollection
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure; got {fig!r:.60}")
    panels = []
    axes = [ax for ax in fig.axes if ax.get_visible() and (ax.lines or ax.collections or ax.images or ax.patches)]
    for k, ax in enumerate(axes):
        ylabel, xlabel = plain_text(ax.get_ylabel()), plain_text(ax.get_xlabel())
        name = f"{ylabel} against {xlabel}" if ylabel and xlabel else (ylabel or xlabel or "a panel")
        if len(axes) > 1:
            name = f"{_position(k, len(axes))}: {name}"
        title = plain_text(ax.get_title())
        if title:
            name += f" ({title})"
        xname = _axis_name(xlabel) if xlabel else None
        items, runs = [], []
        for line in ax.lines:
            text = _line_text(line, xname)
            if text is None and line.get_label().startswith("_"):
                x, y = _finite(line)
                if not _is_reference(x, y):
                    runs.append((x, y))
            elif text is not None and text not in items:
                items.append(text)
        for collection in ax.collections:
            label = collection.get_label()
            if label and not label.startswith("_"):
                text = plain_text(label) + (" (shaded)" if isinstance(collection, PolyCollection) else "")
                if text not in items:
                    items.append(text)
        more = len(items) - MAX_ITEMS
        items = items[:MAX_ITEMS] + ([f"{more} more"] if more > 0 else [])
        if runs:
            items.append(_runs_text(runs, xname))
        if ax.images or (ax.collections and not ax.lines and not items):
            items.append("a colour map")
        panels.append(name + (": " + "; ".join(items) if items else ""))
    suptitle = fig.get_suptitle() if hasattr(fig, "get_suptitle") else ""
    head = plain_text(suptitle)
    text = ". ".join(panels) + "." if panels else "an empty figure."
    return f"{head}. {text}" if head else text


def _runs_text(runs, xname) -> str:
    """Unlabelled curves (the runs of a simulation): how many, where they start and where they end."""
    if len(runs) == 1:
        x, y = runs[0]
        monotone = np.all(np.diff(x) > 0) or np.all(np.diff(x) < 0)
        return _curve_text("a curve", x, y, xname) if monotone else "a curve"
    first = np.array([y[0] for _, y in runs])
    last = np.array([y[-1] for _, y in runs])

    def span(values):
        low, high = _number(values.min()), _number(values.max())
        return low if low == high else f"{low}–{high}"

    return f"{len(runs)} curves from {span(first)} to {span(last)}"


def _position(k: int, n: int) -> str:
    if n == 2:
        return ("left", "right")[k]
    if n == 3:
        return ("left", "middle", "right")[k]
    return f"panel {k + 1}"


def figure_alt(title: str, plotted: str | None, values: str, fig) -> str:
    """The alt text of an explorer's figure: title, what it plots, the values, what the figure shows.

    Parameters
    ----------
    title, plotted : str
        The explorer's title and what the figure plots (not blank; without ``plotted`` the text starts
        with "Figure of <title>").
    values : str
        The values the figure was drawn at (``"ε = 1, q = 0.9"``), or ``""``.
    fig : matplotlib.figure.Figure
        The drawn figure, described by :func:`describe_figure`.

    Returns
    -------
    str
        ``"<title>: <plotted>, for <values>. <describe_figure(fig)>"``.

    Raises
    ------
    ValueError
        If ``title`` or ``plotted`` is blank.
    TypeError
        If ``title``, ``plotted`` or ``values`` is not a string, or ``fig``
        not a matplotlib Figure.

    Examples
    --------
    >>> from perfpriv.plots import new_figure
    >>> fig, axes = new_figure(1, 1, width=3, height=2)
    >>> _ = axes[0, 0].plot([0, 50], [100, 812], label="mean")
    >>> _ = axes[0, 0].set(xlabel="round $t$", ylabel="population $N_t$")
    >>> figure_alt("Growth", "population over the rounds", "ε = 1, q = 0.9", fig)
    'Growth: population over the rounds, for ε = 1, q = 0.9. population Nₜ against round t: mean from 100 to 812.'
    """
    check_words("title", title)
    check_words("plotted", plotted, optional=True)
    check_text("values", values)
    head = f"{title}: {plotted}" if plotted else f"Figure of {title}"
    return f"{head}, for {values}. {describe_figure(fig)}" if values.strip() else f"{head}. {describe_figure(fig)}"


def check_words(name: str, value, *, optional: bool = False):
    """A string with some text in it (or None when ``optional``): a TypeError or ValueError naming ``name``.

    Examples
    --------
    >>> check_words("plotted", "the population")
    'the population'
    >>> check_words("plotted", " ")
    Traceback (most recent call last):
    ...
    ValueError: plotted must say something (it is the start of the figure's alt text); got ' '
    """
    check_text(name, value, optional=optional)
    if value is not None and not value.strip():
        raise ValueError(f"{name} must say something (it is the start of the figure's alt text); got {value!r:.60}")
    return value
