"""The one widget pattern of the book: controls on top, a figure below.

An :class:`Explorer` takes a dictionary of ipywidgets controls and a drawing
function ``draw(**values) -> Figure``. It draws once when it is built (so that
the stored notebook and the static HTML show the default-value figure) and
again whenever a control changes. Its text representation lists the current
values only, so that nbval compares a stable line rather than image bytes.
"""

from __future__ import annotations

from typing import Callable, Mapping

import ipywidgets as widgets

from ..plots import show

__all__ = ["Explorer", "float_slider", "log_slider", "int_slider"]


def float_slider(description: str, value: float, low: float, high: float, step: float, **kwargs):
    """A linear slider that only fires when released."""
    return widgets.FloatSlider(value=value, min=low, max=high, step=step, description=description,
                               continuous_update=False, style={"description_width": "initial"}, **kwargs)


def log_slider(description: str, value: float, low: float, high: float, **kwargs):
    """A slider on a log scale (``low``/``high`` are values, not exponents)."""
    import math

    return widgets.FloatLogSlider(value=value, base=10, min=math.log10(low), max=math.log10(high),
                                  step=0.05, description=description, continuous_update=False,
                                  style={"description_width": "initial"}, readout_format=".3g", **kwargs)


def int_slider(description: str, value: int, low: int, high: int, step: int = 1, **kwargs):
    """An integer slider that only fires when released."""
    return widgets.IntSlider(value=value, min=low, max=high, step=step, description=description,
                             continuous_update=False, style={"description_width": "initial"}, **kwargs)


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
        Number of controls per row.
    """

    def __init__(self, title: str, controls: Mapping[str, widgets.ValueWidget],
                 draw: Callable[..., object], *, columns: int = 3):
        self.title = title
        self.controls = dict(controls)
        self._draw = draw
        self.output = widgets.Output()
        self.message = widgets.HTML()
        items = list(self.controls.values())
        rows = [widgets.HBox(items[i:i + columns]) for i in range(0, len(items), columns)]
        super().__init__([widgets.HTML(f"<b>{title}</b>"), *rows, self.message, self.output])
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

        A :class:`ValueError` from perfpriv (an inadmissible combination of
        values chosen with the sliders) is shown as one line above the figure
        instead of a traceback, unless ``raise_errors`` is true.
        """
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
            show(fig)

    def __repr__(self) -> str:
        values = ", ".join(f"{name}={_fmt(value)}" for name, value in self.values.items())
        return f"<{self.title} explorer: {values}>"


def _fmt(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
