"""Argument checks shared by the modules of :mod:`perfpriv.performative`."""

from __future__ import annotations

import numpy as np

from .._validate import check_real

__all__ = ["model_vector"]


def model_vector(name, value, d, **bounds):
    """A model (or location) of d coordinates: a number is repeated, a vector must have length d.

    ``bounds`` (``low``, ``high``, ...) are the allowed range, passed to ``check_real``.

    Examples
    --------
    >>> model_vector("theta0", 2.0, 3).tolist()
    [2.0, 2.0, 2.0]
    """
    arr = np.asarray(check_real(name, value, **bounds), dtype=float).reshape(-1)
    if arr.size == 1:
        arr = np.full(d, float(arr[0]))
    if arr.shape != (d,):
        raise ValueError(f"{name} must be a number or a vector of d={d} coordinates; got shape {arr.shape}")
    return arr
