"""The one widget pattern of the book: controls on top, a figure below.

An :class:`Explorer` takes ipywidgets controls and a drawing function ``draw(**values) -> Figure``. It
draws once when built (so that the stored notebook and the static HTML show the default figure) and
again whenever a control changes; its text representation lists the current values only, so that
nbval compares a stable line rather than image bytes. Control labels are written like figure labels,
TeX between dollars (``"$q$ (leave)"``), shown as HTML by :func:`label_html`; the controls sit in a
grid of columns at least :data:`CONTROL_WIDTH` wide, so that a slider keeps its track in the book's
narrow text column.
"""

from __future__ import annotations

import html as _html

from typing import Callable, Mapping, Sequence

import ipywidgets as widgets

from .._validate import check_flag, check_int, check_real
from ..plots import show
from ..plots import check_callable, check_items, check_sequence
from ..plots import check_text as _check_text
from ._describe import check_words, figure_alt, format_value, plain_text
from ._static import MAX_BYTES, StaticExplorer, grid, label_html

__all__ = ["Explorer", "float_slider", "log_slider", "int_slider", "checkbox", "label_html", "CONTROL_WIDTH"]

#: Smallest width of a control's column (description, track and readout).
CONTROL_WIDTH = "19em"
#: Width of every control's description, so that the tracks line up.
_DESCRIPTION_WIDTH = "6.5em"


def _description(description):
    if not isinstance(description, str):
        raise TypeError(f"description must be a string (TeX between dollars allowed); got {description!r:.60}")
    return description


def _control(cls, description: str, **kwargs):
    _description(description)
    return cls(description=label_html(description), description_allow_html=True,
               style={"description_width": _DESCRIPTION_WIDTH}, layout=widgets.Layout(width="auto"),
               **kwargs)


def named_control(name, make, *args, **kwargs):
    """``make(*args, **kwargs)`` (a control), its argument error naming the explorer's parameter ``name``:
    ``epsilon: value must be in [0.01, 20]; got 0`` rather than a bare ``value``."""
    try:
        return make(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"{name}: {exc}") from None


def _range(value, low, high, *, check=check_real, positive=False):
    """value, low, high checked: finite numbers (integers for ``check_int``), low < high, value in [low, high]."""
    if check is check_int:
        low, high = check_int("low", low), check_int("high", high)
    else:
        low = check_real("low", low, low=0 if positive else None, low_open=positive, scalar=True)
        high = check_real("high", high, scalar=True)
    if not low < high:
        raise ValueError(f"high must be above low; got low={low!r}, high={high!r}")
    value = check_int("value", value, low=low, high=high) if check is check_int else \
        check_real("value", value, low=low, high=high, scalar=True)
    return value, low, high


def float_slider(description: str, value: float, low: float, high: float, step: float, **kwargs):
    """A linear slider that only fires when released (``description`` may hold TeX between dollars)."""
    value, low, high = _range(value, low, high)
    step = check_real("step", step, low=0, low_open=True, high=high - low, scalar=True)
    return _control(widgets.FloatSlider, description, value=value, min=low, max=high, step=step,
                    continuous_update=False, **kwargs)


def log_slider(description: str, value: float, low: float, high: float, **kwargs):
    """A slider on a log scale (``low``/``high`` are values, not exponents)."""
    import math

    value, low, high = _range(value, low, high, positive=True)
    return _control(widgets.FloatLogSlider, description, value=value, base=10, min=math.log10(low),
                    max=math.log10(high), step=0.05, continuous_update=False, readout_format=".3g", **kwargs)


def int_slider(description: str, value: int, low: int, high: int, step: int = 1, **kwargs):
    """An integer slider that only fires when released."""
    value, low, high = _range(value, low, high, check=check_int)
    step = check_int("step", step, low=1, high=high - low)
    return _control(widgets.IntSlider, description, value=value, min=low, max=high, step=step,
                    continuous_update=False, **kwargs)


def checkbox(description: str, value: bool = False, **kwargs):
    """A check box (``description`` may hold TeX between dollars)."""
    _description(description)
    value = check_flag("value", value)
    return widgets.Checkbox(value=value, description=label_html(description), description_allow_html=True,
                            indent=False, layout=widgets.Layout(width="auto"), **kwargs)


class Explorer(widgets.VBox):
    """Controls that rerun an experiment and redraw its figure.

    Parameters
    ----------
    title : str
        Short name shown above the controls and in the text representation.
    controls : mapping of str to ipywidgets.ValueWidget
        Keyword name of ``draw`` -> control.
    draw : callable
        ``draw(**{name: control.value}) -> matplotlib.figure.Figure``.
    columns : int
        Most controls per row (fewer where the page is too narrow for them).
    source : str, optional
        How the page names the drawing function (e.g. ``"perfpriv.widgets.mia_draw"``).
    static_grid : mapping of str to sequence, optional
        Default values of the main controls for :meth:`static`.
    plotted : str, optional
        What the figure plots, in a few words: the start of its alt text (:attr:`alt`).

    Attributes
    ----------
    alt : str
        The alt text of the figure shown (:func:`perfpriv.widgets._describe.figure_alt`), updated on
        every redraw; it sits in a visually hidden element of class ``pp-figure-alt``, which
        ``book/_static/perfpriv.js`` copies to the image's ``alt``.
    """

    def __init__(self, title: str, controls: Mapping[str, widgets.ValueWidget],
                 draw: Callable[..., object], *, columns: int = 3, source: str | None = None,
                 static_grid: Mapping[str, Sequence] | None = None, plotted: str | None = None):
        _check_text("title", title)
        for name, control in check_items("controls", controls, mapping=True):
            _check_text("each name of controls", name)
            if not isinstance(control, widgets.ValueWidget):
                raise TypeError(f"each value of controls must be an ipywidgets control (e.g. from float_slider); "
                                f"got {control!r:.60}")
        check_callable("draw", draw)
        columns = check_int("columns", columns, low=1, high=12)
        _check_text("source", source, optional=True)
        check_words("plotted", plotted, optional=True)
        if static_grid is not None:
            for name, choices in check_items("static_grid", static_grid, mapping=True, empty=True):
                check_sequence(f"static_grid[{name!r:.20}]", choices)
        self.title = title
        self.controls = dict(controls)
        self._draw = draw
        self.source = source or getattr(draw, "__qualname__", "draw")
        self.static_grid = dict(static_grid or {})
        self.plotted = plotted
        self.alt = ""
        # the figure's description, for assistive technology: visually hidden, copied to the image's alt
        # (a box of no height: the widget manager gives an HTML widget a line's height otherwise)
        self.alt_text = widgets.HTML(layout=widgets.Layout(margin="0", height="0px", min_height="0px"))
        self.alt_text.add_class("pp-figure-alt-box")
        unknown = set(self.static_grid) - set(self.controls)
        if unknown:
            raise ValueError(f"static_grid names unknown controls {sorted(unknown)}")
        self.output = widgets.Output()
        self.message = widgets.HTML()
        items = list(self.controls.values())
        # a grid rather than rows of a fixed count: columns at least CONTROL_WIDTH wide, as many as
        # fit (at most ``columns``), so that no slider is squeezed down to its knob
        grid = widgets.GridBox(items, layout=widgets.Layout(
            grid_template_columns=f"repeat(auto-fill, minmax(max({CONTROL_WIDTH}, calc(100% / {columns} - 1em)), 1fr))",
            grid_gap="0.2em 1em", width="100%"))
        super().__init__([widgets.HTML(f"<b>{title}</b>"), grid, self.message, self.alt_text, self.output])
        for control in items:
            control.observe(self._on_change, names="value")
        # the first drawing raises: a broken explorer must fail the notebook
        # (and nbval), not hide a one-line message in a stored widget
        self.refresh(raise_errors=True)

    @property
    def values(self) -> dict:
        """Current value of every control."""
        return {name: control.value for name, control in self.controls.items()}

    def _on_change(self, _change) -> None:
        self.refresh()

    def refresh(self, raise_errors: bool = False) -> None:
        """Rerun the experiment with the current values and redraw.

        A :class:`ValueError` (an inadmissible combination of slider values) is shown as one line
        above the figure instead of a traceback, unless ``raise_errors``.
        """
        raise_errors = check_flag("raise_errors", raise_errors)    # (it is also show's check_layout)
        with self.output:
            self.output.clear_output(wait=True)
            try:
                fig = self._draw(**self.values)
            except ValueError as exc:
                if raise_errors:
                    raise
                self.message.value = f"<span style='color:#b00'>{exc}</span>"
                return
            self.message.value = ""
            # the description first, so that the page finds it when the new image arrives
            self._describe(fig)
            show(fig, check_layout=raise_errors)     # the first drawing only: redraws stay fast

    def describe_values(self) -> str:
        """The current values as the alt text says them: ``budget ε = 0.5, q (leave) = 0.3, ...``."""
        parts = []
        for control in self.controls.values():
            label = plain_text(control.description or "")
            value = control.value
            if isinstance(control, widgets.Checkbox):
                parts.append(f"{label}: {'yes' if value else 'no'}")
            elif isinstance(value, str):
                parts.append(f"{label}: {value}")
            else:
                parts.append(f"{label} = {format_value(value)}")
        return ", ".join(parts)

    def _describe(self, fig) -> None:
        self.alt = figure_alt(self.title, self.plotted, self.describe_values(), fig)
        self.alt_text.value = (f'<span class="pp-figure-alt" style="{_VISUALLY_HIDDEN}">'
                               f'{_html.escape(self.alt)}</span>')

    def static(self, max_bytes: int | None = None, **values) -> "StaticExplorer":
        """A kernel-free version of this explorer, for the published page and offline reading.

        This explorer's figure for every combination of the given values of some controls (default
        :attr:`static_grid`), the others at their current values. Each current value must be among
        the given ones, so that the static version opens on the figure the live one shows.

        Parameters
        ----------
        max_bytes : int, optional
            Size limit of the stored images (default about 1 MB).
        **values : sequence
            Control name -> the values its slider steps through.

        Returns
        -------
        perfpriv.widgets.StaticExplorer
        """

        values = values or self.static_grid
        if not values:
            raise ValueError("give the values of at least one control, e.g. static(gamma=[1, 2, 4])")
        current = self.values
        controls = {}
        for name, choices in values.items():
            if name not in self.controls:
                raise ValueError(f"{name!r} is not a control of this explorer; its controls are {list(self.controls)}")
            if current[name] not in tuple(choices):
                raise ValueError(f"the values of {name!r} must include its current value {current[name]!r}")
            controls[name] = grid(self.controls[name].description, choices, current[name],
                                  fmt=_readout_format(self.controls[name]), html=True)
        fixed = {k: v for k, v in current.items() if k not in controls}
        labels = {k: self.controls[k].description for k in fixed}
        return StaticExplorer(self.title, controls, self._draw, fixed=fixed, fixed_labels=labels,
                              fixed_labels_html=True, source=self.source,
                              max_bytes=MAX_BYTES if max_bytes is None else max_bytes)

    def __repr__(self) -> str:
        values = ", ".join(f"{name}={_fmt(value)}" for name, value in self.values.items())
        return f"<{self.title} explorer: {values}>"


#: hidden from sight, not from screen readers (the usual "visually hidden" rules)
_VISUALLY_HIDDEN = ("position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;"
                    "clip:rect(0,0,0,0);white-space:nowrap;border:0")


def _readout_format(control) -> str:
    fmt = getattr(control, "readout_format", None)
    if isinstance(control, widgets.IntSlider):
        return "d"
    return fmt if fmt else ".3g"


def _fmt(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
