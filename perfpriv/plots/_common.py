"""Shared plotting conventions: one pinned style and a figure display helper.

Every figure function of :mod:`perfpriv.plots` draws inside :func:`style` so that
a fresh build looks the same whatever the reader's matplotlib defaults, and
returns the :class:`matplotlib.figure.Figure` (never calls ``plt.show``).
"""

from __future__ import annotations

import contextlib
import io

import matplotlib


import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["style", "new_figure", "show", "STYLE"]

#: rcParams pinned for every figure of the book (fonts that every machine has,
#: modest resolution so that stored notebooks stay small).
STYLE = {
    "figure.dpi": 80,
    "savefig.dpi": 80,
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "legend.fontsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "image.cmap": "viridis",
}


@contextlib.contextmanager
def style():
    """Context manager applying :data:`STYLE` (and nothing else)."""
    with plt.rc_context(STYLE):
        yield


def new_figure(nrows: int = 1, ncols: int = 1, *, width: float = 4.2, height: float = 3.2, **kwargs):
    """Create a figure of ``nrows x ncols`` panels, each ``width x height`` inches.

    The figure is detached from pyplot's state machine (it is not shown
    automatically by the inline backend), so a notebook cell displays it only
    when it is passed to :func:`show`.
    """
    from matplotlib.figure import Figure

    with style():
        fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False, **kwargs)
    return fig, axes


def show(fig) -> None:
    """Display ``fig`` in a notebook as a PNG image only.

    Unlike the default display of a figure this emits no ``<Figure size ...>``
    text, whose format changes across matplotlib versions (nbval compares the
    text outputs of stored notebooks).
    """
    from IPython import get_ipython
    from IPython.display import display

    if get_ipython() is None:  # plain Python: there is nowhere to display an image
        return
    buffer = io.BytesIO()
    with style():
        fig.savefig(buffer, format="png", dpi=STYLE["savefig.dpi"])
    display({"image/png": buffer.getvalue()}, raw=True)

