r"""Sample means and their standard errors, for samples that may hold infinite or huge values.

A simulated error can be infinite (ε or γ so extreme that an estimate
overflows) or too large to square: its mean is then infinite or huge and
its standard error too, a true answer -- never a RuntimeWarning from
:math:`\infty - \infty` or an overflow inside ``numpy.std``, and never a NaN.
Moderate samples (every ordinary run) get exactly ``x.mean(axis)`` and
``x.std(axis, ddof=1) / sqrt(m)``, bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["mean_se", "standard_error", "euclidean_norms", "log_normal_density"]

#: Samples up to this size are squared as they are (their squares cannot overflow).
_PLAIN = 1e150
#: Norms from this size on come from the plain sum of squares (below it, squares may underflow).
_TINY = 1e-140



def float_or_array(x):
    """``x`` as a Python float when it is 0-d, as a float array otherwise (the results' convention)."""
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x

def mean_se(x, axis=-1):
    """Mean and standard error of the mean (ddof = 1) along ``axis``.

    One sample gives an infinite standard error (no spread to estimate
    from: no difference is resolved against it), a sample holding NaN a NaN
    mean and standard error, an infinite sample an infinite mean and standard
    error; finite samples too large to square are scaled by their largest
    value first.

    Examples
    --------
    >>> mean, se = mean_se([[1.0, 3.0], [np.inf, 1.0], [1e300, 3e300]])
    >>> mean.tolist(), se.tolist()
    ([2.0, inf, 2e+300], [1.0, inf, 1e+300])
    >>> float(mean_se([2.0])[1])
    inf
    """
    x = np.asarray(x, dtype=float)
    m = x.shape[axis]
    if m < 2:
        mean = x.mean(axis=axis)
        return mean, np.where(np.isnan(mean), np.nan, np.inf)
    plain = np.abs(x) <= _PLAIN
    if plain.all():                                       # every ordinary sample: numpy's numbers, unchanged
        return x.mean(axis=axis), x.std(axis=axis, ddof=1) / math.sqrt(m)
    rows = plain.all(axis=axis, keepdims=True)
    safe = np.where(rows, x, 0.0)
    mean, se = safe.mean(axis=axis), safe.std(axis=axis, ddof=1) / math.sqrt(m)
    finite = np.isfinite(x).all(axis=axis, keepdims=True)
    huge = ~rows & finite                                 # finite but too large to square: scale first
    scale = np.where(huge, np.max(np.abs(np.where(huge, x, 1.0)), axis=axis, keepdims=True), 1.0)
    scaled = np.where(huge, x, 0.0) / scale
    with np.errstate(over="ignore"):                      # a standard error beyond the largest double is inf
        big_mean = np.squeeze(scaled.mean(axis=axis, keepdims=True) * scale, axis=axis)
        big_se = np.squeeze(scaled.std(axis=axis, ddof=1, keepdims=True) / math.sqrt(m) * scale, axis=axis)
    huge, finite = np.squeeze(huge, axis=axis), np.squeeze(finite, axis=axis)
    mean, se = np.where(huge, big_mean, mean), np.where(huge, big_se, se)
    nan = np.isnan(x).any(axis=axis)
    infinite = ~finite & ~nan                             # an infinite error: infinite mean and standard error
    with np.errstate(invalid="ignore"):                   # +inf and -inf together: no mean (NaN, as numpy)
        inf_mean = np.where(np.isinf(x), x, 0.0).sum(axis=axis)
    mean = np.where(infinite, inf_mean, np.where(nan, np.nan, mean))
    se = np.where(infinite, np.inf, np.where(nan, np.nan, se))
    return mean, se


def standard_error(values, axis=-1):
    """Standard error of the mean along ``axis``: ``inf`` (no estimate) from a single run.

    The standard error of :func:`mean_se`, without the mean.

    Examples
    --------
    >>> standard_error([[1.0, 3.0]]).tolist(), standard_error([[2.0]]).tolist()
    ([1.0], [inf])
    """
    return mean_se(values, axis=axis)[1]


def euclidean_norms(x):
    """Euclidean norms of the vectors along the last axis, without underflow or overflow.

    Moderate vectors get exactly ``sqrt(einsum("...i,...i->...", x, x))``;
    a vector whose plain norm is below 1e-140 or above 1e150 (or not finite)
    is first divided by its largest absolute entry, so that a shift of
    1e-301 keeps its size instead of squaring to 0.

    Examples
    --------
    >>> euclidean_norms([[3.0, 4.0], [3e-300, 4e-300], [3e300, 4e300], [0.0, 0.0]]).tolist()
    [5.0, 5e-300, 5e+300, 0.0]
    >>> float(euclidean_norms([1e-200]))
    1e-200
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore", under="ignore"):
        out = np.sqrt(np.einsum("...i,...i->...", x, x))
    redo = ~((out >= _TINY) & (out <= _PLAIN))
    if np.any(redo):
        rows = x[redo] if x.ndim > 1 else x[None, :]
        scale = np.max(np.abs(rows), axis=-1)
        safe = np.where(scale > 0, scale, 1.0)
        with np.errstate(invalid="ignore"):
            scaled = scale * np.sqrt(np.einsum("...i,...i->...", rows / safe[:, None], rows / safe[:, None]))
        if x.ndim > 1:
            out = np.array(out, dtype=float)
            out[redo] = scaled
        else:
            out = scaled[0]
    return out


def log_normal_density(x, mean, var):
    r"""Log density of :math:`\mathcal{N}(\mathrm{mean}, \mathrm{var}\, I_d)` at x (shape (d,)), written out;
    ``mean`` of shape (..., d) gives one value per row (the agent references' likelihood ratios)."""
    diff = np.asarray(x, float) - np.asarray(mean, float)
    return -0.5 * diff.shape[-1] * math.log(2 * math.pi * var) - 0.5 * np.einsum("...i,...i->...", diff, diff) / var
