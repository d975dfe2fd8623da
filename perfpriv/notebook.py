"""Notebook conveniences for readers of the book.

:func:`brief_errors` makes an invalid argument given to a perfpriv function
show up in Jupyter as one clear line (``ValueError: q must be in [0, 1]; got
1.5``) instead of a traceback through the library's validation code. Errors
raised anywhere else keep their full traceback.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

__all__ = ["brief_errors"]

_PACKAGE_DIR = str(Path(__file__).resolve().parent)


def _raised_by_perfpriv(tb) -> bool:
    frames = traceback.extract_tb(tb)
    return bool(frames) and str(Path(frames[-1].filename).resolve()).startswith(_PACKAGE_DIR)


def brief_errors(shell=None) -> None:
    """Show perfpriv's ``ValueError``/``TypeError`` as one line in IPython.

    Parameters
    ----------
    shell : IPython.core.interactiveshell.InteractiveShell, optional
        The shell to configure (default: the running one).

    Notes
    -----
    In plain Python (no running IPython shell) nothing changes.

    Examples
    --------
    >>> brief_errors()   # outside IPython: nothing to configure
    """
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover - IPython is a dependency of ipywidgets
            return
        shell = get_ipython()
    if shell is None:
        return
    if not callable(getattr(shell, "set_custom_exc", None)):
        raise TypeError(f"shell must be an IPython InteractiveShell (or None for the running one); got {shell!r:.60}")

    def handler(shell, etype, value, tb, tb_offset=None):
        if _raised_by_perfpriv(tb):
            print(f"{etype.__name__}: {value}", file=sys.stderr)
            return None
        return shell.showtraceback((etype, value, tb), tb_offset=tb_offset)

    shell.set_custom_exc((ValueError, TypeError), handler)
