r"""Kernel-free explorers: figures precomputed over a grid of control values, switched in the browser.

A live :class:`~perfpriv.widgets.Explorer` needs a Python kernel (Binder or Live Code). A
:class:`StaticExplorer` draws the same figure, with the same drawing function, for every combination
of a few values of its main controls when the notebook is executed, and stores the images in its
HTML output with a few lines of JavaScript: a slider shows the stored image of that combination, with
no kernel and no network (only the listed values, as the page says). Build one with
:meth:`perfpriv.widgets.Explorer.static`, or directly from a drawing function::

    StaticExplorer("Law of the membership statistic",
                   {"tau": grid(r"threshold $\tau$", [0.05, 0.1, 0.3, 1.0])},
                   draw=plots.llr_law_figure, fixed={"s": 3.5, "n": 100, "gamma": 1.0})

The output is deterministic apart from the image bytes (the element id derives from the title, the
grid and the fixed values), so that nbval compares it once the base64 images are masked
(``book/nbval_sanitize.cfg``, passed to nbval by ``pyproject.toml``).
"""

from __future__ import annotations

import base64
import hashlib
import html as _html
import itertools
import json
import re
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numbers

from .._validate import check_flag, check_int
from ..plots import display_width, html, png_bytes
from ..plots import check_callable, check_items, check_sequence
from ..plots import check_text as _check_text


def label_html(text: str) -> str:
    """A label with TeX between dollars, as HTML: ``"$q$ (leave)"`` -> ``"<i>q</i> (leave)"``.

    Examples
    --------
    Scripts are Unicode characters where they can be (:func:`perfpriv.plots.html`):

    >>> label_html("initial $N_0$")
    'initial <i>N</i>₀'
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string; got {text!r:.60}")
    parts = re.split(r"\$([^$]*)\$", text)
    return "".join(html(part, unicode_scripts=True) if k % 2 else _html.escape(part) for k, part in enumerate(parts))


__all__ = ["StaticExplorer", "grid", "Grid", "MAX_BYTES", "label_html"]

#: Largest size of the stored images (base64 text, what the notebook and the page grow by).
MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class Grid:
    """The values one control of a :class:`StaticExplorer` steps through.

    Attributes
    ----------
    label : str
        Control label, TeX between dollars (``"$q$ (leave)"``) or HTML (``html=True``).
    values : tuple
        The values, in slider order.
    default, fmt : int, str
        Index of the value shown first, and format of the value read out next to the slider.
    html : bool
        Whether ``label`` is HTML already.
    """

    label: str
    values: tuple
    default: int = 0
    fmt: str = ".3g"
    html: bool = False

    def __post_init__(self):
        _check_text("label", self.label)
        values = tuple(check_sequence("values", self.values))
        if len(set(map(repr, values))) != len(values):
            raise ValueError(f"the values of the control {self.label!r} must be distinct; got {values!r:.60}")
        if any(isinstance(v, numbers.Real) and v != v for v in values):
            raise ValueError(f"values must not hold NaN (no slider position can show it); got {values!r:.60}")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "default", check_int("default", self.default, low=0, high=len(values) - 1))
        _check_text("fmt", self.fmt)
        check_flag("html", self.html)

    def label_html(self) -> str:
        """The label as HTML (TeX between dollars rendered by :func:`label_html`)."""
        return self.label if self.html else label_html(self.label)

    def text(self, k: int) -> str:
        """The read-out of value number k (0 <= k < len(values)): yes/no, the string, or the number in ``fmt``."""
        value = self.values[check_int("k", k, low=0, high=len(self.values) - 1)]
        if isinstance(value, bool):
            return "yes" if value else "no"
        return value if isinstance(value, str) else _fmt(value, self.fmt)


def grid(label: str, values: Sequence, default=None, *, fmt: str = ".3g", html: bool = False) -> Grid:
    """The values of one control; ``default`` is one of ``values`` (default: the first).

    Examples
    --------
    >>> g = grid(r"noise $\\gamma$", [0.5, 1.0, 2.0], default=1.0)
    >>> g.default, g.label_html()
    (1, 'noise <i>γ</i>')
    """
    _check_text("label", label)
    values = tuple(check_sequence("values", values))
    if len(set(map(repr, values))) != len(values):
        raise ValueError(f"the values of the control {label!r} must be distinct; got {values!r:.60}")
    if default is None:
        index = 0
    else:
        matches = [k for k, v in enumerate(values) if v == default]
        if not matches:
            raise ValueError(f"default {default!r:.30} of the control {label!r:.30} is not one of its values "
                             f"{values!r:.60}")
        index = matches[0]
    return Grid(label, values, index, fmt, html)


class StaticExplorer:
    """Precomputed figures of ``draw`` over a grid of control values, shown with kernel-free sliders.

    Parameters
    ----------
    title : str
        Shown above the controls and in the text representation.
    controls : mapping of str to Grid
        Keyword name of ``draw`` -> the values it steps through (:func:`grid`).
    draw : callable
        ``draw(**fixed, **{name: value}) -> matplotlib.figure.Figure``.
    fixed : mapping, optional
        The other keyword arguments of ``draw``, the same for every figure.
    fixed_labels : mapping of str to str, optional
        Labels (TeX between dollars) of the fixed values to list on the page;
        default: the names of ``fixed``.
    fixed_labels_html : bool
        Whether ``fixed_labels`` are HTML already (the descriptions of live controls).
    source : str, optional
        What to call the drawing function in the note (default its name).
    max_bytes : int
        Largest total size of the stored images (identical figures stored once); a larger grid raises
        a ``ValueError``.
    colors : int
        Colours of each stored PNG (at the density of :func:`perfpriv.plots.show`; a palette without
        dithering): 64 keeps line plots indistinguishable at half the size; 256 for heatmaps.

    Examples
    --------
    >>> from perfpriv.plots import new_figure
    >>> def draw(a, b):
    ...     fig, axes = new_figure(1, 1, width=2, height=1.5)
    ...     axes[0, 0].plot([0, 1], [a, b])
    ...     return fig
    >>> ex = StaticExplorer("line", {"a": grid("$a$", [0, 1]), "b": grid("$b$", [0, 1, 2], default=2)}, draw)
    >>> ex
    <static explorer 'line': a (2 values) x b (3 values), 6 figures>
    >>> ex.default
    {'a': 0, 'b': 2}
    """

    def __init__(self, title: str, controls: Mapping[str, Grid], draw: Callable[..., object], *,
                 fixed: Mapping | None = None, fixed_labels: Mapping[str, str] | None = None,
                 fixed_labels_html: bool = False, source: str | None = None, max_bytes: int = MAX_BYTES,
                 colors: int = 64):
        _check_text("title", title)
        for name, spec in check_items("controls", controls, "Grid", mapping=True):
            _check_text("each name of controls", name)
        check_callable("draw", draw)
        if fixed is not None:
            for name, _ in check_items("fixed", fixed, mapping=True, empty=True):
                _check_text("each name of fixed", name)
        if fixed_labels is not None:
            for name, label in check_items("fixed_labels", fixed_labels, mapping=True, empty=True):
                _check_text("each label of fixed_labels", label)
        check_flag("fixed_labels_html", fixed_labels_html)
        _check_text("source", source, optional=True)
        max_bytes = check_int("max_bytes", max_bytes, low=1)
        colors = check_int("colors", colors, low=1, high=256)
        self.title = title
        self.controls = dict(controls)
        self.fixed = dict(fixed or {})
        overlap = set(self.fixed) & set(self.controls)
        if overlap:
            raise ValueError(f"{sorted(overlap)} cannot be both a control and a fixed value")
        self.fixed_labels = dict(fixed_labels) if fixed_labels is not None else {k: k for k in self.fixed}
        self._fixed_labels_html = fixed_labels_html
        self.source = source or getattr(draw, "__qualname__", getattr(draw, "__name__", "draw"))
        self._draw = draw
        self.shape = tuple(len(spec.values) for spec in self.controls.values())
        self.images: list[str] = []          # unique data URIs
        self.index: list[int] = []           # flat grid position -> image
        self.width = 0
        seen: dict[bytes, int] = {}
        for combo in itertools.product(*(spec.values for spec in self.controls.values())):
            fig = draw(**self.fixed, **dict(zip(self.controls, combo)))
            self.width = max(self.width, display_width(fig))
            data = png_bytes(fig, colors=colors)
            key = hashlib.sha256(data).digest()
            if key not in seen:
                seen[key] = len(self.images)
                self.images.append("data:image/png;base64," + base64.b64encode(data).decode("ascii"))
            self.index.append(seen[key])
        total = sum(len(uri) for uri in self.images)
        if total > max_bytes:
            raise ValueError(f"the {len(self.index)} figures of {title!r} take {total / 1e6:.2f} MB, more than "
                             f"max_bytes = {max_bytes / 1e6:.2f} MB: use fewer values")

    @property
    def default(self) -> dict:
        """The control values shown first."""
        return {name: spec.values[spec.default] for name, spec in self.controls.items()}

    def position(self, **values) -> int:
        """Flat index (C order, the last control fastest) of a combination of grid values."""
        flat = 0
        for name, spec in self.controls.items():
            value = values.get(name, spec.values[spec.default])
            if value not in spec.values:
                raise ValueError(f"{name}={value!r} is not one of the precomputed values {spec.values}")
            flat = flat * len(spec.values) + spec.values.index(value)
        return flat

    def image(self, **values) -> str:
        """The data URI of the figure of a combination of grid values (default values elsewhere)."""
        return self.images[self.index[self.position(**values)]]

    @property
    def element_id(self) -> str:
        """HTML id of the explorer: from its title, grid and fixed values (never from image bytes)."""
        spec = json.dumps([self.title, [(n, [repr(v) for v in g.values], g.default) for n, g in self.controls.items()],
                           sorted((k, repr(v)) for k, v in self.fixed.items())])
        return "ppx-" + hashlib.sha256(spec.encode()).hexdigest()[:12]

    def __repr__(self) -> str:
        grid_text = " x ".join(f"{name} ({len(spec.values)} values)" for name, spec in self.controls.items())
        return f"<static explorer {self.title!r}: {grid_text}, {len(self.index)} figures>"

    def _note(self) -> str:

        def label(k):
            text = self.fixed_labels[k]
            return text if self._fixed_labels_html else label_html(text)

        fixed = ", ".join(f"{label(k)} = {_html.escape(_fmt(v))}" for k, v in self.fixed.items()
                          if k in self.fixed_labels)
        text = (f"Precomputed: {len(self.index)} figures drawn by <code>{_html.escape(self.source)}</code> "
                "when this notebook was executed; the sliders switch between them in your browser, "
                "with no Python running.")
        if fixed:
            text += f" Fixed: {fixed}."
        text += (" Other values need the live explorer above, which reruns the experiment: launch "
                 "<b>Binder</b> or <b>Live Code</b> from the rocket icon at the top of the page.")
        return text

    def _repr_html_(self) -> str:
        root = self.element_id
        rows = []
        any_wide = False
        for name, spec in self.controls.items():
            texts = [spec.text(k) for k in range(len(spec.values))]
            longest = max(len(t) for t in texts)
            # a value longer than its 3.5em box (e.g. "budget-aware (tolerance ρ)") gets a whole row and a box
            # as wide as its longest text, so that it never wraps and the track does not jump as it changes
            wide = longest > _SHORT_VALUE
            any_wide = any_wide or wide
            cls = "ppx-control ppx-wide" if wide else "ppx-control"
            box = f' style="min-width:{longest}ch"' if wide else ""
            rows.append(
                f'<label class="{cls}"><span class="ppx-name">{spec.label_html()}</span>'
                f'<input type="range" min="0" max="{len(spec.values) - 1}" step="1" value="{spec.default}" '
                f'data-control="{_html.escape(name)}" data-values="{_html.escape(json.dumps(texts))}" '
                f'aria-valuetext="{_html.escape(texts[spec.default])}">'
                f'<output class="ppx-value"{box}>{_html.escape(texts[spec.default])}</output></label>')
        flat = self.position()
        data = json.dumps({"shape": self.shape, "index": self.index, "images": self.images}, separators=(",", ":"))
        return (
            f'<div class="ppx" id="{root}" data-figures="{len(self.index)}">{_STYLE}{_WIDE_STYLE if any_wide else ""}'
            f'<div class="ppx-head"><b>{_html.escape(self.title)}</b>'
            f'<span class="ppx-badge">precomputed, no kernel needed</span></div>'
            f'<div class="ppx-controls">{"".join(rows)}</div>'
            f'<img class="ppx-frame" src="{self.images[self.index[flat]]}" width="{self.width}" '
            f'alt="{_html.escape(self.title)}: figure for the values on the sliders">'
            f'<p class="ppx-note">{self._note()}</p>'
            f'<script type="application/json" class="ppx-data">{data}</script>'
            f'<script>{_SCRIPT.replace("ROOT_ID", root)}</script></div>')


def _fmt(value, fmt: str = ".4g") -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value == float("inf"):
        return "∞"
    try:
        return format(value, fmt)
    except (TypeError, ValueError):
        return str(value)


#: Longest value text (characters) that fits the value box of a control sharing its row with others.
_SHORT_VALUE = 6

# The look of the controls: a grid of columns that keeps every track at least 7em long.
_STYLE = """<style>
.ppx{border:1px solid #d0d7de;border-radius:6px;padding:.6em .8em;margin:.5em 0;max-width:100%}
.ppx-head{display:flex;flex-wrap:wrap;gap:.2em .8em;align-items:baseline;margin-bottom:.3em}
.ppx-badge{font-size:.8em;color:#57606a;border:1px solid #d0d7de;border-radius:1em;padding:0 .6em}
.ppx-controls{display:grid;grid-template-columns:repeat(auto-fill,minmax(17em,1fr));gap:.2em 1.2em}
.ppx-control{display:flex;align-items:center;gap:.5em;margin:0}
.ppx-name{flex:0 0 6.5em;white-space:nowrap}
.ppx-control input[type=range]{flex:1 1 7em;min-width:7em;margin:0}
.ppx-value{flex:0 0 3.5em;text-align:right;font-variant-numeric:tabular-nums}
.ppx-frame{display:block;max-width:100%;height:auto;margin-top:.4em}
.ppx-note{font-size:.85em;color:#57606a;margin:.3em 0 0}
</style>"""

# Controls whose values are longer than the value box: a row of their own, values that never wrap.
_WIDE_STYLE = """<style>
.ppx-wide{grid-column:1/-1;flex-wrap:wrap}
.ppx-wide .ppx-value{flex:0 0 auto;text-align:left;white-space:nowrap}
</style>"""

# Kernel-free switching: the flat index of the slider positions picks a stored image.
_SCRIPT = """(function () {
  var root = document.getElementById("ROOT_ID");
  if (!root || root.dataset.ready) { return; }
  root.dataset.ready = "1";
  var data = JSON.parse(root.querySelector("script.ppx-data").textContent);
  var sliders = Array.prototype.slice.call(root.querySelectorAll("input[type=range]"));
  var frame = root.querySelector("img.ppx-frame");
  function update() {
    var flat = 0;
    sliders.forEach(function (slider, k) {
      var pos = parseInt(slider.value, 10);
      var texts = JSON.parse(slider.dataset.values);
      slider.setAttribute("aria-valuetext", texts[pos]);
      slider.parentNode.querySelector("output").textContent = texts[pos];
      flat = flat * data.shape[k] + pos;
    });
    frame.src = data.images[data.index[flat]];
    root.dataset.position = String(flat);
  }
  sliders.forEach(function (slider) { slider.addEventListener("input", update); });
  update();
}());"""
