r"""Membership-inference leakage of the Gaussian mechanism (paper §4.3-4.4).

A record ``z`` of a dataset ``Z`` of size ``n`` *leaks* when the
log-likelihood ratio of the release (eq. 8)

    :math:`Λ(o \mid z) = \log p_{\mathrm{in}}(o) - \log p_{\mathrm{out}}(o)`,

:math:`p_{\mathrm{in}}` the density of the mechanism on ``Z`` and :math:`p_{\mathrm{out}}` on ``Z \ {z}``,
exceeds the vulnerability threshold ``tau``. Everything here depends on the
record only through its deviation :math:`s = \|\bar z - μ_{\bar z}\|` from the mean of the
clipped dataset, so most functions take ``s`` directly.

Two statistics, chosen everywhere by ``statistic=`` (default ``"paper"``):

``"paper"``
    The paper's Lemma 6: both hypotheses use the noise variance :math:`γ^{2}/n`, so
    Λ | Z ~ N(a, 2a) with :math:`a = n s^{2} / (2 γ^{2} (n - 1)^{2})`.
``"exact"``
    The exact remove-one likelihood ratio (as in the authors' published
    simulations): the counterfactual release on :math:`n - 1` records has noise
    variance :math:`γ^{2}/(n - 1)`. With :math:`δ = (\bar z - μ_{\bar z})/(n - 1)`,

        :math:`Λ = (d/2) \log(n/(n-1)) - n\|η\|^{2}/(2γ^{2}) + (n-1)\|η + δ\|^{2}/(2γ^{2})`,

    which is no longer Gaussian; completing the square gives the
    noncentral-:math:`χ^{2}` law used by :func:`leak_probability`.

The parameters mean the same in every function (numbers or arrays, broadcast together; a float
comes back for scalar input); a function's own entry only says what differs:

``s``
    Deviation :math:`\|\bar z - μ_{\bar z}\| \ge 0` of the record from the clipped mean.
``n``
    Dataset size :math:`N_t \ge 2` (real values accepted: the formulas are analytic in n, which
    mean-field populations use; a lone record has an empty remove-one dataset, see :mod:`perfpriv.gaussian`).
``gamma``, ``tau``, ``alpha``
    Per-user noise scale γ > 0 (the release's noise is :math:`\mathcal{N}(0, γ^{2}/n\, I_d)`),
    vulnerability threshold τ > 0, Rényi order α > 1.
``d``, ``R``
    Dimension d >= 1 (required by ``"exact"``; ``"paper"`` ignores it but checks it if given) and
    clipping radius R > 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any
from functools import lru_cache

import numpy as np
from scipy import special, stats

from . import _records, keyed
from ._stats import float_or_array as _out
from ._validate import (
    check_choice,
    check_covariance,
    check_int,
    check_mean,
    check_real,
    check_rng,
    check_same_shape,
)

__all__ = [
    "STATISTICS",
    "exact_llr_offset",
    "llr_coefficients",
    "record_deviations",
    "log_likelihood_ratio",
    "LLRMoments",
    "llr_moments",
    "leak_probability",
    "log_leak_probability",
    "renyi_divergence",
    "renyi_tail_bound",
    "optimal_renyi_order",
    "gdp_mu",
    "worst_case_gdp_mu",
    "threshold_for_fpr",
    "roc_curve",
    "LeakProbability",
    "Integration",
    "exact_leak_floor",
    "marginal_leak_probability",
]

STATISTICS = ("paper", "exact")

#: Quadrature is used only when the chance that any record of the dataset is
#: clipped is below this bound (it then moves :math:`p_{\tau}` by less than the bound).
CLIP_TOLERANCE = 1e-6

#: Largest n·d (normal draws per simulated dataset) that Monte Carlo accepts.
MAX_MONTECARLO_DRAWS = 50_000_000

#: ``method="auto"``: a Monte Carlo drawing more normals than this (a few seconds) may give way to the
#: quadrature (:func:`marginal_leak_probability`).
MONTECARLO_BUDGET = 100_000_000

#: Per-record clip probability up to which that fallback is allowed: about the default Monte Carlo's
#: standard error (0.5/sqrt(2e5) = 1.1e-3), so the quadrature is then no less accurate.
CLIP_FALLBACK = 1e-3


# ---------------------------------------------------------------- validation


def _s(s):
    return check_real("s", s, low=0)


def _n(n):
    return check_real("n", n, low=2)


def _gamma(gamma):
    return check_real("gamma", gamma, low=0, low_open=True)


def _tau(tau):
    return check_real("tau", tau, low=0, low_open=True)


def _statistic(statistic):
    return check_choice("statistic", statistic, STATISTICS)


def _ratio(s, gamma):
    """s/γ as an array; +inf where it overflows (s huge, γ tiny), never a warning."""
    with np.errstate(over="ignore"):
        return np.asarray(s, dtype=float) / np.asarray(gamma, dtype=float)


# ---------------------------------------------------------- Λ from the noise


def record_deviations(Z, R):
    r"""Deviation :math:`s_i = \|\bar z_i - μ_{\bar z}\|` of every record from the clipped mean.

    Parameters
    ----------
    Z : array_like, shape (N, d)
        Dataset (records are clipped to radius ``R`` first).
    R : float

    Returns
    -------
    numpy.ndarray, shape (N,)

    Examples
    --------
    >>> record_deviations([[1.0, 0.0], [-1.0, 0.0]], R=10).tolist()
    [1.0, 1.0]
    """
    Z = _records.check_records(Z)
    dev = _records.clip(Z, R)
    dev -= dev.mean(axis=0)
    return np.sqrt(np.einsum("ij,ij->i", dev, dev))


def exact_llr_offset(n, d):
    """The constant (d/2) log(n/(n − 1)) of the exact remove-one statistic.

    It comes from the ratio of the two Gaussians' normalizing constants (module docstring), for any record.

    Parameters
    ----------
    n, d : float or array_like, int
        As in the module docstring, with any n > 1.

    Returns
    -------
    float or numpy.ndarray
        ``0.5 * d * log1p(1/(n - 1))`` (no cancellation for large n).

    Examples
    --------
    >>> round(float(exact_llr_offset(1000, 12)), 5)
    0.006
    """
    return _llr_offset(check_real("n", n, low=1, low_open=True), check_int("d", d, low=1))


def _llr_offset(n, d):
    """:func:`exact_llr_offset` on checked input (inf at n = 1: a lone record has no remove-one dataset)."""
    with np.errstate(divide="ignore"):
        return 0.5 * d * np.log1p(1.0 / (np.asarray(n, dtype=float) - 1.0))


def llr_coefficients(eta_sq, n, gamma, d, statistic):
    r"""Coefficients (A, B, C) of :math:`Λ = A\|\bar z - μ_{\bar z}\|^{2} + B⟨\bar z - μ_{\bar z}, η⟩ + C`, for both statistics.

    This is the one place of both formulas (eq. 8; the exact one is the module docstring's,
    expanded so that nothing large cancels)::

        paper (Lemma 6):  A = n/((n−1)² 2γ²),  B = 2n/((n−1) 2γ²),  C = 0
        exact:            A = 1/((n−1) 2γ²),   B = 2/(2γ²),
                          C = (d/2) log(n/(n−1)) − ‖η‖²/(2γ²)

    A > 0 for every n > 1, which the projected draw relies on.

    Parameters
    ----------
    eta_sq : float or array_like
        :math:`\|η\|^{2} \ge 0` of the release's noise (+inf allowed: then C = −inf).
    n, gamma, d, statistic
        As in the module docstring, with any n > 1 (d is required by both statistics).

    Returns
    -------
    tuple of float or numpy.ndarray
        (A, B, C), broadcast over the inputs.

    Raises
    ------
    ValueError
        If :math:`n \le 1`, :math:`γ \le 0`, :math:`\|η\|^{2} < 0`, a value is NaN, d < 1 or ``statistic``
        is unknown.

    References
    ----------
    Paper eq. 8 and Lemma 6.

    Examples
    --------
    >>> [round(float(c), 4) for c in llr_coefficients(1.0, 10, 1.0, 2, "paper")]
    [0.0617, 1.1111, 0.0]
    """
    eta_sq = check_real("eta_sq", eta_sq, low=0, allow_inf=True)
    n = check_real("n", n, low=1, low_open=True)
    gamma = check_real("gamma", gamma, low=0, low_open=True, allow_inf=True)
    d = check_int("d", d, low=1)
    statistic = _statistic(statistic)
    n = np.asarray(n, dtype=float)
    # γ² may overflow (A = B = 0) or underflow (A = B = inf): values at the ends of the range, not warnings
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        g2 = 2.0 * np.asarray(gamma, dtype=float) ** 2
        if statistic == "paper":
            with np.errstate(invalid="ignore"):
                a = n / ((n - 1) ** 2 * g2)
            if np.isnan(a).any():  # (n − 1)² = inf times γ² = 0: the same ratio in a safe order
                a = np.where(np.isnan(a), (n / (n - 1)) / ((n - 1) * g2), a)
            return a, 2.0 * n / ((n - 1) * g2), np.zeros(np.broadcast_shapes(n.shape, g2.shape))
        eta_sq = np.asarray(eta_sq, dtype=float)
        with np.errstate(invalid="ignore"):
            quad = np.where(eta_sq == 0, 0.0, eta_sq / g2)  # ‖η‖² = 0: no term, even where γ² underflowed
        return 1.0 / ((n - 1) * g2), 2.0 / g2, _llr_offset(n, d) - quad


def _llr_from_summaries(dev_sq, inner, eta_sq, n, gamma, d, statistic):
    r"""Λ from :math:`\|\bar z - μ_{\bar z}\|^{2}`, :math:`⟨\bar z - μ_{\bar z}, η⟩` and :math:`\|η\|^{2}` (coefficients: :func:`llr_coefficients`)."""
    a, b, c = llr_coefficients(eta_sq, n, gamma, d, statistic)
    return a * dev_sq + b * inner + c


def log_likelihood_ratio(Z, eta, gamma, R, statistic="paper"):
    """Membership log-likelihood ratio Λ(o | z) of every record, from the realized noise.

    The release is ``o = mean(clip(Z, R)) + eta`` (eq. 6); Λ is eq. 8 (module docstring).

    Parameters
    ----------
    Z : array_like, shape (N, d)
        The dataset, N >= 2 (records are clipped to ``R`` inside).
    eta : array_like, shape (d,)
        The realized noise :math:`η_t` of the release (as returned by
        :func:`perfpriv.gaussian.release`).
    gamma, R : float
    statistic : {"paper", "exact"}

    Returns
    -------
    numpy.ndarray, shape (N,)
        Λ of every record.

    References
    ----------
    Paper eq. 8, Lemma 6 (appendix D.2).

    Examples
    --------
    >>> Z = [[1.0, 0.0], [-1.0, 0.0], [0.0, 0.0]]
    >>> log_likelihood_ratio(Z, [0.0, 0.0], gamma=1.0, R=10).round(4).tolist()
    [0.375, 0.375, 0.0]
    """
    Z = _records.check_records(Z)
    n, d = Z.shape
    if n < 2:
        raise ValueError(f"Z must hold at least n=2 records (Λ needs a non-empty remove-one dataset); got {n}")
    eta = np.asarray(check_real("eta", eta), dtype=float).reshape(-1)
    if eta.shape != (d,):
        raise ValueError(f"eta must be a vector of length d={d}; got shape {np.shape(eta)}")
    gamma = check_real("gamma", gamma, low=0, low_open=True, scalar=True)
    R = check_real("R", R, low=0, low_open=True, scalar=True)
    statistic = _statistic(statistic)
    dev = _records.clip(Z, R)
    dev -= dev.mean(axis=0)
    if gamma > 1e150:
        # Λ is homogeneous of degree 0 in (z̄ − μ_z̄, η, γ): rescale so that ‖η‖² and γ²
        # cannot overflow (η is of order γ)
        with np.errstate(under="ignore"):
            dev, eta = dev / gamma, eta / gamma
    g = 1.0 if (gamma > 1e150 or gamma < 1e-150) else gamma
    with np.errstate(over="ignore"):  # a huge η: ‖η‖² = inf, then Λ = ±inf (exact: −inf), a value
        lam = _llr_from_summaries(np.einsum("ij,ij->i", dev, dev), dev @ eta, float(eta @ eta),
                                  n, g, d, statistic)
    if gamma < 1e-150:  # Λ = c + (Λ at γ = 1 − c)/γ², divided in two steps (may reach ±inf)
        c = 0.0 if statistic == "paper" else float(_llr_offset(n, d))
        with np.errstate(over="ignore"):
            lam = c + ((lam - c) / gamma) / gamma
    return lam


@dataclass(frozen=True)
class LLRMoments:
    """Conditional mean and variance of Λ given the dataset (see :func:`llr_moments`)."""

    mean: np.ndarray | float
    var: np.ndarray | float


def llr_moments(s, n, gamma, *, statistic="paper", d=None):
    r"""Conditional law of Λ given the dataset: mean and variance.

    For ``statistic="paper"`` Λ | Z ~ N(a, 2a) exactly (Lemma 6, module docstring). For
    ``statistic="exact"`` Λ is a shifted, scaled noncentral :math:`\chi ^{2}` (:func:`leak_probability`) with
    mean :math:`(d/2)\log(n/(n-1)) + n s^{2}/(2(n-1)γ^{2}) - (d + n s^{2}/γ^{2})/(2n)` and
    variance :math:`(d + 2 n s^{2}/γ^{2})/(2n^{2})`.

    Parameters
    ----------
    s, n, gamma, statistic, d
        As in the module docstring.

    Returns
    -------
    LLRMoments
        ``mean`` and ``var`` (broadcast over the inputs).

    References
    ----------
    Paper Lemma 6 and eq. 10 (the quantity a).

    Examples
    --------
    >>> m = llr_moments(3.0, 10, 1.0)
    >>> round(m.mean, 4), round(m.var, 4)
    (0.5556, 1.1111)
    """
    s, n, gamma = _s(s), _n(n), _gamma(gamma)
    statistic = _statistic(statistic)
    if statistic == "paper":
        _check_d_optional(d)
        with np.errstate(over="ignore"):
            a = 0.5 * np.asarray(gdp_mu(s, n, gamma)) ** 2
            return LLRMoments(_out(a), _out(2 * a))
    d = _need_d(d)
    n = np.asarray(n, float)
    with np.errstate(over="ignore"):
        ratio2 = _ratio(s, gamma) ** 2  # s²/γ², inf when it overflows (then so are mean and var)
        # n s²/(2(n−1)γ²) − λ/(2n) with λ = n s²/γ² simplifies to s²/(2(n−1)γ²): no cancellation
        mean = _llr_offset(n, d) + ratio2 / (2 * (n - 1)) - d / (2 * n)
        var = d / (2 * n * n) + ratio2 / n
    return LLRMoments(_out(mean), _out(var))


def _need_d(d):
    if d is None:
        raise ValueError("d must be given (dimension >= 1) for statistic='exact'")
    return check_int("d", d, low=1)


def _check_d_optional(d):
    """``d`` where the paper's statistic ignores it: None or a valid dimension, never garbage."""
    if d is not None:
        check_int("d", d, low=1)


# ------------------------------------------------- exact leak probability


def leak_probability(s, n, gamma, *, tau, statistic="paper", d=None):
    r"""Probability that a record with deviation ``s`` leaks, :math:`P(Λ > τ \mid Z)` (Lemma 7).

    ``"paper"`` (Lemma 7): with :math:`μ' = \sqrt n\, s/(γ(n - 1))`,

        :math:`P(Λ > τ \mid Z) = \bar Φ(τ/μ' - μ'/2) = \bar Φ(τ(n-1)γ/(\sqrt n\, s) - \sqrt n\, s/(2(n-1)γ))`,

    evaluated with :func:`scipy.special.ndtr` so that tiny tail probabilities
    keep their relative accuracy; :math:`s = 0` gives 0 (then Λ ≡ 0 ≤ τ).

    ``"exact"`` (needs ``d``): with :math:`δ = (\bar z - μ_{\bar z})/(n-1)`, :math:`c = (d/2)\log(n/(n-1))`,
    completing the square gives

        :math:`Λ = c + n(n-1)\|δ\|^{2}/(2γ^{2}) - \|η - (n-1)δ\|^{2}/(2γ^{2})`,

    and :math:`W = n\|η - (n-1)δ\|^{2}/γ^{2}` is noncentral :math:`\chi ^{2}_d` with noncentrality
    :math:`λ = n(n-1)^{2}\|δ\|^{2}/γ^{2} = n s^{2}/γ^{2}`. Hence

        :math:`P(Λ > τ \mid Z) = F_{\chi ^{2}_d(λ)}(2n(c - τ) + n^{2} s^{2}/((n-1)γ^{2}))`

    (0 when the argument is <= 0), with :func:`scipy.special.chndtr` (cost growing like :math:`\sqrt λ`,
    ~0.1 ms per value at :math:`λ \sim 10^{8}`). Beyond λ ~ 1e12, where it returns NaN, and below 1e-90
    (in log space, ~1e-12 relative accuracy; below ~1e-308 use :func:`log_leak_probability`), a quadrature
    over the :math:`\chi ^{2}_{d-1}` part of :math:`W = (g + \sqrt λ)^{2} + \chi ^{2}_{d-1}` replaces it.
    Unlike the paper's statistic, a record at the mean (s = 0) can leak when τ < c, and for small n the
    leak probability does not vanish as γ → ∞: its limit is :func:`exact_leak_floor`.

    Parameters
    ----------
    s, n, gamma, tau, statistic, d
        As in the module docstring.

    Returns
    -------
    float or numpy.ndarray
        Leak probability, broadcast over ``s, n, gamma, tau``.

    References
    ----------
    Paper Lemma 7 (appendix D.2); Remark 1 (the Neyman–Pearson reading).

    Examples
    --------
    >>> round(float(leak_probability(3.0, 10, 1.0, tau=0.5)), 4)
    0.521
    >>> round(float(leak_probability(0.0, 10, 1.0, tau=0.5)), 4)
    0.0
    >>> round(float(leak_probability(3.0, 10, 1.0, tau=0.5, statistic="exact", d=2)), 4)
    0.5231
    """
    s, n, gamma, tau = _s(s), _n(n), _gamma(gamma), _tau(tau)
    statistic = _statistic(statistic)
    if statistic == "paper":
        _check_d_optional(d)
        return _out(special.ndtr(-_paper_tail_arg(s, n, gamma, tau)))
    return _out(_exact_leak(s, n, gamma, tau, _need_d(d)))


def log_leak_probability(s, n, gamma, *, tau, statistic="paper", d=None):
    r"""Natural log of :func:`leak_probability`, accurate where the probability underflows.

    Paper's statistic: ``log Φ̄(τ/μ' − μ'/2)`` by :func:`scipy.special.log_ndtr`, finite and accurate to
    a few ulps however far in the tail (≈ −2·10⁵ at τ/μ' ≈ 630, a probability of :math:`10^{-86000}`);
    :math:`s = 0` gives :math:`-\infty`. Exact statistic: the log space of :func:`leak_probability` below
    1e-90 (exact for d = 1), finite far below 1e-308 (≈ −460.59 in the last example); :math:`-\infty`
    only where the probability is exactly 0 (the threshold cannot be reached).

    Parameters
    ----------
    s, n, gamma, tau, statistic, d
        As in the module docstring.

    Returns
    -------
    float or numpy.ndarray
        log P(Λ > τ | Z) in [-inf, 0].

    References
    ----------
    Paper Lemma 7 (appendix D.2).

    Examples
    --------
    >>> round(float(log_leak_probability(3.0, 10, 1.0, tau=0.5)), 4)
    -0.652
    >>> round(float(log_leak_probability(1.0, 1e9, 1.0, tau=0.02)))
    -200007
    >>> round(float(log_leak_probability(0.1, 1000, 0.1, tau=0.5, statistic="exact", d=1)), 1)
    -460.6
    """
    s, n, gamma, tau = _s(s), _n(n), _gamma(gamma), _tau(tau)
    statistic = _statistic(statistic)
    if statistic == "paper":
        _check_d_optional(d)
        return _out(special.log_ndtr(-_paper_tail_arg(s, n, gamma, tau)))
    return _out(_exact_leak(s, n, gamma, tau, _need_d(d), log=True))


def _paper_tail_arg(s, n, gamma, tau):
    """τ/μ' − μ'/2 of Lemma 7 (+inf at μ' = 0, −inf when μ' overflows)."""
    mu = np.asarray(gdp_mu(s, n, gamma))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        arg = np.where(mu > 0, tau / np.where(mu > 0, mu, 1.0) - 0.5 * mu, np.inf)
        # μ' underflowed to 0 with s > 0: τ/μ' (μ'/2 is then negligible) in log space, a
        # finite argument wherever one exists (inf only where τ/μ' itself overflows)
        n = np.asarray(n, float)
        log_ratio = (np.log(tau) - np.log(np.asarray(s, float)) + np.log(np.asarray(gamma, float))
                     + np.log(n - 1) - 0.5 * np.log(n))
        arg = np.where((mu == 0) & (np.asarray(s) > 0), np.exp(np.minimum(log_ratio, 710.0)), arg)
    return np.where(np.isposinf(mu), -np.inf, arg)


def _exact_leak(s, n, gamma, tau, d, log=False):
    r""":math:`P(Λ_{\mathrm{exact}} > τ \mid Z) = F_{\chi ^{2}_d(λ)}(x)` (see :func:`leak_probability`), or its log (``log=True``).

    Values below :data:`_LOG_SWITCH` (where scipy's noncentral-χ² cdf loses its relative accuracy
    and then flushes to 0, near 1e-110) come from :func:`_log_chndtr`, computed in log space.
    """
    n = np.asarray(n, float)
    c = _llr_offset(n, d)
    with np.errstate(over="ignore", invalid="ignore"):
        lam = n * _ratio(s, gamma) ** 2
        # x − λ = 2n(c − τ) + λ/(n − 1): the part of x that matters when λ is huge
        x_minus_lam = 2.0 * n * (c - tau) + lam / (n - 1)
        x = x_minus_lam + lam
    x, x_minus_lam, lam = np.broadcast_arrays(x, x_minus_lam, lam)
    finite = np.isfinite(lam) & np.isfinite(x)
    xs, ls = np.where(finite & (x > 0), x, 0.0), np.where(finite, lam, 0.0)
    p = np.asarray(special.chndtr(xs, d, ls), dtype=float)
    bad = np.isnan(p)
    if bad.any():  # the cdf routine gives up for noncentralities beyond ~1e12
        p = p.copy()
        p[bad] = _chndtr_large(xs[bad], np.where(finite, x_minus_lam, 0.0)[bad], d, ls[bad])
    # Overflow: x − λ = −inf (τ huge) means no leak, +inf (or x = +inf) a sure leak;
    # inf − inf (s/γ and τ both beyond range) is settled by comparing the two terms
    # of (x − λ)/n = 2(c − τ) + (s/γ)²/(n − 1) in log space.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_pos = 2.0 * np.log(_ratio(s, gamma)) - np.log(n - 1)
        log_neg = np.log(np.maximum(tau - c, 0.0)) + math.log(2.0)
    log_pos, log_neg = np.broadcast_to(log_pos, x.shape), np.broadcast_to(log_neg, x.shape)
    beyond = np.where(np.isnan(x_minus_lam), np.where(log_pos > log_neg, 1.0, 0.0),
                      np.where(np.isneginf(x_minus_lam) | np.isneginf(x), 0.0, 1.0))
    p = np.clip(np.where(finite, np.where(x > 0, p, 0.0), beyond), 0.0, 1.0)
    tiny = finite & (x > 0) & (p < _LOG_SWITCH)
    if not log and not tiny.any():
        return p
    with np.errstate(divide="ignore"):
        out = np.log(p) if log else p.copy()
    if tiny.any():
        log_tiny = _log_chndtr(xs[tiny], np.where(finite, x_minus_lam, 0.0)[tiny], d, ls[tiny])
        out = np.array(out, dtype=float)
        with np.errstate(under="ignore"):
            out[tiny] = log_tiny if log else np.exp(log_tiny)
    return out


#: Below this probability the exact statistic's leak probability is computed in log space
#: (:func:`_log_chndtr`): scipy's noncentral-χ² cdf is accurate to ~1e-13 down to ~1e-100,
#: loses digits below ~1e-110 and then returns 0.
_LOG_SWITCH = 1e-90
_LOG_PANELS = 48       # geometric panels toward θ = 0 (down to 2^-48 of the range)
_LOG_NODES = 16        # Gauss–Legendre nodes per panel
_LOG_CHUNK = 2048      # rows per block (bounds the memory of the node grid)


def _log_cond(w, w_minus, root_lam):
    r""":math:`\log[Φ(w - \sqrt λ) - Φ(-w - \sqrt λ)]` with :math:`w_{\mathrm{minus}} = w^{2} - λ` (no cancellation in :math:`w - \sqrt λ`)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        hi = special.log_ndtr(w_minus / (w + root_lam))
        lo = special.log_ndtr(-w - root_lam)
        return hi + np.log1p(-np.exp(lo - hi))


def _log_chndtr(x, x_minus_lam, d, lam):
    r""":math:`\log P(W \le x), W \sim \chi ^{2}_d(λ)`, accurate however small (x > 0, finite λ; arrays of equal shape).

    :math:`W = (g + \sqrt λ)^{2} + V` with :math:`g \sim \mathcal{N}(0, 1)` and :math:`V \sim \chi^{2}_{d-1}` independent. For d = 1 this is
    :math:`\log[Φ(\sqrt x - \sqrt λ) - Φ(-\sqrt x - \sqrt λ)]` with :func:`scipy.special.log_ndtr` (exact). For d >= 2,
    with :math:`V = x \sin^{2}θ`,

        :math:`P(W \le x) = \int_0^{π/2} f_\chi(\sqrt x \sin θ) [Φ(\sqrt x \cos θ - \sqrt λ) - Φ(-\sqrt x \cos θ - \sqrt λ)] \sqrt x \cos θ \, dθ`

    (:math:`f_\chi` the :math:`\chi_{d-1}` density, θ cut where :math:`\sqrt x \sin θ` leaves its support), whose integrand is
    smooth in θ; in the far tail it concentrates near θ = 0, so the rule is Gauss–Legendre on
    geometric panels toward 0, and the sum is a log-sum-exp of the log integrand.
    """
    x, x_minus_lam, lam = (np.asarray(a, float).ravel() for a in (x, x_minus_lam, lam))
    root_lam = np.sqrt(lam)
    if d == 1:
        return _log_cond(np.sqrt(x), x_minus_lam, root_lam)
    _, top = _chi_support(d - 1)
    root_x = np.sqrt(x)
    theta_max = np.where(root_x > top, np.arcsin(np.minimum(top / np.where(root_x > 0, root_x, 1.0), 1.0)),
                         0.5 * np.pi)
    xg, wg = _gauss_legendre(_LOG_NODES)
    edges = 2.0 ** -np.arange(_LOG_PANELS, -1.0, -1.0)
    edges[0] = 0.0
    lo, width = edges[:-1, None], (edges[1:] - edges[:-1])[:, None]
    t = (lo + 0.5 * width * (xg[None, :] + 1.0)).ravel()       # nodes in (0, 1)
    log_wt = np.log((0.5 * width * wg[None, :]).ravel())
    out = np.empty(x.shape)
    for start in range(0, x.size, _LOG_CHUNK):
        rows = slice(start, start + _LOG_CHUNK)
        theta = theta_max[rows, None] * t[None, :]
        sin, cos = np.sin(theta), np.cos(theta)
        w_minus = x_minus_lam[rows, None] - x[rows, None] * sin * sin     # x cos²θ − λ
        with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
            terms = (_chi_logpdf(root_x[rows, None] * sin, d - 1)
                     + _log_cond(root_x[rows, None] * cos, w_minus, root_lam[rows, None])
                     + np.log(root_x[rows, None] * cos) + np.log(theta_max[rows])[:, None] + log_wt[None, :])
            out[rows] = special.logsumexp(terms, axis=1)
    return out


def _chndtr_large(x, x_minus_lam, d, lam):
    r""":math:`P(W \le x), W \sim \chi ^{2}_d(λ)`, for very large λ (where scipy's routine returns NaN).

    With W, V as in :func:`_log_chndtr`,
    :math:`P(W \le x) = \mathbb{E}_V[Φ(\sqrt{x-V} - \sqrt λ) - Φ(-\sqrt{x-V} - \sqrt λ)]`. The second term
    is below :math:`Φ(-\sqrt λ)` (zero in double precision for :math:`λ > 10^{4}`); the first is written
    :math:`(x - λ - V)/(\sqrt{x-V} + \sqrt λ)` to avoid cancellation and averaged over V with a
    Gauss–Legendre rule in χ-space (exact when d = 1).
    """
    x, x_minus_lam, lam = (np.asarray(a, float).ravel() for a in (x, x_minus_lam, lam))
    root_lam = np.sqrt(lam)
    if d == 1:
        return special.ndtr(x_minus_lam / (np.sqrt(x) + root_lam)) - special.ndtr(-np.sqrt(x) - root_lam)
    lo, hi = _chi_support(d - 1)
    xg, wg = _gauss_legendre(_QUAD_NODES)
    v = lo + 0.5 * (hi - lo) * (xg + 1.0)
    weight = 0.5 * (hi - lo) * wg * np.exp(_chi_logpdf(v, d - 1))
    V = v * v
    rest = np.maximum(x[:, None] - V[None, :], 0.0)
    arg = (x_minus_lam[:, None] - V[None, :]) / (np.sqrt(rest) + root_lam[:, None])
    cond = np.where(x[:, None] > V[None, :],
                    special.ndtr(arg) - special.ndtr(-np.sqrt(rest) - root_lam[:, None]), 0.0)
    return np.clip(cond @ weight, 0.0, 1.0)


# ----------------------------------------------------------------- Rényi


def renyi_divergence(s, n, gamma, alpha):
    r"""Rényi divergence :math:`D_α(P_{\mathrm{in}} \,\|\, P_{\mathrm{out}})` of the Gaussian mechanism given Z (Lemma 11).

    :math:`D_α = α n s^{2} / (2 γ^{2} (n - 1)^{2}) = α a`, for the paper's pair of Gaussians
    with the common covariance :math:`γ^{2}/n I`.

    Parameters
    ----------
    s, n, gamma, alpha : float or array_like
        As in the module docstring.

    Returns
    -------
    float or numpy.ndarray

    References
    ----------
    Paper Lemma 11 (appendix D.2), used in Lemma 5.

    Examples
    --------
    >>> round(float(renyi_divergence(3.0, 10, 1.0, 2.0)), 4)
    1.1111
    """
    s, n, gamma = _s(s), _n(n), _gamma(gamma)
    alpha = check_real("alpha", alpha, low=1, low_open=True)
    return _out(alpha * llr_moments(s, n, gamma).mean)


def optimal_renyi_order(s, n, gamma, *, tau):
    r"""Order :math:`α\cdot = 1/2 + τ γ^{2} (n-1)^{2} / (n s^{2}) = 1/2 + τ/(2a)` minimizing the bound of Lemma 5.

    This is the unconstrained minimizer of eq. 9 in α; it is a valid Rényi
    order (α* > 1) exactly when τ > a. :math:`s = 0` gives ``inf``.

    Parameters
    ----------
    s, n, gamma, tau : float or array_like
        As in the module docstring.

    Returns
    -------
    float or numpy.ndarray

    References
    ----------
    Paper §4.4, the optimal order after eq. 9.

    Examples
    --------
    >>> round(float(optimal_renyi_order(s=3.0, n=10, gamma=1.0, tau=2.0)), 4)
    2.3
    """
    s, n, gamma, tau = _s(s), _n(n), _gamma(gamma), _tau(tau)
    # τ/(2a) = (τ/μ')/μ' with a = μ'²/2: finite where a itself underflows to 0
    mu = np.asarray(gdp_mu(s, n, gamma))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        safe = np.where(mu > 0, mu, 1.0)
        return _out(np.where(mu > 0, 0.5 + (tau / safe) / safe, np.inf))


def renyi_tail_bound(s, n, gamma, *, tau, alpha=None):
    r"""Rényi (Chernoff) upper bound on the leak probability P(Λ > τ | Z) (Lemmas 4-5).

    For an order α > 1 (Lemma 4 with Lemma 11, eq. 9):

        :math:`\min(1, \exp(-(α - 1)(τ - α a))), a = n s^{2}/(2γ^{2}(n-1)^{2})`.

    With ``alpha=None`` the optimal order α* of :func:`optimal_renyi_order` gives eq. 10,
    :math:`\exp(-(τ - a)^{2}/(4a))`, where τ > a; where τ <= a (α* not > 1) the bound does not apply and
    the result is the trivial 1. :math:`s = 0` gives 0 (then Λ ≡ 0 and the infimum over α of the bound is 0).

    Parameters
    ----------
    s, n, gamma, tau : float or array_like
        As in the module docstring.
    alpha : float or array_like, optional
        Rényi order α > 1; ``None`` for the optimal order.

    Returns
    -------
    float or numpy.ndarray
        Upper bound in [0, 1] for the paper's statistic.

    References
    ----------
    Paper Lemma 4 (appendix D.1), Lemma 5, eq. 9 and eq. 10.

    Examples
    --------
    >>> round(float(renyi_tail_bound(1.0, 10, 1.0, tau=0.5)), 4)
    0.4594
    >>> round(float(renyi_tail_bound(1.0, 10, 1.0, tau=0.5, alpha=3.0)), 4)
    0.5328
    """
    s, n, gamma, tau = _s(s), _n(n), _gamma(gamma), _tau(tau)
    a = np.asarray(llr_moments(s, n, gamma).mean)
    if alpha is not None:
        alpha = check_real("alpha", alpha, low=1, low_open=True)
        with np.errstate(over="ignore", invalid="ignore"):
            expo = -(alpha - 1.0) * (tau - alpha * a)
        # NaN only from (α − 1)·0·inf-type products at overflow: the bound is then trivial
        return _out(np.exp(np.minimum(0.0, np.where(np.isnan(expo), 0.0, expo))))
    # (τ − a)²/(4a) = ((τ − a)/(√2 μ'))² with a = μ'²/2, written with μ' so that neither an
    # underflow of a (to 0, which would make the bound 0) nor an overflow gives inf/inf
    mu = np.asarray(gdp_mu(s, n, gamma))
    safe = np.where((mu > 0) & (tau > a), mu, 1.0)
    with np.errstate(over="ignore", under="ignore"):
        gap = np.where(tau > a, tau - a, 0.0)
        bound = np.where(tau > a, np.exp(-((gap / (math.sqrt(2.0) * safe)) ** 2)), 1.0)
    return _out(np.where(mu > 0, bound, 0.0))


# ----------------------------------------------------------- Gaussian DP


def gdp_mu(s, n, gamma):
    r"""Per-record Gaussian-DP parameter :math:`μ' = \sqrt n\, s/(γ(n - 1))` (Remark 1).

    Given Z, the paper's Λ is the privacy loss of testing N(0, 1) against
    N(μ', 1): Λ | Z ~ N(μ'²/2, μ'²).

    Parameters
    ----------
    s, n, gamma : float or array_like
        As in the module docstring.

    Returns
    -------
    float or numpy.ndarray

    References
    ----------
    Paper Remark 1; Dong, Roth and Su (2022).

    Examples
    --------
    >>> round(float(gdp_mu(3.0, 10, 1.0)), 4)
    1.0541
    """
    s, n, gamma = _s(s), _n(n), _gamma(gamma)
    n = np.asarray(n, float)
    with np.errstate(over="ignore"):  # s/γ first: √n s or γ(n − 1) alone may overflow
        return _out(_ratio(s, gamma) * (np.sqrt(n) / (n - 1)))


def worst_case_gdp_mu(n, gamma, R):
    r"""Worst-case Gaussian-DP parameter :math:`2R/(γ\sqrt n)` over all datasets (Remark 1).

    With records clipped to radius R, :math:`s = \|\bar z - μ_{\bar z}\| = ((n-1)/n)\,\|\bar z - \text{mean of the others}\| \le 2R(n-1)/n`,
    so :math:`μ' \le 2R/(γ\sqrt n)`, the exact supremum, approached when the record and all others sit
    at opposite points of the sphere (the paper's s <= 2R gives :math:`2R\sqrt n/(γ(n-1))`, about as much).

    Parameters
    ----------
    n, gamma, R : float or array_like
        As in the module docstring.

    Returns
    -------
    float or numpy.ndarray

    References
    ----------
    Paper Remark 1.

    Examples
    --------
    >>> round(float(worst_case_gdp_mu(100, 2.0, 10.0)), 4)
    1.0
    """
    n, gamma = _n(n), _gamma(gamma)
    R = check_real("R", R, low=0, low_open=True)
    with np.errstate(over="ignore"):
        return _out(2.0 * _ratio(R, gamma) / np.sqrt(np.asarray(n, float)))


def threshold_for_fpr(mu, fpr):
    r"""Threshold :math:`τ = μ \bar Φ^{-1}(ν) - μ^{2}/2` giving false-positive rate ν (Remark 1).

    Under "z not in the dataset" the paper's Λ is :math:`N(-μ^{2}/2, μ^{2})`, so
    P(Λ > τ) = ν exactly for this τ (note that τ may be negative).

    Parameters
    ----------
    mu, fpr : float or array_like
        Gaussian-DP parameter μ' >= 0 of the record (:func:`gdp_mu`), target false-positive rate ν in (0, 1).

    Returns
    -------
    float or numpy.ndarray

    References
    ----------
    Paper Remark 1.

    Examples
    --------
    >>> round(float(threshold_for_fpr(1.0, 0.05)), 4)
    1.1449
    """
    mu = check_real("mu", mu, low=0)
    fpr = check_real("fpr", fpr, low=0, high=1, low_open=True, high_open=True)
    mu = np.asarray(mu, float)
    with np.errstate(over="ignore", invalid="ignore"):  # μ(Φ̄⁻¹(ν) − μ/2): no μ² to overflow
        out = mu * (stats.norm.isf(fpr) - 0.5 * mu)
    return _out(np.where(np.isnan(out), -np.inf, out))


def roc_curve(mu, fpr):
    r"""True-positive rate :math:`\bar Φ(\bar Φ^{-1}(ν) - μ)` of the optimal membership test at FPR ν.

    The Neyman–Pearson test of N(0, 1) against N(μ, 1): the trade-off curve
    of μ-Gaussian DP.

    Parameters
    ----------
    mu, fpr : float or array_like
        Gaussian-DP parameter μ >= 0 and false-positive rates ν in (0, 1).

    Returns
    -------
    float or numpy.ndarray
        TPR, broadcast over ``mu`` and ``fpr``.

    References
    ----------
    Paper Remark 1; Dong, Roth and Su (2022), Definition 2.7.

    Examples
    --------
    >>> round(float(roc_curve(1.0, 0.05)), 4)
    0.2595
    """
    mu = check_real("mu", mu, low=0)
    fpr = check_real("fpr", fpr, low=0, high=1, low_open=True, high_open=True)
    return _out(stats.norm.sf(stats.norm.isf(fpr) - mu))


# ------------------------------------------------ marginal leak probability


@dataclass(frozen=True)
class LeakProbability:
    """Marginal leak probability :math:`p_τ` (Lemma 8) and how it was computed.

    Attributes
    ----------
    p, se : float or numpy.ndarray
        :math:`p_τ`, broadcast over ``n, gamma, tau``, and its Monte Carlo standard error (0 for quadrature).
    method : str
        ``"quadrature"`` or ``"montecarlo"``.
    """

    p: np.ndarray | float
    se: np.ndarray | float
    method: str


#: The ways :func:`marginal_leak_probability` computes :math:`p_τ`.
METHODS = ("auto", "quadrature", "montecarlo")
#: Records simulated per value of n by a Monte Carlo :math:`p_τ` when :class:`Integration` does not say.
MONTECARLO_SAMPLES = 200_000


@dataclass(frozen=True)
class Integration:
    """How :func:`marginal_leak_probability` computes :math:`p_τ`: the method, the Monte Carlo's size and seed.

    A plain string (``"auto"``, ``"quadrature"``, ``"montecarlo"``) wherever an
    ``Integration`` is accepted means that method with the default size and no seed.

    Parameters
    ----------
    method : {"auto", "quadrature", "montecarlo"}
        See :func:`marginal_leak_probability`.
    samples : int, optional
        Records simulated per value of n by Monte Carlo (default 200 000).
    seed : None, int, SeedSequence or numpy.random.Generator
        Randomness of the Monte Carlo (a :class:`perfpriv.gaussian.GaussianMean`
        also takes the :class:`perfpriv.keyed.Key` its ``options()`` give).

    Examples
    --------
    >>> Integration("montecarlo", samples=4000, seed=1)
    Integration(method='montecarlo', samples=4000, seed=1)
    """

    method: str = "auto"
    samples: int | None = None
    seed: Any = None

    def __post_init__(self):
        object.__setattr__(self, "method", check_choice("method", self.method, METHODS))
        if self.samples is not None:
            object.__setattr__(self, "samples", check_int("samples", self.samples, low=1))
        if not isinstance(self.seed, keyed.Key):
            check_rng(self.seed)


_QUAD_NODES = 96
#: Values of p_τ computed at once by the quadrature (its working arrays hold a block's rows x nodes).
_QUAD_BLOCK = 2048
_QUAD_TAIL = 1e-18


@lru_cache(maxsize=64)
def _chi_support(d):
    r"""Interval of the :math:`\chi _d` distribution outside which the mass is < 1e-18 per side."""
    lo = math.sqrt(stats.chi2.ppf(_QUAD_TAIL, d)) if d > 0 else 0.0
    hi = math.sqrt(stats.chi2.isf(_QUAD_TAIL, d))
    return lo, hi


@lru_cache(maxsize=4)
def _gauss_legendre(k):
    return np.polynomial.legendre.leggauss(k)


def _chi_logpdf(v, d):
    return (d - 1) * np.log(v) - 0.5 * v * v - (0.5 * d - 1) * math.log(2.0) - special.gammaln(0.5 * d)


_NEAR_SINGULAR = 0.1   # √e below which the sinh map is used (see _quadrature)
_TINY = 1e-12          # results below this are integrated again over their own window
_TINY_GRID = 512


def _conditional(V, t, A, B, over_y, d):
    """P(AX − BY > t | Y = V) (``over_y``) or P(... | X = V), per row of ``V``."""
    cond = np.empty_like(V)
    if over_y.any():
        rows = over_y
        with np.errstate(over="ignore"):  # (t + BV)/A = inf (τ huge): the tail is 0
            cond[rows] = special.chdtrc(d, np.maximum((t[rows, None] + B[rows, None] * V[rows]) / A[rows, None],
                                                      0.0))
    if not over_y.all():
        rows = ~over_y
        cond[rows] = special.chdtr(d, np.maximum((A[rows, None] * V[rows] - t[rows, None]) / B[rows, None], 0.0))
    return cond


def _quadrature_window(a, b, kink, eps, t, A, B, over_y, d, nodes):
    r"""∫_a^b f_χd(v) :math:`P(\cdot | v^{2})` dv per row by Gauss–Legendre in a map that suits the row.

    ``kink``: the conditional probability starts like :math:`(v - a)^{d/2} (v = a + w^{2})`;
    :math:`\varepsilon > 0`: it is singular at distance ``eps`` below v = a (v = a + eps sinh u);
    otherwise a plain affine map.
    """
    xg, wg = _gauss_legendre(nodes)
    u = xg + 1.0
    a, b = a[:, None], b[:, None]
    width = b - a
    half_w = 0.5 * np.sqrt(width)
    w = half_w * u
    e = np.where(eps > 0, eps, 1.0)[:, None]
    top = np.arcsinh(width / e)
    near = (eps > 0)[:, None]
    k = kink[:, None]
    v = np.where(k, a + w * w, np.where(near, a + e * np.sinh(0.5 * top * u), a + 0.5 * width * u))
    jac = np.where(k, 2.0 * w * half_w,
                   np.where(near, 0.5 * top * e * np.cosh(0.5 * top * u), 0.5 * width))
    with np.errstate(divide="ignore"):
        weight = jac * wg * np.exp(_chi_logpdf(v, d))
    cond = _conditional(v * v, t, A, B, over_y, d)
    return np.einsum("ij,ij->i", weight, cond)


def _tiny_values(a, kink, eps, t, A, B, over_y, d, nodes):
    r"""The integral of :func:`_quadrature` for rows whose value is tiny, over their own window.

    The integrand f_χd(v) :math:`P(\cdot | v^{2})` is evaluated on a grid from ``a`` to the point
    where the :math:`\chi _d` density is 1e-320; the window is where it exceeds 1e-25 of its
    peak (one grid step wider each side), integrated with the same rule.
    """
    top = math.sqrt(stats.chi2.isf(1e-300, d)) + 2.0
    beyond = ~np.isfinite(a)           # a window starting at infinity (τ -> inf) holds nothing: value 0
    a = np.where(beyond, top, a)
    grid = a[:, None] + (np.maximum(top - a, 0.0))[:, None] * np.linspace(0.0, 1.0, _TINY_GRID)[None, :]
    with np.errstate(divide="ignore", under="ignore"):
        f = np.exp(_chi_logpdf(grid, d)) * _conditional(grid * grid, t, A, B, over_y, d)
    peak = f.max(axis=1)
    inside = f > 1e-25 * peak[:, None]
    step = grid[:, 1] - grid[:, 0]
    first = np.argmax(inside, axis=1)
    last = _TINY_GRID - 1 - np.argmax(inside[:, ::-1], axis=1)
    lo_w = np.maximum(grid[np.arange(len(a)), first] - step, a)
    hi_w = grid[np.arange(len(a)), last] + step
    starts = lo_w <= a  # the window starts at the row's own start: keep its map
    out = _quadrature_window(lo_w, hi_w, kink & starts, np.where(starts, eps, 0.0), t, A, B, over_y, d, nodes)
    return np.where((peak > 0) & ~beyond, out, 0.0)


def _quadrature(n, gamma, tau, d, sigma2, statistic, nodes=_QUAD_NODES):
    """:func:`_quadrature_rows` in blocks of :data:`_QUAD_BLOCK` values: the same numbers (every value is
    computed on its own row), with working arrays of at most a block's rows x nodes."""
    n, gamma, tau = np.broadcast_arrays(np.asarray(n, float), np.asarray(gamma, float), np.asarray(tau, float))
    if n.size <= _QUAD_BLOCK:
        return _quadrature_rows(n, gamma, tau, d, sigma2, statistic, nodes)
    shape = n.shape
    n, gamma, tau = n.ravel(), gamma.ravel(), tau.ravel()
    out = np.empty(n.size)
    for lo in range(0, n.size, _QUAD_BLOCK):
        block = slice(lo, lo + _QUAD_BLOCK)
        out[block] = _quadrature_rows(n[block], gamma[block], tau[block], d, sigma2, statistic, nodes)
    return out.reshape(shape)


def _quadrature_rows(n, gamma, tau, d, sigma2, statistic, nodes=_QUAD_NODES):
    r""":math:`p_τ` for :math:`z \sim \mathcal{N}(μ, σ^{2} I)` without clipping, as a 1-D Gauss–Legendre integral.

    Write :math:`\bar z_1 - μ_{\bar z} = σ\sqrt{(n-1)/n}\, g` and :math:`η = (γ/\sqrt n) h`, g, h iid :math:`\mathcal{N}(0, I_d)`,
    :math:`k^{2} = σ^{2}/(γ^{2}(n-1))`, m = 1 ("paper") or (n−1)/n ("exact"),
    c = 0 or :math:`(d/2)\log(n/(n-1))`. Then :math:`2(Λ - c) = m\|h + k g\|^{2} - \|h\|^{2}`, a
    quadratic form whose 2x2 matrix per coordinate is :math:`[[m k^{2}, m k], [m k, m-1]]`
    has eigenvalues A > 0 > −B; so :math:`2(Λ - c) = A X - B Y` with X, Y iid :math:`\chi^{2}_d` and

        :math:`p_τ = P(A X - B Y > t)`,  :math:`t = 2(τ - c)`.

    Conditioned on the variable with the smaller coefficient (then the smoother one), integrated in χ-space
    (:math:`v = \sqrt X` or :math:`\sqrt Y`, density :math:`\propto v^{d-1} e^{-v^{2}/2}`, smooth for all d),
    split where the conditional probability hits 0 or 1.
    """
    n, gamma, tau = np.broadcast_arrays(np.asarray(n, float), np.asarray(gamma, float), np.asarray(tau, float))
    shape = n.shape
    n, gamma, tau = n.ravel(), gamma.ravel(), tau.ravel()
    with np.errstate(over="ignore", under="ignore"):
        k2 = (math.sqrt(sigma2) / gamma) ** 2 / (n - 1.0)
        t_paper = 2.0 * tau  # may overflow to inf for absurd τ: then p = 0, the right limit
    # Degenerate limits, fixed at the end: k² = inf (γ → 0) leaks surely; k² = 0 (γ → ∞)
    # makes the paper's Λ ≡ 0 (no leak); the exact statistic keeps a finite k² = 0 form.
    sure = np.isposinf(k2)
    none = (k2 == 0) if statistic == "paper" else np.zeros(k2.shape, bool)
    k2 = np.where(sure | none, 1.0, k2)
    if statistic == "paper":  # m = 1, c = 0: T = k² >= 0
        disc = np.sqrt(k2) * np.sqrt(k2 + 4.0)  # √(k⁴ + 4k²) without overflow
        A = 0.5 * (k2 + disc)
        B = k2 / A
        t = t_paper
    else:
        m = (n - 1.0) / n
        T = m * k2 + m - 1.0
        disc = np.hypot(T, 2.0 * np.sqrt(m * k2))
        # A = (T + disc)/2, B = (disc − T)/2 and A B = m k²: take each from the stable side
        big = 0.5 * (np.abs(T) + disc)
        small = m * k2 / big
        A = np.where(T >= 0, big, small)
        B = np.where(T >= 0, small, big)
        t = 2.0 * (tau - _llr_offset(n, d))
    # Condition on Y (coefficient B) when A >= B: P(AX − BY > t) = E_Y[sf((t + BY)/A)];
    # otherwise on X: E_X[cdf((AX − t)/B)]. Below the kink v*² the conditional
    # probability is exactly 1 (first case, t < 0) or 0 (second case, t > 0).
    over_y = A >= B
    # A = 0 (exact statistic, k² = 0) only where over_y is False; t/A may overflow (τ huge): inf
    with np.errstate(divide="ignore", over="ignore"):
        v_star_sq = np.where(over_y, np.maximum(-t, 0.0) / B,
                             np.where(t > 0, np.maximum(t, 0.0) / np.where(A > 0, A, 1.0), 0.0))
        v_star_sq = np.where(~over_y & (t > 0) & (A == 0), np.inf, v_star_sq)
    below = np.where(over_y & (t < 0), special.chdtr(d, v_star_sq), 0.0)
    lo, hi = _chi_support(d)
    v_star = np.sqrt(v_star_sq)
    a_start = np.maximum(v_star, lo)
    active = a_start < hi
    a_lim = np.minimum(a_start, hi)
    kink = v_star > lo
    # Without a kink the conditional probability is a function of (V + e) with e >= 0
    # (e = t/B conditioning on Y, −t/A on X), singular like (V + e)^{d/2} at V = −e: for
    # small e (τ → 0) that singularity sits at distance √e from v = 0, too close for a
    # plain rule (an error of 5e-8 at d = 1, τ = 1e-6); v = a + √e sinh(u) resolves it.
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        e = np.where(over_y, t / B, -t / np.where(A > 0, A, 1.0))
    eps_near = np.where(~kink & (e > 0) & (e < _NEAR_SINGULAR ** 2), np.sqrt(np.maximum(e, 0.0)), 0.0)
    integral = _quadrature_window(a_lim, np.full_like(a_lim, hi), kink, eps_near, t, A, B, over_y, d, nodes)
    integral = np.where(active, integral, 0.0)
    # Values below ~1e-12 have their mass beyond the 1e-18 χ_d window (relative error
    # up to 100%, e.g. 0 for 1e-31 under the exact statistic): integrate them again over
    # the window where the integrand is within 1e-25 of its peak, located on a grid.
    tiny = below + integral < _TINY  # also rows whose mass starts beyond the window (not active)
    # ... but not a window that starts at infinity (v*² = t/A overflows: gamma ~ 1e200 under the exact
    # statistic): no mass at all, p = 0 (its grid would be inf - inf)
    tiny &= np.isfinite(a_start)
    if tiny.any():
        integral[tiny] = _tiny_values(a_start[tiny], kink[tiny], eps_near[tiny], t[tiny], A[tiny], B[tiny],
                                      over_y[tiny], d, nodes)
    p = np.clip(below + integral, 0.0, 1.0)
    p = np.where(sure, 1.0, np.where(none, 0.0, p))
    return p.reshape(shape)


def _exact_leak_given_perp(s, chi2_perp, n, d, gamma, tau):
    r""":math:`P(Λ_{\mathrm{exact}} > τ \mid Z, \|η_⊥\|^{2})`: the exact statistic, noise along the record integrated out.

    Split :math:`η = ξ e + η_⊥` with :math:`e = (\bar z - μ_{\bar z})/s`, :math:`ξ \sim \mathcal{N}(0, γ^{2}/n)` and
    :math:`\|η_⊥\|^{2} = (γ^{2}/n) \chi^{2}_{d-1}` (``chi2_perp``). Then
    :math:`2γ^{2}(Λ - c) = s^{2}/(n-1) + 2sξ - ξ^{2} - \|η_⊥\|^{2}`, so Λ > τ iff
    :math:`(ξ - s)^{2} < s^{2} - K` with :math:`K = 2γ^{2}(τ - c) - s^{2}/(n-1) + \|η_⊥\|^{2}`, a Gaussian
    interval probability. Averaged over ``chi2_perp`` draws: an unbiased (Rao–Blackwellized) Monte Carlo
    estimate, far cheaper than the noncentral :math:`\chi ^{2}` cdf when :math:`n s^{2}/γ^{2}` is large.
    """
    sd = gamma / np.sqrt(n)
    c = _llr_offset(n, d)
    K = 2.0 * gamma**2 * (tau - c) - s**2 / (n - 1) + sd**2 * chi2_perp
    half = np.sqrt(np.maximum(s**2 - K, 0.0))
    lo = (s - half) / sd
    hi = (s + half) / sd
    # Φ(hi) − Φ(lo), computed on the accurate side
    prob = np.where(lo > 0, special.ndtr(-lo) - special.ndtr(-hi), special.ndtr(hi) - special.ndtr(lo))
    return np.where(s**2 > K, prob, 0.0)


def _paper_leak_unchecked(s, n, gamma, tau):
    r"""Lemma 7's :math:`\bar Φ(τ/μ' - μ'/2)` for checked arrays (the Monte Carlo's inner loop), in
    :func:`leak_probability`'s floating-point steps and so with its values: μ' = 0 gives 0, μ' = +inf gives 1.
    """
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        mu = (s / gamma) * (math.sqrt(n) / (n - 1))
        return special.ndtr(0.5 * mu - tau / mu)


def _montecarlo(n_values, gamma, tau, d, mu, L, R, statistic, samples, rng):
    """:math:`p_τ` and its standard error by simulating whole datasets (``"montecarlo"`` of
    :func:`marginal_leak_probability`): each dataset's mean conditional leak probability is one iid sample."""
    n_values, gamma, tau = np.broadcast_arrays(np.asarray(n_values, float), gamma, tau)
    shape = n_values.shape
    p = np.empty(shape)
    se = np.empty(shape)
    for n in np.unique(n_values):
        if n != int(n):
            raise ValueError(f"n must be an integer for method='montecarlo'; got {n}")
        n = int(n)
        sel = n_values == n
        g_sel, t_sel = gamma[sel], tau[sel]
        datasets = max(math.ceil(samples / n), 20)
        batch = max(1, min(datasets, 2_000_000 // (n * d)))
        means = np.empty((datasets, g_sel.size))
        done = 0
        while done < datasets:
            b = min(batch, datasets - done)
            Z = rng.standard_normal((b, n, d))
            if L is not None:
                Z = Z @ L.T
            if mu is not None:
                Z += mu
            Z = _records.clip_inplace(Z, R)
            Z -= Z.mean(axis=1, keepdims=True)
            s = np.sqrt(np.einsum("bij,bij->bi", Z, Z))  # (b, n)
            if statistic == "exact":
                chi2_perp = rng.chisquare(d - 1, size=s.shape) if d > 1 else np.zeros(s.shape)
            # the (γ, τ) values in chunks: one temporary of at most ~4e6 conditional probabilities
            step = max(1, 4_000_000 // s.size)
            for lo in range(0, g_sel.size, step):
                g, t = g_sel[None, None, lo:lo + step], t_sel[None, None, lo:lo + step]
                if statistic == "paper":
                    lp = _paper_leak_unchecked(s[:, :, None], n, g, t)
                else:
                    lp = _exact_leak_given_perp(s[:, :, None], chi2_perp[:, :, None], n, d, g, t)
                means[done:done + b, lo:lo + step] = lp.mean(axis=1)
            done += b
        p[sel] = means.mean(axis=0)
        se[sel] = means.std(axis=0, ddof=1) / math.sqrt(datasets)
    return p, se


def exact_leak_floor(n, *, d, tau):
    r"""The leak probability that no noise removes, under the exact remove-one statistic.

    With :math:`c = (d/2) \log(n/(n - 1))` (:func:`exact_llr_offset`), Λ → :math:`c - \chi ^{2}_d/(2n)` as
    γ → ∞ whatever the record, so (proof: the book, chapter 04)

    .. math::

       \lim_{\gamma\to\infty} P(\Lambda > \tau)
       = P\big(\chi^2_d < 2n(c - \tau)\big)
       = P\!\left(\tfrac d2,\; n(c-\tau)\right)

    (the regularized lower incomplete gamma function) when c > τ, and 0 otherwise; also the limit of
    the marginal :math:`p_τ` of Lemma 8. It is positive exactly when
    :math:`n < 1/(1 - e^{-2τ/d}) \approx d/(2τ) + 1/2`, where :math:`C = 1 + r - (q + r) p_τ` stays below
    1 + r − (q + r)·floor for every γ: a survival threshold may not exist at all. The paper's statistic
    has no floor.

    Parameters
    ----------
    n, d, tau
        As in the module docstring, with any n > 1.

    Returns
    -------
    float or numpy.ndarray
        The floor, broadcast over ``n`` and ``tau``.

    References
    ----------
    Paper eq. 8 and Lemma 7 (whose exact-statistic version this is the
    γ → ∞ limit of); the exact remove-one statistic of the authors' code
    (``conventions="authors"``).

    Examples
    --------
    >>> round(float(exact_leak_floor(100, d=12, tau=0.02)), 4)
    0.2196
    >>> float(exact_leak_floor(1000, d=12, tau=0.02))     # above d/(2 tau) + 1/2 = 300.5: no floor
    0.0
    """
    n = check_real("n", n, low=1, low_open=True)
    d = check_int("d", d, low=1)
    tau = _tau(tau)
    c = _llr_offset(n, d)
    with np.errstate(over="ignore", invalid="ignore"):
        x = np.asarray(n, float) * (c - np.asarray(tau, float))
    return _out(np.where(x > 0, special.gammainc(0.5 * d, np.where(x > 0, x, 0.0)), 0.0))


def marginal_leak_probability(n, gamma, *, tau, d, R, mu=None, Sigma=None, statistic="paper", method="auto"):
    r"""Marginal leak probability :math:`p_τ = \mathbb{E}_Z[P(Λ > τ \mid Z)]` of a record (Lemma 8, eq. 11).

    Records are :math:`z \sim \mathcal{N}(\mu, \Sigma)` (Assumption 1), clipped to radius ``R``,
    in a dataset of ``n`` records; the growth factor of Algorithm 1 is
    :math:`1 + r - (q + r) p_τ` (eq. 12).

    How ``method`` computes it (an :class:`Integration` also sets the Monte Carlo's ``samples`` and ``seed``):

    ``"quadrature"``
        For an isotropic :math:`Σ = σ^{2} I` when clipping is negligible: μ then cancels and
        :math:`p_τ` is a 1-D integral (the statistic is a difference of two scaled :math:`\chi ^{2}_d`
        variables), by a 96-node Gauss–Legendre rule in χ-space, vectorized over ``n, gamma, tau``
        (tens of µs per value in arrays, ~0.1-0.3 ms per scalar call); ``se = 0``. Clipping is negligible
        when n :math:`P(\|z\| > R)` is at most ``CLIP_TOLERANCE`` = 1e-6; otherwise ``ValueError``. Against
        a 60-digit mpmath reference (d = 1, 2, 12, τ = 1e-6 to 5, both statistics) the absolute error is
        below 1e-13 and, for values below 1e-12 (down to about 1e-300), the relative error below 1e-6.
    ``"montecarlo"``
        Simulates ``max(ceil(samples / n), 20)`` whole datasets per value of integer ``n``
        (clipping and any Σ included) and averages every record's conditional leak probability;
        ``se`` is the standard error over datasets. The same draws serve all ``gamma`` and ``tau``.
    ``"auto"``
        ``"quadrature"`` where it is exact, ``"montecarlo"`` otherwise -- except where the Monte
        Carlo would draw more than ``MONTECARLO_BUDGET`` = 1e8 normals or cannot hold one dataset
        (n·d above ``MAX_MONTECARLO_DRAWS`` = 5e7, e.g. an uncapped mean-field population): there an
        isotropic Σ whose per-record clip probability :math:`P(\|z\| > R)` is at most
        ``CLIP_FALLBACK`` = 1e-3 uses the quadrature, with an error of about that probability. Other
        datasets too large to simulate raise ``ValueError``.

    Parameters
    ----------
    n, gamma, tau, d, R, statistic
        As in the module docstring (real n for the quadrature only).
    mu, Sigma : array_like, optional
        Data mean μ, shape (d,) (default 0), and covariance Σ, shape (d, d) (default identity).
    method : {"auto", "quadrature", "montecarlo"} or Integration

    Returns
    -------
    LeakProbability
        ``p``, ``se`` and the ``method`` used.

    References
    ----------
    Paper Lemma 8, eq. 11 and eq. 12 (appendix D.3).

    Examples
    --------
    >>> res = marginal_leak_probability(100, 1.0, tau=0.02, d=12, R=10.0)
    >>> res.method, round(res.p, 4), res.se
    ('quadrature', 0.5434, 0.0)
    """
    n = _n(n)
    gamma, tau = _gamma(gamma), _tau(tau)
    d = check_int("d", d, low=1)
    R = check_real("R", R, low=0, low_open=True, scalar=True)
    default_law = mu is None and Sigma is None
    mu = check_mean(mu, d)
    Sigma = None if Sigma is None else check_covariance(Sigma, d)  # None: Σ = I, never built
    statistic = _statistic(statistic)
    integration = method if isinstance(method, Integration) else Integration(method)
    method = integration.method
    samples = MONTECARLO_SAMPLES if integration.samples is None else integration.samples
    rng = check_rng(integration.seed)  # checked even when the quadrature does not need it
    shape = check_same_shape(n=n, gamma=gamma, tau=tau)
    scalar = shape == ()

    sigma2 = 1.0 if Sigma is None else _records.isotropic_variance(Sigma)
    if method in ("auto", "quadrature"):
        reason = None
        p_clip = float("nan")
        if sigma2 is None:
            reason = "Sigma is not isotropic (sigma^2 I)"
        else:
            p_clip = (float(special.chdtrc(d, R * R)) if default_law
                      else _records.clip_probability_checked(d, R, mu, Sigma, sigma2))
            clip_bound = float(np.max(n)) * p_clip
            if not clip_bound <= CLIP_TOLERANCE:  # NaN (not computable) never selects the shortcut
                reason = (f"clipping is not negligible: n * P(||z|| > R) = {clip_bound:.3g} > "
                          f"{CLIP_TOLERANCE:g}")
        n_top = float(np.max(n))
        too_big = n_top * d > MAX_MONTECARLO_DRAWS
        too_costly = too_big or max(math.ceil(samples / n_top), 20) * n_top * d > MONTECARLO_BUDGET
        # p_clip <= CLIP_FALLBACK is False for NaN: a clip probability that cannot be computed never
        # selects the quadrature
        if reason is None or (method == "auto" and too_costly and p_clip <= CLIP_FALLBACK):
            p = _quadrature(n, gamma, tau, d, sigma2, statistic)
            p = np.broadcast_to(p, shape)
            return LeakProbability(_out(p), 0.0 if scalar else np.zeros(shape), "quadrature")
        if method == "quadrature":
            raise ValueError(f"method='quadrature' is exact only for isotropic, unclipped data; {reason}")
    if float(np.max(n)) * d > MAX_MONTECARLO_DRAWS:
        why = ("" if method == "montecarlo" else
               "; the quadrature is no substitute here: " + (reason if sigma2 is None else
                                                               f"P(||z|| > R) = {p_clip:.3g} > {CLIP_FALLBACK:g}"))
        raise ValueError(f"n must be at most {MAX_MONTECARLO_DRAWS // d:.3g} for method='montecarlo' "
                         f"(one simulated dataset holds n*d normal draws, at most {MAX_MONTECARLO_DRAWS:.0e}); "
                         f"got n up to {float(np.max(n)):.4g} with d={d}{why}")
    L = None if Sigma is None or sigma2 == 1.0 else np.linalg.cholesky(Sigma)
    mu_arg = None if not np.any(mu) else mu
    p, se = _montecarlo(n, np.asarray(gamma, float), np.asarray(tau, float), d, mu_arg, L, R,
                        statistic, samples, rng)
    return LeakProbability(_out(p), _out(se), "montecarlo")
