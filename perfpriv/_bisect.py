"""Bisection on a log scale for the boundary of a monotone survival set (vectorized over cells).

The survival thresholds of users whose reaction depends on the privacy they
spend (:class:`perfpriv.behaviour.BudgetAware`) have no closed form: whether
a population survives at a privacy level is a yes/no question, monotone in the
level, asked for a whole array of cells at once. This module holds the one
bisection that answers it, for :func:`perfpriv.dynamics.exact_critical_gamma`
and :func:`perfpriv.feedback.critical_epsilon`.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["bisect_log_boundary"]


def bisect_log_boundary(survives, lo, hi, shape, *, increasing, iterations=80):
    """Boundary of a monotone survival set on log level between ``lo`` and ``hi`` (vectorized).

    Parameters
    ----------
    survives : callable
        Maps an array of levels of ``shape`` to a boolean array of ``shape``.
    lo, hi, shape : float, float, tuple
        The search interval, 0 < lo < hi, and the shape of the cells.
    increasing : bool
        True: the set is the levels at or above the threshold (a noise scale
        γ); False: at or below it (a budget ε).
    iterations : int
        Halvings of the log interval.

    Returns
    -------
    numpy.ndarray
        The end of the final interval inside the survival set, per cell (the
        caller decides what a cell that survives at both ends, or at neither,
        means).

    Examples
    --------
    >>> float(bisect_log_boundary(lambda x: x >= 2.0, 1.0, 8.0, (), increasing=True, iterations=60))
    2.0
    """
    a = np.full(shape, math.log(lo))
    b = np.full(shape, math.log(hi))
    for _ in range(iterations):
        mid = 0.5 * (a + b)
        ok = survives(np.exp(mid))
        if increasing:           # survival for levels >= the threshold (noise γ)
            b, a = np.where(ok, mid, b), np.where(ok, a, mid)
        else:                    # survival for levels <= the threshold (budget ε)
            a, b = np.where(ok, mid, a), np.where(ok, b, mid)
    return np.exp(b if increasing else a)
