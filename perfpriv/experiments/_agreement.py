"""Monte Carlo agreement: an estimate against the value it should equal, in standard errors."""

from __future__ import annotations


import numpy as np

from .._stats import mean_se, standard_error
from .._validate import check_choice, check_int, check_real, check_same_shape
from ._common import Result, result

__all__ = ["Agreement", "agreement", "mc_agreement", "paired_agreement"]

#: The sides an agreement check can take (see :class:`Agreement`).
SIDES = ("both", "below", "above")


@result
class Agreement(Result):
    r"""An estimate, the value it should equal and its standard error: does it agree within ``z`` se?

    Made by :func:`agreement`, :func:`mc_agreement` and :func:`paired_agreement`. Arrays broadcast:
    every entry is one check.

    Attributes
    ----------
    estimate, expected, se : float or numpy.ndarray
        The Monte Carlo estimate :math:`\hat\theta`, the value :math:`\theta` it should equal and the
        standard error :math:`s` of the estimate (they broadcast).
    z, side : float, str
        The tolerance :math:`z` in standard errors, and the claim: ``"both"``
        (:math:`\hat\theta = \theta`), ``"below"`` (:math:`\hat\theta \le \theta`: ``expected`` is an
        upper bound) or ``"above"`` (a lower bound).
    """

    estimate: float | np.ndarray
    expected: float | np.ndarray
    se: float | np.ndarray
    z: float
    side: str

    @property
    def z_score(self):
        r"""The standardized difference :math:`(\hat\theta - \theta) / s`.

        0 where the estimate equals the expected value (also at :math:`s = 0`), :math:`\pm\infty` where
        :math:`s = 0` and they differ.
        """
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):    # beyond the doubles: +-inf
            diff = np.subtract(self.estimate, self.expected)
            score = np.where(diff == 0, 0.0, diff / self.se)
        return score[()] if score.ndim == 0 else score

    @property
    def holds(self) -> bool:
        r"""Whether every entry agrees: :math:`|\hat\theta - \theta| \le z s` (``side="both"``).

        One-sided: :math:`\hat\theta - \theta \le z s` (``"below"``),
        :math:`\hat\theta - \theta \ge -z s` (``"above"``).
        """
        return bool(np.all(self._agrees()))

    def _agrees(self):
        with np.errstate(over="ignore"):
            diff, bar = np.subtract(self.estimate, self.expected), self.z * np.asarray(self.se)
        if self.side == "below":
            return diff <= bar
        if self.side == "above":
            return diff >= -bar
        return np.abs(diff) <= bar

    def check(self, label: str | None = None) -> None:
        """Raise :class:`AssertionError` unless the check :attr:`holds`; return ``None`` (nothing to display).

        Parameters
        ----------
        label : str, optional
            What is checked, put in front of the message.

        Raises
        ------
        AssertionError
            One line naming the estimate, the expected value, the se, its z-score and the bound (for
            arrays: the worst entry and how many fail).
        """
        if label is not None and not isinstance(label, str):
            raise TypeError(f"label must be a string or None; got {label!r:.60}")
        agrees = np.broadcast_to(self._agrees(), np.shape(self.z_score))
        if agrees.all():
            return
        score = np.broadcast_to(self.z_score, agrees.shape)
        excess = {"below": score, "above": -score}.get(self.side, np.abs(score))
        worst = np.unravel_index(np.argmax(np.where(agrees, -np.inf, excess)), agrees.shape) if agrees.ndim else ()
        pick = lambda v: float(np.broadcast_to(v, agrees.shape)[worst])   # noqa: E731
        where = ""
        if agrees.ndim:
            index = worst[0] if len(worst) == 1 else tuple(int(k) for k in worst)
            where = f"; {int((~agrees).sum())} of {agrees.size} entries fail, the worst at index {index}"
        bound = {"both": f"|z| <= {self.z:g}", "below": f"z <= {self.z:g} (expected is an upper bound)",
                 "above": f"z >= -{self.z:g} (expected is a lower bound)"}[self.side]
        raise AssertionError(f"{label + ': ' if label else ''}estimate {pick(self.estimate):.6g} against expected "
                             f"{pick(self.expected):.6g}, se {pick(self.se):.3g}: z = {pick(score):+.2f}, "
                             f"outside {bound}{where}")


def _check_values(name, value, **limits):
    """:func:`check_real`, but an empty array passes (a check of no entries holds, as ``np.all`` of nothing)."""
    try:
        empty = not isinstance(value, (str, bytes)) and value is not None and np.size(value) == 0
    except (TypeError, ValueError):     # ragged: check_real names it
        empty = False
    return np.zeros(np.shape(value)) if empty else check_real(name, value, **limits)


def _check_z_side(z, side):
    z = check_real("z", z, low=0.0, low_open=True, scalar=True)
    return z, check_choice("side", side, SIDES)


def _check_samples(name, samples):
    """A finite real sample (booleans count as 0/1): the array to average, in its own dtype when whole."""
    try:
        raw = np.asarray(samples)
    except (TypeError, ValueError):        # ragged: check_real names it
        raw = None
    if raw is not None and raw.dtype == bool:
        check_real(name, raw.astype(float))     # only its emptiness can be wrong
        return raw
    arr = check_real(name, samples)
    return raw if raw.dtype.kind in "iu" or raw.dtype == np.float64 else arr


def _mean_and_se(name, x, axis):
    """Mean and standard error (``std(ddof=1) / sqrt(m)``) along ``axis``, as the chapters computed them."""
    if axis is None:
        x, axis = x.reshape(-1), -1
    else:
        axis = check_int("axis", axis, low=-max(x.ndim, 1), high=max(x.ndim, 1) - 1)
        if x.ndim == 0:
            raise ValueError(f"{name} must be an array with at least 2 values along axis {axis}; got one number")
    m = x.shape[axis]
    if m < 2:
        raise ValueError(f"{name} must hold at least 2 values along axis {axis} (a standard error needs a "
                         f"spread); got shape {x.shape}")
    if x.dtype == np.float64:        # mean_se: the same numbers, and no overflow for samples too large to square
        return mean_se(x, axis=axis)
    return x.mean(axis=axis), standard_error(x, axis=axis)


def _agreement(estimate, expected, se, z, side) -> Agreement:
    scalar = lambda v: v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v   # noqa: E731
    return Agreement(scalar(estimate), scalar(expected), scalar(se), z, side)


def agreement(estimate, expected, *, se, z=4.5, side="both") -> Agreement:
    r"""Check an estimate whose standard error is known against the value it should equal.

    For standard errors from a formula: the delta method, a binomial proportion
    :math:`\sqrt{p(1-p)/m}`, a sample variance :math:`v \sqrt{2/(m-1)}`, or the unpaired difference of
    two independent estimates :math:`\sqrt{s_1^2 + s_2^2}`. At :math:`z = 4.5` a true claim fails about
    once in 150,000 checks (normal tails): a failed assertion points at a wrong claim, not at bad luck.
    Empty arrays agree (as ``np.all`` of nothing), so ``estimate[mask]`` needs no guard.

    Parameters
    ----------
    estimate, expected, se : float or array_like
        The estimate :math:`\hat\theta`, the value :math:`\theta` it should equal and its standard error
        :math:`s \ge 0` (finite; they broadcast; :math:`s = 0`: only exact equality agrees).
    z, side : float, {"both", "below", "above"}, optional
        The tolerance :math:`z > 0` in standard errors (default 4.5, the book's) and the claim
        (:class:`Agreement`: ``"below"`` lets the estimate lie anywhere below ``expected``).

    Returns
    -------
    Agreement

    Raises
    ------
    ValueError
        If a value is NaN or infinite, ``se`` is negative, ``z`` is not positive, the shapes do not
        broadcast or ``side`` is unknown.

    See Also
    --------
    mc_agreement : the mean of a sample against its expected value.
    paired_agreement : the mean difference of two samples on common random numbers.

    Examples
    --------
    The variance of a sample of 40,000 normal draws against its true value 1:

    >>> x = np.random.default_rng(0).standard_normal(40_000)
    >>> v = x.var(ddof=1)
    >>> check = agreement(v, 1.0, se=v * np.sqrt(2 / (x.size - 1)))
    >>> print(f"{check.estimate:.4f} +/- {check.se:.4f}: z = {check.z_score:.2f}, holds: {check.holds}")
    1.0037 +/- 0.0071: z = 0.53, holds: True
    >>> agreement(1.2, 1.0, se=0.01).check("variance")
    Traceback (most recent call last):
    ...
    AssertionError: variance: estimate 1.2 against expected 1, se 0.01: z = +20.00, outside |z| <= 4.5
    >>> agreement(0.23, 0.75, se=0.008, side="below").holds    # a frequency under its upper bound
    True
    """
    est = _check_values("estimate", estimate)
    exp = _check_values("expected", expected)
    s = _check_values("se", se, low=0.0)
    z, side = _check_z_side(z, side)
    check_same_shape(estimate=est, expected=exp, se=s)
    return _agreement(est, exp, s, z, side)


def mc_agreement(samples, expected, *, z=4.5, axis=-1, side="both") -> Agreement:
    r"""Check the mean of a sample against the value it should equal, with the sample's standard error.

    The estimate is the mean :math:`\bar x` of the :math:`m` values along ``axis``, its standard error
    :math:`s = \mathrm{sd}(x) / \sqrt{m}` (``ddof=1``).

    Parameters
    ----------
    samples : array_like
        Independent draws :math:`x_1, \dots, x_m` along ``axis`` (finite reals; booleans count as 0
        and 1, so a frequency is the mean of its indicators). Other axes are separate checks.
    expected : float or array_like
        The value :math:`\theta` of :math:`E[x]` (finite; broadcast against the means).
    axis : int or None, optional
        The axis of the draws (default the last); ``None``: all values are one sample.
    z, side : optional
        As in :func:`agreement` (default 4.5 and ``"both"``).

    Returns
    -------
    Agreement

    Raises
    ------
    ValueError
        If a sample is NaN or infinite, fewer than 2 draws lie along ``axis``, ``expected`` is not
        finite or does not broadcast, ``z`` is not positive or ``side`` is unknown.

    Examples
    --------
    >>> x = np.random.default_rng(1).exponential(2.0, size=10_000)
    >>> check = mc_agreement(x, 2.0)
    >>> check.check()                             # passes: nothing to say
    >>> print(f"mean {check.estimate:.3f} (se {check.se:.3f}), z = {check.z_score:.2f}")
    mean 2.002 (se 0.020), z = 0.12
    >>> mc_agreement(x, 2.2).holds                # a 10% bias is detected
    False
    >>> mc_agreement(x[:1], 2.0)
    Traceback (most recent call last):
    ...
    ValueError: samples must hold at least 2 values along axis -1 (a standard error needs a spread); got shape (1,)
    """
    x = _check_samples("samples", samples)
    exp = check_real("expected", expected)
    z, side = _check_z_side(z, side)
    mean, se = _mean_and_se("samples", x, axis)
    check_same_shape(means=mean, expected=exp)
    return _agreement(mean, exp, se, z, side)


def paired_agreement(a, b, expected=0.0, *, z=4.5, axis=-1, side="both") -> Agreement:
    r"""Check the mean difference of two samples drawn on common random numbers, with the paired se.

    Run :math:`k` of ``a`` and of ``b`` share their random numbers (two levels of one keyed run, two
    statistics of the same releases), so the differences :math:`d_k = a_k - b_k` are independent
    across runs. The estimate is :math:`\bar d`, its standard error :math:`\mathrm{sd}(d) / \sqrt{m}`,
    smaller than the unpaired :math:`\sqrt{s_a^2 + s_b^2}` for positively correlated samples. Against
    the default ``expected=0``, :attr:`~Agreement.z_score` counts the standard errors between ``a`` and ``b``.

    Parameters
    ----------
    a, b : array_like
        The paired samples, runs along ``axis`` (finite reals; they broadcast, so ``b`` may be one
        reference sample for several rows of ``a``).
    expected : float or array_like, optional
        The value :math:`\theta` of :math:`E[a - b]` (default 0: no difference).
    z, axis, side : optional
        As in :func:`mc_agreement` (``axis``: of the runs; ``None``: all differences are one sample).

    Returns
    -------
    Agreement

    Raises
    ------
    ValueError
        As :func:`mc_agreement`, and if ``a`` and ``b`` do not broadcast or a difference overflows.

    Examples
    --------
    Two noisy measurements of the same runs: a shared part cancels in the difference.

    >>> rng = np.random.default_rng(2)
    >>> shared = rng.standard_normal(500)
    >>> a, b = shared + 0.1 * rng.standard_normal(500), shared + 0.1 * rng.standard_normal(500) - 0.05
    >>> check = paired_agreement(a, b)
    >>> print(f"difference {check.estimate:.3f}, paired se {check.se:.4f}, z = {check.z_score:.1f}")
    difference 0.065, paired se 0.0066, z = 9.8
    >>> print(f"unpaired se {np.hypot(a.std(ddof=1), b.std(ddof=1)) / np.sqrt(a.size):.4f}")
    unpaired se 0.0644
    >>> paired_agreement(a, b, 0.05).holds
    True
    """
    a, b = _check_samples("a", a), _check_samples("b", b)
    check_same_shape(a=a, b=b)
    exp = check_real("expected", expected)
    z, side = _check_z_side(z, side)
    with np.errstate(over="ignore"):
        diff = (a.astype(float) if a.dtype == bool else a) - (b.astype(float) if b.dtype == bool else b)
    if not np.all(np.isfinite(diff)):
        raise ValueError("a - b must be finite; a difference overflows the doubles")
    mean, se = _mean_and_se("a - b", diff, axis)
    check_same_shape(means=mean, expected=exp)
    return _agreement(mean, exp, se, z, side)
