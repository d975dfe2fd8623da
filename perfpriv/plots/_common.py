r"""Shared plotting conventions: one pinned style, the book's symbols, and how a figure is shown.

Every figure function of :mod:`perfpriv.plots` draws inside :func:`style` (the same look whatever
the reader's matplotlib defaults) and returns the :class:`matplotlib.figure.Figure`, never calling
``plt.show``. Figures are designed in inches at :data:`DISPLAY_DPI` CSS pixels per inch: a figure
:data:`COLUMN_WIDTH` inches wide fills the book's text column, so that the fonts of :data:`STYLE`
are read at their nominal size; :func:`show` stores :data:`PIXEL_DENSITY` device pixels per CSS pixel.
Every symbol is matplotlib mathtext, written once in TeX: :data:`SYMBOLS` maps the library's parameter
names to the symbols of the prose (``n0`` is :math:`N_0`, ``epsilon`` is :math:`\varepsilon`);
:func:`math`, :func:`assign` and :func:`params` write labels, and :func:`html` writes the same TeX as
HTML for the explorers' controls.
"""

from __future__ import annotations

import contextlib
import html as _html
import io
import math as _math
import numbers
import re

import matplotlib.pyplot as plt

from .._validate import check_flag, check_int, check_probability, check_real

__all__ = ["style", "new_figure", "show", "LayoutWarning", "png_bytes", "display_width", "plain_log", "layout_problems", "STYLE", "DISPLAY_DPI",
           "PIXEL_DENSITY", "COLUMN_WIDTH", "SYMBOLS", "math", "number", "assign", "params", "html"]

#: CSS pixels per inch of figure size (a figure is shown this many pixels per inch wide).
DISPLAY_DPI = 80
#: Device pixels stored per CSS pixel (2: sharp on high-density screens and projectors).
PIXEL_DENSITY = 2
#: Width in inches of a figure that fills the book's ~690 px text column.
COLUMN_WIDTH = 8.6

#: Largest value a figure puts on a log axis: matplotlib's log-scale margins overflow near 1e300.
MAX_LOG_VALUE = 1e100

#: Largest image (device pixels) that :func:`png_bytes` writes: far beyond any page or screen.
MAX_PIXELS = 50_000_000


def check_figure(fig, name="fig"):
    """A matplotlib figure, or a TypeError naming ``name`` (issue 16: not an AttributeError inside)."""
    from matplotlib.figure import FigureBase

    if not isinstance(fig, FigureBase):
        raise TypeError(f"{name} must be a matplotlib Figure (e.g. from new_figure); got {fig!r:.60}")
    return fig


def check_axes(ax, name="ax"):
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        raise TypeError(f"{name} must be a matplotlib Axes; got {ax!r:.60}")
    return ax


def check_type(obj, name, cls_name):
    """``obj`` if its class is ``cls_name`` (a perfpriv result, by name: the figures need not import the
    modules that compute it), else a TypeError naming ``name``."""
    if type(obj).__name__ != cls_name:
        raise TypeError(f"{name} must be a {cls_name} (from perfpriv); got {type(obj).__name__}")
    return obj


def check_items(name, value, cls_name=None, *, mapping=False, empty=False):
    """The items (label, value) of a dict (``mapping``) or the values of a sequence, non-empty unless
    ``empty``, each value a ``cls_name`` when one is given (:func:`check_type`)."""
    from collections.abc import Mapping

    if mapping:
        if not isinstance(value, Mapping):
            raise TypeError(f"{name} must be a non-empty dict {{label: result}}; got {value!r:.60}")
        items = list(value.items())
    else:
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
            raise TypeError(f"{name} must be a non-empty sequence of results; got {value!r:.60}")
        items = list(value)
    if not items and not empty:
        raise ValueError(f"{name} must be non-empty (at least one {cls_name or 'entry'}); got an empty one")
    if cls_name is not None:
        for item in items:
            check_type(item[1] if mapping else item, f"each value of {name}" if mapping else f"each entry of {name}",
                       cls_name)
    return items


def check_indices(name, value, size):
    """A sequence of indices into ``size`` entries (bounds checked), as a list of ints."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a sequence of indices; got {value!r:.60}")
    return [check_int(name, i, low=-size, high=size - 1) for i in value]


def check_text(name, value, *, optional=False):
    """A string (or None when ``optional``), else a TypeError naming ``name``."""
    if optional and value is None:
        return value
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string{' or None' if optional else ''}; got {value!r:.60}")
    return value


def check_callable(name, value):
    """A callable (a drawing function), else a TypeError naming ``name``."""
    if not callable(value):
        raise TypeError(f"{name} must be a function (callable); got {value!r:.60}")
    return value


def check_sequence(name, value, *, empty=False):
    """A list or tuple (not a string, a number or a dict), as a list; non-empty unless ``empty``."""
    from collections.abc import Mapping

    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__") or hasattr(value, "shape") \
            and getattr(value, "ndim", 1) == 0:
        raise TypeError(f"{name} must be a list or tuple; got {value!r:.60}")
    items = list(value)
    if not empty and not items:
        raise ValueError(f"{name} must hold at least one entry; got an empty one")
    return items


def check_values(name, value, **bounds):
    """A number or a 1-D sequence of numbers within ``bounds`` (:func:`perfpriv._validate.check_real`), as
    a 1-D float array; else an error naming ``name``."""
    import numpy as np

    values = np.atleast_1d(np.asarray(check_real(name, value, **bounds), dtype=float))
    if values.ndim != 1:
        raise ValueError(f"{name} must be a number or a 1-D sequence of numbers; got an array of shape {values.shape}")
    return values


def check_rates(name, value):
    """A pair (q, r) of probabilities (leaving and recruiting rates), as two floats; else an error naming ``name``."""
    pair = check_sequence(name, value, empty=True)
    if len(pair) != 2:
        raise ValueError(f"{name} must be a pair (q, r) of probabilities; got {value!r:.60}")
    return (check_probability(f"{name} (q)", pair[0], scalar=True),
            check_probability(f"{name} (r)", pair[1], scalar=True))


def check_settings(name, value):
    """A non-empty sequence of (q, r) pairs (:func:`check_rates`), as a list of pairs of floats."""
    return [check_rates(f"each entry of {name}", pair) for pair in check_sequence(name, value)]


#: rcParams pinned for every figure of the book (fonts that every machine has).
STYLE = {
    "figure.dpi": DISPLAY_DPI,
    "savefig.dpi": DISPLAY_DPI * PIXEL_DENSITY,
    "font.family": "DejaVu Sans",
    "mathtext.fontset": "dejavusans",
    "font.size": 11,
    "axes.titlesize": 11,
    "axes.labelsize": 11,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 9.5,
    "figure.titlesize": 11.5,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "image.cmap": "viridis",
    "legend.framealpha": 0.9,
}


@contextlib.contextmanager
def style():
    """Context manager applying :data:`STYLE` (and nothing else)."""
    with plt.rc_context(STYLE):
        yield


#: Most panels :func:`new_figure` draws in one row or one column.
MAX_PANELS = 50


def new_figure(nrows: int = 1, ncols: int = 1, *, width: float = 4.2, height: float = 3.2, **kwargs):
    """Create a figure of ``nrows x ncols`` panels, each ``width x height`` inches.

    The figure is detached from pyplot (a notebook shows it only through :func:`show`) and never
    wider than :data:`COLUMN_WIDTH` (the panels are narrowed to fit).

    Examples
    --------
    >>> fig, axes = new_figure(1, 3, width=4.0)
    >>> axes.shape, float(fig.get_figwidth())
    ((1, 3), 8.6)
    """
    from matplotlib.figure import Figure

    rows_cols = []
    for name, value in (("nrows", nrows), ("ncols", ncols)):
        if isinstance(value, bool) or type(value).__name__ == "bool_" or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be an integer from 1 to {MAX_PANELS}; got {value!r:.40}")
        if not (_math.isfinite(value) and value == int(value) and 1 <= value <= MAX_PANELS):
            raise ValueError(f"{name} must be an integer from 1 to {MAX_PANELS} (no page shows more panels "
                             f"in a row or column); got {value!r:.40}")
        rows_cols.append(int(value))   # an integral float (2.0) is that integer
    nrows, ncols = rows_cols
    for name, value in (("width", width), ("height", height)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value <= 50:
            raise ValueError(f"{name} must be a panel size in inches, above 0 and at most 50; got {value!r:.40}")
    with style():
        fig = Figure(figsize=(min(width * ncols, COLUMN_WIDTH), height * nrows), layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False, **kwargs)
    return fig, axes


def png_bytes(fig, *, density: float = PIXEL_DENSITY, colors: int | None = 256) -> bytes:
    """``fig`` as PNG bytes, ``density`` device pixels per CSS pixel.

    ``colors`` reduces the image to a palette of that many colours without dithering (for line plots
    and heatmaps indistinguishable, and about three times smaller); ``None`` keeps full colour.
    """
    check_figure(fig)
    density = check_real("density", density, low=0, low_open=True, scalar=True)
    if colors is not None:
        colors = check_int("colors", colors, low=1, high=256)
    width, height = (float(v) * DISPLAY_DPI * density for v in fig.get_size_inches())
    if not (width >= 1 and height >= 1):
        raise ValueError(f"density is too small: the image would be {width:.3g} x {height:.3g} pixels (less than one)")
    if not width * height <= MAX_PIXELS:
        raise ValueError(f"density is too large: the image would have {width * height:.3g} pixels, more than the "
                         f"{MAX_PIXELS:.2g} a page can show")
    buffer = io.BytesIO()
    with style():
        fig.savefig(buffer, format="png", dpi=DISPLAY_DPI * density)
    if colors is None:
        return buffer.getvalue()
    from PIL import Image

    image = Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")
    out = io.BytesIO()
    image.quantize(colors=colors, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        out, format="png", optimize=True)
    return out.getvalue()


def display_width(fig) -> int:
    """Width in CSS pixels at which ``fig`` is shown (its width in inches times :data:`DISPLAY_DPI`)."""
    return int(round(check_figure(fig).get_figwidth() * DISPLAY_DPI))


class LayoutWarning(UserWarning):
    """A figure shown with text cut by its edge or overlapping other text (:func:`layout_problems`)."""


def show(fig, *, check_layout: bool = True) -> None:
    """Display ``fig`` in a notebook as a PNG image only.

    The PNG (:func:`png_bytes`) is shown at the figure's natural width (the output's ``width``
    metadata). Unlike the default display it emits no ``<Figure size ...>`` text, whose format changes
    across matplotlib versions (nbval compares the text outputs of stored notebooks). With
    ``check_layout`` a figure with clipped or overlapping text (:func:`layout_problems`) raises a
    ``LayoutWarning`` under the cell, which fails nbval; the explorers check their first drawing only.
    """
    from IPython import get_ipython
    from IPython.display import display

    check_figure(fig)
    check_layout = check_flag("check_layout", check_layout)
    if get_ipython() is None:  # plain Python: there is nowhere to display an image
        return
    if check_layout:
        problems = layout_problems(fig)
        if problems:
            import warnings

            warnings.warn("figure layout: " + "; ".join(problems[:5]), LayoutWarning, stacklevel=2)
    display({"image/png": png_bytes(fig)}, metadata={"image/png": {"width": display_width(fig)}}, raw=True)


def plain_log(ax, *, x=True, y=False):
    """Log axes labelled with plain numbers (0.2, 1, 5), without minor-tick labels.

    Labels at 1, 2 and 5 times the powers of ten where they fit, else at 1 and 3 times or at the
    powers alone, so that they never run into each other (no :math:`2 x 10^1` minor labels).
    """
    import numpy as np
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    check_axes(ax)
    x, y = check_flag("x", x), check_flag("y", y)
    fmt = FuncFormatter(lambda v, _pos: f"{v:g}")
    size = ax.figure.get_size_inches()
    box = ax.get_position()
    for flag, axis, limits, inches in ((x, ax.xaxis, ax.get_xlim(), box.width * size[0]),
                                       (y, ax.yaxis, ax.get_ylim(), box.height * size[1])):
        if not flag:
            continue
        lo, hi = min(limits), max(limits)
        subs = (1.0,)
        if lo > 0:
            for candidate in ((1.0, 2.0, 5.0), (1.0, 3.0)):
                ticks = [m * 10.0 ** k for k in range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1)
                         for m in candidate if lo <= m * 10.0 ** k <= hi]
                # about 0.1 inch per character of a 10 pt label (x) or per label line (y), and a gap
                need = sum(0.1 * len(f"{t:g}") + 0.15 for t in ticks) if axis is ax.xaxis else 0.3 * len(ticks)
                if need <= inches:
                    subs = candidate
                    break
        axis.set_major_locator(LogLocator(base=10, subs=subs))
        axis.set_major_formatter(fmt)
        axis.set_minor_formatter(NullFormatter())


def _visible_tick_labels(axis):
    """The tick labels of ``axis`` that are drawn (inside the view limits, not empty), major and minor,
    in the order of their positions (a log axis labels its minor ticks between the major ones)."""
    if not axis.get_visible():
        return []
    lo, hi = sorted(axis.get_view_interval())
    span = (hi - lo) or 1.0
    labels = []
    for locs, texts in ((axis.get_majorticklocs(), axis.get_majorticklabels()),
                        (axis.get_minorticklocs(), axis.get_minorticklabels())):
        for loc, text in zip(locs, texts):
            if text.get_visible() and text.get_text() and lo - 1e-9 * span <= loc <= hi + 1e-9 * span:
                labels.append((loc, text))
    return [text for _, text in sorted(labels, key=lambda pair: pair[0])]


def layout_problems(fig, *, tolerance: float = 1.0) -> list:
    """What a reader would see as broken text in ``fig``: clipped or overlapping labels.

    Draws the figure and checks, in pixels with ``tolerance``: every title, label, tick label and
    legend lies inside the canvas; an axis label does not overlap its own tick labels, nor tick labels
    of one axis each other; texts of different panels (and the figure's title and legends) do not overlap.

    Returns
    -------
    list of str
        One line per problem (empty when the layout is clean).

    Examples
    --------
    >>> fig, axes = new_figure(1, 1)
    >>> _ = axes[0, 0].set_ylabel("population $N_t$")
    >>> layout_problems(fig)
    []
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    check_figure(fig)
    tolerance = check_real("tolerance", tolerance, low=0, scalar=True)
    with style():
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        renderer = canvas.get_renderer()
    canvas_box = fig.bbox
    problems = []
    boxes = {}   # id(artist) -> its extent: each artist is measured once, not once per pair it is compared in

    def box(artist):
        if id(artist) not in boxes:
            boxes[id(artist)] = artist.get_window_extent(renderer)
        return boxes[id(artist)]

    def name(artist):
        text = artist.get_text() if hasattr(artist, "get_text") else type(artist).__name__
        return repr(text[:40])

    def overlap(a, b):
        return (min(a.x1, b.x1) - max(a.x0, b.x0) > tolerance) and (min(a.y1, b.y1) - max(a.y0, b.y0) > tolerance)

    groups = []   # (owner, kind, artist)
    for k, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        for axis, letter in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            ticks = _visible_tick_labels(axis)
            groups += [(k, f"{letter}tick", t) for t in ticks]
            if axis.get_visible() and axis.label.get_visible() and axis.label.get_text():
                groups.append((k, f"{letter}label", axis.label))
            for a, b in zip(ticks, ticks[1:]):
                if overlap(box(a), box(b)):
                    problems.append(f"axes {k}: tick labels {name(a)} and {name(b)} overlap")
        for title in (ax.title, ax._left_title, ax._right_title):
            if title.get_visible() and title.get_text():
                groups.append((k, "title", title))
        if ax.get_legend() is not None and ax.get_legend().get_visible():
            groups.append((k, "legend", ax.get_legend()))
    if fig._suptitle is not None and fig._suptitle.get_text():
        groups.append(("figure", "suptitle", fig._suptitle))
    groups += [("figure", "legend", legend) for legend in fig.legends]
    for owner, kind, artist in groups:
        b = box(artist)
        if (b.x0 < canvas_box.x0 - tolerance or b.y0 < canvas_box.y0 - tolerance
                or b.x1 > canvas_box.x1 + tolerance or b.y1 > canvas_box.y1 + tolerance):
            problems.append(f"axes {owner}: {kind} {name(artist)} is cut by the edge of the figure")
    for i, (owner_a, kind_a, a) in enumerate(groups):
        for owner_b, kind_b, b in groups[i + 1:]:
            same_axis_ticks = owner_a == owner_b and kind_a.endswith("tick") and kind_b.endswith("tick")
            if same_axis_ticks or (owner_a == owner_b and "legend" in (kind_a, kind_b)):
                continue   # neighbouring ticks are checked above; a legend may sit inside its own axes
            label_vs_own_ticks = owner_a == owner_b and {kind_a[0], kind_b[0]} <= {"x", "y"} and \
                kind_a[0] == kind_b[0]
            if owner_a == owner_b and not label_vs_own_ticks and kind_a != "title" and kind_b != "title":
                continue   # an x label against y ticks of the same axes meets at the corner only
            if overlap(box(a), box(b)):
                problems.append(f"axes {owner_a} {kind_a} {name(a)} overlaps axes {owner_b} {kind_b} {name(b)}")
    return problems


# ---------- symbols: TeX once, as mathtext in figures and as HTML in controls

#: The book's symbol (TeX) of each parameter name of the library.
SYMBOLS = {
    "epsilon": r"\varepsilon",
    "epsilon_c": r"\varepsilon_c",
    "epsilon_star": r"\varepsilon^*",
    "beta": r"\beta",
    "beta_c": r"\beta_c",
    "gamma": r"\gamma",
    "gamma_c": r"\gamma_c",
    "gamma_star": r"\gamma^*",
    "tau": r"\tau",
    "rho": r"\rho",
    "kappa": r"\kappa",
    "mu": r"\mu",
    "q": "q",
    "r": "r",
    "n0": "N_0",
    "n": "N",
    "T": "T",
    "d": "d",
    "R": "R",
    "s": "s",
    "a": "a",
    "alpha": r"\alpha",
    "delta": r"\delta",
    "trials": r"\mathrm{trials}",
    "window": r"\mathrm{window}",
}


def math(expr: str) -> str:
    """TeX ``expr`` as matplotlib mathtext: ``math(r"N_{t-1}")`` is ``"$N_{t-1}$"``.

    Examples
    --------
    >>> math(r"\\gamma_c")
    '$\\\\gamma_c$'
    """
    return f"${check_text('expr', expr)}$"


def number(value, fmt: str = ".3g") -> str:
    """TeX of a number: ``inf`` is ``\\infty``, ``1.5e-05`` is ``1.5\\times 10^{-5}``.

    Examples
    --------
    >>> number(2.0), number(float("inf")), number(1.5e-5), number(20000), number(0.123456)
    ('2', '\\\\infty', '1.5\\\\times 10^{-5}', '20000', '0.123')
    """
    return _number(value, fmt, "value")


def _number(value, fmt, name):
    check_text("fmt", fmt)
    if getattr(value, "ndim", None) == 0 and getattr(getattr(value, "dtype", None), "kind", "") in ("i", "u", "f"):
        value = value.item()                 # a 0-d numpy array of a number
    if isinstance(value, (bool, str, bytes)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {value!r:.60}")
    try:
        format(1.5, fmt)
    except ValueError:
        raise ValueError(f"fmt must be a format specification for a number, such as '.3g'; got {fmt!r:.40}") from None
    if isinstance(value, numbers.Integral) or (float(value).is_integer() and abs(value) < 1e6 and fmt == ".3g"):
        return str(int(value))      # sizes and integral values in full: N = 1000, not 10^3
    value = float(value)
    if _math.isinf(value):
        return r"\infty" if value > 0 else r"-\infty"
    text = format(value, fmt)
    match = re.fullmatch(r"(-?[\d.]+)e([+-])0*(\d+)", text)
    if match:
        mantissa, sign, exponent = match.groups()
        power = f"10^{{{'-' if sign == '-' else ''}{exponent}}}"
        return power if mantissa in ("1", "1.0") else rf"{mantissa}\times {power}"
    return text


def assign(name: str, value, fmt: str = ".3g") -> str:
    """Mathtext ``$symbol = value$``; ``name`` is a key of :data:`SYMBOLS` or TeX.

    Examples
    --------
    >>> assign("gamma", 2.5), assign("epsilon", float("inf")), assign(r"\\gamma_c", 1.234)
    ('$\\\\gamma = 2.5$', '$\\\\varepsilon = \\\\infty$', '$\\\\gamma_c = 1.23$')
    """
    check_text("name", name)
    return math(f"{SYMBOLS.get(name, name)} = {_number(value, fmt, 'value')}")


def params(fmt: str = ".3g", **values) -> str:
    """Comma-separated :func:`assign` labels, in the order given.

    Examples
    --------
    >>> params(q=0.3, r=0.6, n0=100)
    '$q = 0.3$, $r = 0.6$, $N_0 = 100$'
    """
    return ", ".join(math(f"{SYMBOLS.get(name, name)} = {_number(value, fmt, name)}") for name, value in values.items())


_TEX_HTML = {
    r"\varepsilon": "ε", r"\epsilon": "ε", r"\gamma": "γ", r"\tau": "τ", r"\beta": "β", r"\rho": "ρ",
    r"\kappa": "κ", r"\mu": "μ", r"\alpha": "α", r"\delta": "δ", r"\lambda": "λ", r"\Lambda": "Λ",
    r"\sigma": "σ", r"\Sigma": "Σ", r"\eta": "η", r"\nu": "ν", r"\infty": "∞", r"\times": "×",
    r"\le": "≤", r"\ge": "≥", r"\cdot": "·", r"\approx": "≈", r"\,": "\u2009", r"\ ": " ",
}
_TOKEN = re.compile(r"\\mathrm\{([^{}]*)\}|\\[A-Za-z]+|\\[, ]|[_^]|[{}]|[A-Za-z]|[^\\_^{}A-Za-z]+")


_SUBSCRIPTS = dict(zip("0123456789+-−=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
_SUPERSCRIPTS = dict(zip("0123456789+-−=()in*", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁱⁿ*"))


def html(expr: str, *, unicode_scripts: bool = False) -> str:
    r"""The TeX subset of :data:`SYMBOLS` and of the figures' labels, as HTML.

    Letters italic (``<i>``), scripts ``<sub>``/``<sup>``, Greek letters and a few operators Unicode,
    ``\mathrm{...}`` upright, a minus ``−``: a slider shows the symbol of the figure and the prose.
    With ``unicode_scripts``, a script that Unicode can write (:math:`N_0`, :math:`x^2`) uses Unicode
    sub/superscripts instead of tags (a static page's widget manager removes ``<sub>`` from labels).

    Examples
    --------
    >>> html("N_0"), html(r"\gamma_{t}"), html(r"\varepsilon_c"), html("N_{t-1}")
    ('<i>N</i><sub>0</sub>', '<i>γ</i><sub><i>t</i></sub>', '<i>ε</i><sub><i>c</i></sub>', '<i>N</i><sub><i>t</i>−1</sub>')
    >>> html("N_0", unicode_scripts=True), html(r"\varepsilon_c", unicode_scripts=True)
    ('<i>N</i>₀', '<i>ε</i><sub><i>c</i></sub>')
    """
    text = _html_tags(check_text("expr", expr))
    if check_flag("unicode_scripts", unicode_scripts):
        def plain(match):
            tag, inner = match.group(1), match.group(2)
            table = _SUBSCRIPTS if tag == "sub" else _SUPERSCRIPTS
            bare = re.sub(r"</?i>", "", inner)
            if all(ch in table for ch in bare):
                return "".join(table[ch] for ch in bare)
            return match.group(0)
        text = re.sub(r"<(sub|sup)>((?:(?!</?su[bp]>).)*)</\1>", plain, text)
    return text


def _html_tags(expr: str) -> str:
    out, stack, pending = [], [], None
    for match in _TOKEN.finditer(expr):
        token = match.group(0)
        if match.group(1) is not None:
            piece = _html.escape(match.group(1))
        elif token in ("_", "^"):
            pending = "sub" if token == "_" else "sup"
            continue
        elif token == "{":
            stack.append(pending)
            out.append(f"<{pending}>" if pending else "")
            pending = None
            continue
        elif token == "}":
            tag = stack.pop() if stack else None
            out.append(f"</{tag}>" if tag else "")
            continue
        elif token.startswith("\\"):
            sym = _TEX_HTML.get(token, token.lstrip("\\"))
            piece = f"<i>{sym}</i>" if sym.isalpha() and len(sym) == 1 and sym not in "∞" else sym
        elif token.isalpha():
            piece = f"<i>{token}</i>"
        else:
            piece = _html.escape(token).replace("-", "−")
        if pending:   # a one-token sub/superscript
            piece = f"<{pending}>{piece}</{pending}>"
            pending = None
        out.append(piece)
    return "".join(out)
