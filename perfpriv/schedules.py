"""Privacy schedules: a privacy level that changes from round to round.

The paper keeps the privacy level fixed over the horizon and, in its
discussion (§5), suggests that varying it over time could lower the error
accumulated along the whole trajectory. A schedule is an
:class:`perfpriv.engine.Schedule` -- round t uses ``values[t-1]`` -- and
every mechanism, simulator and mean-field function accepts one wherever it
accepts a level. This module holds the families of schedules a practitioner
can deploy (levels γ or ε > 0 over a horizon of T >= 1 rounds); :mod:`perfpriv.optimize`
finds the best ones and :mod:`perfpriv.experiments` compares them by simulation.

References
----------
Paper §5 (discussion: time-varying privacy).
"""

from __future__ import annotations

import numpy as np

from ._validate import check_allocation, check_int, check_real
from .engine import Schedule

__all__ = ["Schedule", "constant", "two_phase", "geometric"]


def constant(level, T):
    """The constant schedule: ``level`` in each of the T rounds.

    Examples
    --------
    >>> constant(2.0, 3).values.tolist()
    [2.0, 2.0, 2.0]
    """
    level = check_real("level", level, low=0, low_open=True, scalar=True, allow_inf=True)
    T = check_int("T", T, low=1)
    check_allocation("the schedule (T levels)", T, name="T")
    return Schedule(np.full(T, level))


def two_phase(first, then, switch, T):
    """"Protect then exploit": level ``first`` for rounds 1..switch, ``then`` afterwards.

    Parameters
    ----------
    first, then : float
        The levels of the two phases.
    switch, T : int
        Number of rounds of the first phase, 0 <= switch <= T, and the horizon.

    Returns
    -------
    perfpriv.engine.Schedule

    Examples
    --------
    >>> two_phase(4.0, 1.0, 2, 4).values.tolist()
    [4.0, 4.0, 1.0, 1.0]
    """
    first = check_real("first", first, low=0, low_open=True, scalar=True, allow_inf=True)
    then = check_real("then", then, low=0, low_open=True, scalar=True, allow_inf=True)
    T = check_int("T", T, low=1)
    check_allocation("the schedule (T levels)", T, name="T")
    switch = check_int("switch", switch, low=0, high=T)
    return Schedule(np.where(np.arange(T) < switch, first, then).astype(float))


def geometric(start, ratio, T):
    """Geometric schedule: level ``start · ratio^(t-1)`` in round t.

    Parameters
    ----------
    start, ratio : float
        Level of the first round and factor between consecutive rounds, > 0 (< 1: decreasing).
    T : int

    Returns
    -------
    perfpriv.engine.Schedule

    Examples
    --------
    >>> np.round(geometric(8.0, 0.5, 4).values, 3).tolist()
    [8.0, 4.0, 2.0, 1.0]
    """
    start = check_real("start", start, low=0, low_open=True, scalar=True)
    ratio = check_real("ratio", ratio, low=0, low_open=True, scalar=True)
    T = check_int("T", T, low=1)
    check_allocation("the schedule (T levels)", T, name="T")
    with np.errstate(over="ignore", under="ignore"):
        values = start * ratio ** np.arange(T, dtype=float)
    if not np.all(np.isfinite(values) & (values > 0)):
        raise ValueError(f"geometric(start={start!r}, ratio={ratio!r}, T={T}) leaves the floating-point range; "
                         "use a ratio closer to 1 or a shorter horizon")
    return Schedule(values)
