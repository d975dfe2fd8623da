"""Population dynamics of the Gaussian model: who survives, and at what cost.

Paper §4.5, Lemma 9, Remarks 2-3, Theorem 4 and appendices D.3, D.4 and E.
Everything here is built on the marginal leak probability p_tau of
:func:`perfpriv.leakage.marginal_leak_probability` (Lemma 8, eq. 11):

* the expected growth factor C(gamma) = 1 + r - (q + r) p_tau (eq. 13),
  :func:`growth_factor`;
* the sufficient survival threshold gamma_c of Theorem 2 (worst case
  ``s = 2R``), :func:`critical_gamma`, and the exact gamma at which C = 1,
  :func:`exact_critical_gamma`;
* the finite-sample error bounds of Theorem 3, :func:`kappa` and
  :func:`error_bounds`;
* mean-field trajectories N_t = N_{t-1} C(gamma; N_{t-1}),
  :func:`mean_field_population`, :func:`mean_field_error`,
  :func:`mean_field_cumulative_error`;
* Lemma 9's cumulative error bound, :func:`cumulative_error_bound`;
* Theorem 4's PAC horizon, :func:`pac_radius` and :func:`pac_rounds`.

Conventions shared by every function
------------------------------------
``gamma`` is the per-user noise scale gamma (the release is the clipped
mean plus N(0, gamma^2/N I_d)), ``tau`` the leak threshold tau on the
log-likelihood ratio, ``q`` the probability that a leaked user leaves and
``r`` the probability that a non-leaked user recruits one more. ``d``,
``R``, ``mu`` and ``Sigma`` describe the data (dimension, clipping radius,
mean and covariance of the Gaussian records, defaults 0 and I), and
``statistic`` chooses the membership statistic ("paper": Lemma 6;
"exact": the exact remove-one likelihood ratio). ``method``, ``samples``
and ``seed`` are passed to :func:`perfpriv.leakage.marginal_leak_probability`;
functions that evaluate p_tau many times turn ``seed`` into one fixed
integer first, so that a Monte Carlo p_tau is a deterministic (common random
numbers) function of gamma and n.

Population sizes may be real numbers (the mean field is a real-valued
recursion): p_tau is evaluated at real n >= 2 (the quadrature of
:mod:`perfpriv.leakage` accepts real n; a Monte Carlo p_tau rounds n to the
nearest integer). At n = 1 the leak probability is taken to be 1 -- the
n -> 1 limit of Lemma 7, where a one-record release *is* the record -- and
for 1 < n < 2 it is interpolated linearly between that and p_tau(2), which
keeps p_tau and the mean-field objectives continuous in n.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from . import gaussian, leakage
from ._validate import (
    check_choice,
    check_covariance,
    check_int,
    check_mean,
    check_order,
    check_probability,
    check_real,
    check_rng,
    check_same_shape,
)

__all__ = [
    "growth_factor",
    "critical_gamma",
    "exact_critical_gamma",
    "kappa",
    "ErrorBounds",
    "error_bounds",
    "mean_field_population",
    "mean_field_error",
    "mean_field_cumulative_error",
    "cumulative_error_bound",
    "pac_radius",
    "pac_rounds",
]

_STATISTICS = ("paper", "exact")
_METHODS = ("auto", "montecarlo", "quadrature")
_ROUNDS = ("paper", "algorithm")
_MIN_N = 2.0  # p_tau(1) = 1, linear on [1, 2] (module docstring)


# --------------------------------------------------------------------------
# internal helpers
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Model:
    """Validated data model shared by every p_tau evaluation."""

    d: int
    R: float
    mu: np.ndarray
    Sigma: np.ndarray
    statistic: str
    method: str
    samples: int | None
    seed: int | None
    mu_given: bool
    sigma_given: bool


def _model(d, R, mu, Sigma, statistic, method="auto", samples=None, seed=None, *, fix_seed=True):
    d = check_int("d", d, low=1)
    R = check_real("R", R, low=0, low_open=True, scalar=True)
    mu_arr = check_mean(mu, d)
    Sigma_arr = check_covariance(Sigma, d)
    statistic = check_choice("statistic", statistic, _STATISTICS)
    method = check_choice("method", method, _METHODS)
    if samples is not None:
        samples = check_int("samples", samples, low=1)
    if fix_seed:
        # one fixed integer: repeated p_tau evaluations share their random numbers
        seed = None if seed is None and method == "quadrature" else int(check_rng(seed).integers(2**63))
    elif seed is not None and not isinstance(seed, np.random.Generator):
        check_rng(seed)  # type and sign checks now (a Generator is passed on untouched)
    return _Model(d, R, mu_arr, Sigma_arr, statistic, method, samples, seed,
                  mu is not None, Sigma is not None)


def _out(x):
    """Python float for 0-d results, array otherwise."""
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


def _marginal_p(n, gamma, tau, model: _Model):
    """p_tau at broadcast arrays ``n`` (real, >= 1) and ``gamma`` (Lemma 8).

    The distinct (n, gamma) pairs with n >= 2 go to
    :func:`perfpriv.leakage.marginal_leak_probability` in one vectorized
    call. Below two records (module convention) p is interpolated linearly
    between p = 1 at n = 1 and p_tau(2) at n = 2, so that p_tau -- and the
    mean-field objectives built on it -- stay continuous in n.
    """
    n, gamma = np.broadcast_arrays(np.asarray(n, float), np.asarray(gamma, float))
    huge = np.isposinf(n)
    if huge.any():
        # an uncapped mean-field population that overflowed: p_tau -> 0 as n -> inf
        # (a = n s^2 / (2 gamma^2 (n-1)^2) -> 0 and (d/2) log(n/(n-1)) -> 0)
        p = np.zeros(n.shape)
        if (~huge).any():
            p[~huge] = _marginal_p(n[~huge], gamma[~huge], tau, model)
        return p
    low = n < _MIN_N
    if low.any():
        p = np.ones(n.shape)
        rest = ~low
        if rest.any():
            p[rest] = _marginal_p_leakage(n[rest], gamma[rest], tau, model)
        w = n[low] - 1.0  # in [0, 1)
        pos = w > 0
        if pos.any():
            p2 = _marginal_p_leakage(np.full(int(pos.sum()), _MIN_N), gamma[low][pos], tau, model)
            pl = p[low]
            pl[pos] = (1 - w[pos]) + w[pos] * p2
            p[low] = pl
        return p
    return _marginal_p_leakage(n, gamma, tau, model).reshape(n.shape)


def _marginal_p_leakage(n, gamma, tau, model: _Model):
    """p_tau from perfpriv.leakage at arrays n >= 2, gamma of one shape (returned flat)."""
    n, gamma = np.ravel(n), np.ravel(gamma)
    shape = np.shape(n)
    if n.size == 0:
        return np.empty(shape)
    kwargs = dict(d=model.d, R=model.R, statistic=model.statistic, method=model.method, seed=model.seed)
    if model.mu_given:
        kwargs["mu"] = model.mu
    if model.sigma_given:
        kwargs["Sigma"] = model.Sigma
    if model.samples is not None:
        kwargs["samples"] = model.samples
    pairs, inverse = np.unique(np.stack([n, gamma]), axis=1, return_inverse=True)
    try:
        vals = leakage.marginal_leak_probability(pairs[0], pairs[1], tau, **kwargs).p
    except ValueError:
        # Monte Carlo p_tau simulates whole datasets and needs integer n:
        # real mean-field populations are rounded to the nearest integer there.
        if np.all(pairs[0] == np.rint(pairs[0])):
            raise
        vals = leakage.marginal_leak_probability(np.rint(pairs[0]), pairs[1], tau, **kwargs).p
    vals = np.broadcast_to(np.asarray(vals, float), pairs[0].shape)
    return np.clip(vals[np.ravel(inverse)], 0.0, 1.0)


def _excess(p, q, r):
    """C - 1 = r - (q + r) p_tau (eq. 13), computed without cancellation."""
    return r - (q + r) * p


def _release_error(gamma, model: _Model):
    """gamma^2 Tr(Sigma^-1) + d: the expected squared Mahalanobis error of a
    one-record release, N times that of an N-record one (Lemma 3, eq. 7)."""
    return np.asarray(gaussian.mahalanobis_error(gamma, 1, model.Sigma), float)


def _inverse_geometric_sum(excess, T):
    """sum_{t=1}^T C^{-t} with C = 1 + excess, stably.

    Equals (1 - C^{-T}) / (C - 1) = -expm1(-T log1p(C - 1)) / (C - 1), with
    the limit T at C = 1 and +inf when C <= 0.
    """
    excess = np.asarray(excess, float)
    out = np.full(excess.shape, np.inf)
    pos = excess > -1.0
    e = excess[pos]
    # expm1/log1p keep full relative accuracy for every e != 0; only where T |e| is
    # tiny (including e = 0 and subnormal e) the first-order expansion
    # T (1 - (T + 1) e / 2) is used (its relative error is O((T e)^2) < 1e-16).
    small = np.abs(e) * T < 1e-8
    safe = np.where(small, 1.0, e)
    with np.errstate(over="ignore"):  # C^-T beyond 1e308: the sum is +inf in double precision
        val = -np.expm1(-T * np.log1p(safe)) / safe
    val = np.where(small, T * (1.0 - 0.5 * (T + 1) * e), val)
    out[pos] = val
    return out


def _check_common(gamma, tau, q, r):
    gamma = check_real("gamma", gamma, low=0, low_open=True)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    q = check_probability("q", q)
    r = check_probability("r", r)
    return gamma, tau, q, r


def _check_cap_floor(cap, floor, n0):
    if cap is not None:
        cap = check_real("cap", cap, low=1, scalar=True)
        check_order("n0", n0, "cap", cap)
    if floor is not None:
        floor = check_real("floor", floor, low=1, scalar=True)
        check_order("floor", floor, "n0", n0)
    return cap, floor


# --------------------------------------------------------------------------
# growth factor and survival threshold
# --------------------------------------------------------------------------
def growth_factor(gamma, tau, q, r, *, n, d, R, mu=None, Sigma=None, statistic="paper",
                  method="auto", samples=None, seed=None):
    r"""Expected growth factor C(gamma) = 1 + r - (q + r) p_tau (eq. 13).

    The expected ratio E[N_t | N_{t-1}] / N_{t-1} of Lemma 8 when the
    previous round had ``n`` = N_{t-1} records.

    Parameters
    ----------
    gamma : float or array_like
        gamma > 0, per-user noise scale.
    tau : float
        tau > 0, leak threshold on the log-likelihood ratio.
    q, r : float or array_like
        q, probability that a leaked user leaves; r, probability that a
        non-leaked user recruits one more (both in [0, 1]).
    n : float or array_like
        N_{t-1} >= 1, population of the previous round. Real values are
        allowed (mean field); p_tau(1) = 1 and, between 1 and 2, p_tau is
        interpolated linearly (module docstring).
    d, R, mu, Sigma, statistic
        Data model (see the module docstring).
    method, samples, seed
        Passed to :func:`perfpriv.leakage.marginal_leak_probability`.

    Returns
    -------
    float or numpy.ndarray
        C, broadcast over ``gamma``, ``q``, ``r`` and ``n``.

    References
    ----------
    Paper, eq. (12)-(13) (Lemma 8).

    Examples
    --------
    >>> from perfpriv.dynamics import growth_factor
    >>> round(growth_factor(5.0, 0.02, 0.3, 0.6, n=1000, d=12, R=10, method="quadrature"), 3)
    1.444
    """
    gamma, tau, q, r = _check_common(gamma, tau, q, r)
    n = check_real("n", n, low=1)
    check_same_shape(gamma=gamma, q=q, r=r, n=n)
    model = _model(d, R, mu, Sigma, statistic, method, samples, seed, fix_seed=False)
    p = _marginal_p(n, gamma, tau, model)
    return _out(1.0 + _excess(p, q, r))


def _probit_factor(q, r, tau):
    """(x + sqrt(x^2 + 2 tau)) / (2 tau) with x = Phi^{-1}(q / (q + r)), stably."""
    q, r = np.broadcast_arrays(np.asarray(q, float), np.asarray(r, float))
    both_zero = (q == 0) & (r == 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = special.ndtri(np.where(both_zero, 0.5, q / np.where(both_zero, 1.0, q + r)))
        root = np.hypot(x, math.sqrt(2 * tau))  # sqrt(x^2 + 2 tau), inf-safe
        # x >= 0: no cancellation in the sum; x < 0: use the conjugate form
        # 1 / (sqrt(x^2 + 2 tau) - x), which tends to 0 as x -> -inf.
        fac = np.where(x >= 0, (x + root) / (2 * tau), 1.0 / (root - x))
    fac = np.where(np.isposinf(x), np.inf, fac)
    fac = np.where(np.isneginf(x), 0.0, fac)
    return np.where(both_zero, 0.0, fac)


def critical_gamma(q, r, tau, n, R):
    r"""Sufficient survival threshold gamma_c of Theorem 2 (explicit form).

    .. math::

       \gamma_c = \frac{2R\sqrt{N}}{N-1}\cdot
       \frac{x + \sqrt{x^2 + 2\tau}}{2\tau}, \qquad x = \Phi^{-1}\!\Big(\frac{q}{q+r}\Big).

    With gamma >= gamma_c even a record at the worst-case distance
    s = ||z - mean|| = 2R leaks with probability at most r / (q + r), so
    C >= 1 whatever the data (the marginal p_tau is an average over
    s <= 2R of the decreasing-in-gamma Lemma 7 probability).

    Edge cases, all limits of the formula:

    * ``q = 0, r > 0``: nobody ever leaves, C = 1 + r(1 - p_tau) >= 1 for
      every gamma; x = -inf and the factor (x + sqrt(x^2+2 tau))/(2 tau)
      tends to 0, so gamma_c = 0. It is computed in the cancellation-free
      form 1 / (sqrt(x^2 + 2 tau) - x) whenever x < 0.
    * ``r = 0, q > 0``: nobody ever joins, C = 1 - q p_tau < 1 for every
      finite gamma (p_tau > 0); x = +inf and gamma_c = inf.
    * ``q = r = 0``: C = 1 identically, every gamma keeps the population;
      gamma_c = 0.

    Parameters
    ----------
    q, r : float or array_like
        Leave and recruit probabilities, in [0, 1].
    tau : float
        tau > 0, leak threshold.
    n : float or array_like
        N_{t-1} > 1, population size at which C_t must be >= 1.
    R : float
        R > 0, clipping radius.

    Returns
    -------
    float or numpy.ndarray
        gamma_c, broadcast over ``q``, ``r`` and ``n``.

    References
    ----------
    Paper, Theorem 2, eq. (14) and its proof in appendix D.3 (eq. 20-21).

    Examples
    --------
    >>> from perfpriv.dynamics import critical_gamma
    >>> round(critical_gamma(0.3, 0.6, 0.02, 1000, 10), 3)
    0.699
    >>> critical_gamma(0.0, 0.5, 0.02, 1000, 10), critical_gamma(0.5, 0.0, 0.02, 1000, 10)
    (0.0, inf)
    """
    q = check_probability("q", q)
    r = check_probability("r", r)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    n = check_real("n", n, low=1, low_open=True)
    R = check_real("R", R, low=0, low_open=True, scalar=True)
    check_same_shape(q=q, r=r, n=n)
    n = np.asarray(n, float)
    scale = 2 * R * np.sqrt(n) / (n - 1)
    fac = _probit_factor(q, r, tau)
    with np.errstate(invalid="ignore"):
        out = np.where(fac == 0, 0.0, scale * fac)
    return _out(out)


def exact_critical_gamma(q, r, tau, *, n, d, R, mu=None, Sigma=None, statistic="paper",
                         method="auto", samples=None, seed=None, bracket=(1e-6, 1e8)):
    r"""The noise scale at which the expected growth factor is exactly 1.

    Solves p_tau(gamma) = r / (q + r), i.e. C(gamma) = 1 (eq. 13), with
    :func:`scipy.optimize.brentq` on log gamma. p_tau decreases in gamma, so
    C >= 1 exactly for gamma at or above the returned value; comparing with
    :func:`critical_gamma` shows how conservative Theorem 2 is.

    Edge cases: ``q = 0`` (or ``q = r = 0``) gives 0 (C >= 1 for all gamma);
    ``r = 0 < q`` gives inf. If p_tau stays above r / (q + r) up to
    ``bracket[1]`` (possible with ``statistic="exact"`` at small n, whose
    constant (d/2) log(n/(n-1)) can exceed tau) the result is inf; if it is
    already below at ``bracket[0]`` the result is ``bracket[0]``.

    Parameters
    ----------
    q, r : float or array_like
        Leave and recruit probabilities, in [0, 1].
    tau : float
        tau > 0, leak threshold.
    n : float
        N_{t-1} >= 2, population size.
    d, R, mu, Sigma, statistic, method, samples, seed
        Data model and p_tau evaluation (module docstring). A Monte Carlo
        p_tau uses one fixed seed for every gamma, so the root is that of a
        deterministic function.
    bracket : tuple of float
        Search interval for gamma.

    Returns
    -------
    float or numpy.ndarray
        The exact threshold, broadcast over ``q`` and ``r``.

    References
    ----------
    Paper, eq. (13) and Theorem 2.

    Examples
    --------
    >>> from perfpriv.dynamics import critical_gamma, exact_critical_gamma
    >>> g = exact_critical_gamma(0.3, 0.6, 0.02, n=1000, d=12, R=10, method="quadrature")
    >>> round(g, 3), round(critical_gamma(0.3, 0.6, 0.02, 1000, 10) / g, 2)
    (0.118, 5.94)
    """
    q = check_probability("q", q)
    r = check_probability("r", r)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    n = check_real("n", n, low=2, scalar=True)
    lo, hi = _check_bracket(bracket)
    shape = check_same_shape(q=q, r=r)
    model = _model(d, R, mu, Sigma, statistic, method, samples, seed)
    qb, rb = np.broadcast_to(q, shape), np.broadcast_to(r, shape)
    out = np.empty(shape)
    cache: dict[float, float] = {}
    for idx in np.ndindex(shape):
        qi, ri = float(qb[idx]), float(rb[idx])
        if qi == 0:
            out[idx] = 0.0
        elif ri == 0:
            out[idx] = np.inf
        else:
            out[idx] = _solve_p_equals(ri / (qi + ri), n, tau, model, lo, hi, qi + ri, cache)
    return _out(out)


def _check_bracket(bracket):
    try:
        lo, hi = (float(b) for b in bracket)
    except (TypeError, ValueError):
        raise ValueError(f"bracket must be a pair (low, high) with 0 < low < high; got {bracket!r}") from None
    if not (0 < lo < hi < np.inf):
        raise ValueError(f"bracket must be a pair (low, high) with 0 < low < high < inf; got {bracket!r}")
    return lo, hi


def _solve_p_equals(target, n, tau, model, lo, hi, qr, cache):
    """Root of (q + r)(target - p_tau(e^u)) = C - 1 in u = log gamma."""
    key = round(target, 15)
    if key in cache:
        return cache[key]

    def f(u):
        return float(qr * (target - _marginal_p(n, math.exp(u), tau, model)))

    a, b = math.log(lo), math.log(hi)
    fa, fb = f(a), f(b)
    if fa >= 0:
        root = lo
    elif fb < 0:
        root = np.inf
    else:
        # shrink the bracket on a coarse log grid first (p_tau is monotone)
        grid = np.linspace(a, b, 29)
        vals = qr * (target - _marginal_p(n, np.exp(grid), tau, model))
        k = int(np.argmax(vals >= 0))
        a, b = grid[k - 1], grid[k]
        u = optimize.brentq(f, a, b, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=200)
        root = math.exp(u)
    cache[key] = root
    return root


# --------------------------------------------------------------------------
# Theorem 3
# --------------------------------------------------------------------------
def kappa(q, r):
    r"""Kantorovich constant of Theorem 3, (2 + r - q)^2 / (4 (1 - q)(1 + r)).

    The ratio sup E[1/X] E[X] over random variables X with values in
    [1 - q, 1 + r]; it is attained by the two-point law putting mass 1/2 on
    each end (Kantorovich's inequality). ``q = 1`` gives inf (X can be 0).

    Parameters
    ----------
    q, r : float or array_like
        Leave and recruit probabilities, in [0, 1].

    Returns
    -------
    float or numpy.ndarray
        kappa_{q,r} >= 1.

    References
    ----------
    Paper, Theorem 3, eq. (22).

    Examples
    --------
    >>> from perfpriv.dynamics import kappa
    >>> round(kappa(0.3, 0.6), 4), kappa(0.0, 0.0), kappa(1.0, 0.5)
    (1.1808, 1.0, inf)
    """
    q = check_probability("q", q)
    r = check_probability("r", r)
    check_same_shape(q=q, r=r)
    q, r = np.asarray(q, float), np.asarray(r, float)
    # (2 + r - q)^2 = 4 (1 - q)(1 + r) + (q + r)^2: written as 1 + (q + r)^2 / (4 (1 - q)(1 + r))
    # it is >= 1 in floating point too (the direct ratio rounds below 1 for tiny q + r)
    with np.errstate(divide="ignore"):
        out = 1.0 + (q + r) ** 2 / (4 * (1 - q) * (1 + r))
    return _out(out)


@dataclass(frozen=True)
class ErrorBounds:
    """Theorem 3's bounds on E[||o_t - mu||^2_{Sigma^-1} | N_{t-1}].

    Attributes
    ----------
    lower : float or numpy.ndarray
        (gamma^2 Tr Sigma^-1 + d) / (C N_{t-1}) (Jensen).
    upper : float or numpy.ndarray
        ``kappa * lower`` (Kantorovich).
    growth : float or numpy.ndarray
        C = C_t(gamma) used in both.
    kappa : float or numpy.ndarray
        kappa_{q,r}.

    Unpacks as ``lower, upper = error_bounds(...)``.
    """

    lower: np.ndarray | float
    upper: np.ndarray | float
    growth: np.ndarray | float
    kappa: np.ndarray | float

    def __iter__(self):
        yield self.lower
        yield self.upper


def error_bounds(gamma, tau, q, r, *, n_prev, d, R, mu=None, Sigma=None, statistic="paper",
                 method="auto", samples=None, seed=None):
    r"""Theorem 3: lower and upper bounds on the expected error of round t.

    .. math::

       \frac{\gamma^2\mathrm{Tr}\,\Sigma^{-1} + d}{C_t(\gamma) N_{t-1}}
       \le E\big[\|o_t-\mu\|^2_{\Sigma^{-1}} \mid N_{t-1}\big]
       \le \kappa_{q,r}\frac{\gamma^2\mathrm{Tr}\,\Sigma^{-1} + d}{C_t(\gamma) N_{t-1}}

    The proof assumes N_t / N_{t-1} lies in [1 - q, 1 + r], which holds
    only approximately at finite N (one shared noise draw makes the leak
    count over-dispersed), and a population floored at 1.

    Parameters
    ----------
    gamma, tau, q, r
        As in :func:`growth_factor`.
    n_prev : float or array_like
        N_{t-1} >= 1.
    d, R, mu, Sigma, statistic, method, samples, seed
        Data model and p_tau evaluation (module docstring).

    Returns
    -------
    ErrorBounds
        ``lower``, ``upper``, ``growth`` and ``kappa``.

    References
    ----------
    Paper, Theorem 3, eq. (15) and (22), appendix D.4.

    Examples
    --------
    >>> from perfpriv.dynamics import error_bounds
    >>> lo, hi = error_bounds(2.0, 0.02, 0.3, 0.6, n_prev=1000, d=12, R=10, method="quadrature")
    >>> round(lo, 4), round(hi, 4)
    (0.047, 0.0555)
    """
    gamma, tau, q, r = _check_common(gamma, tau, q, r)
    n_prev = check_real("n_prev", n_prev, low=1)
    check_same_shape(gamma=gamma, q=q, r=r, n_prev=n_prev)
    model = _model(d, R, mu, Sigma, statistic, method, samples, seed, fix_seed=False)
    C = 1.0 + _excess(_marginal_p(n_prev, gamma, tau, model), q, r)
    k = np.asarray(kappa(q, r), float)
    with np.errstate(divide="ignore"):
        lower = _release_error(gamma, model) / (C * np.asarray(n_prev, float))
    with np.errstate(invalid="ignore"):
        upper = np.where(lower == 0, 0.0, k * lower)
    return ErrorBounds(_out(lower), _out(upper), _out(C), _out(k))


# --------------------------------------------------------------------------
# mean field
# --------------------------------------------------------------------------
def _mean_field(gamma, tau, q, r, T, n0, cap, floor, model):
    gamma, q, r = np.broadcast_arrays(np.asarray(gamma, float), np.asarray(q, float), np.asarray(r, float))
    N = np.empty(gamma.shape + (T + 1,))
    N[..., 0] = n0
    for t in range(1, T + 1):
        prev = N[..., t - 1]
        with np.errstate(over="ignore"):  # uncapped growth past 1e308 gives inf (p_tau(inf) = 0)
            nxt = prev * (1.0 + _excess(_marginal_p(prev, gamma, tau, model), q, r))
        if cap is not None:
            nxt = np.minimum(nxt, cap)
        if floor is not None:
            nxt = np.maximum(nxt, floor)
        N[..., t] = nxt
        if np.array_equal(nxt, prev):
            # N_t = f(N_{t-1}) with f deterministic (fixed p_tau seed): a fixed point
            # (cap, floor, 0, inf or C = 1) repeats forever -- long horizons cost nothing
            N[..., t + 1:] = nxt[..., None]
            break
    return N


def mean_field_population(gamma, tau, q, r, *, T, n0, d, R, mu=None, Sigma=None, statistic="paper",
                          cap=20000, floor=1, method="auto", samples=None, seed=None):
    r"""Mean-field population trajectory N_t = N_{t-1} C(gamma; N_{t-1}).

    The expected-value recursion of Lemma 8 with the random population
    replaced by its mean at every step (the paper's "mean-field
    approximation"); p_tau is re-evaluated at every N_{t-1}, so C_t changes
    with the population (Lemma 12: it rises while the population grows).
    N_t is real-valued; p_tau is evaluated at real n (1 at n = 1, linear
    between 1 and 2; module docstring). Then N_t is clipped to
    ``[floor, cap]``.

    Long horizons are cheap and safe: once N_t = N_{t-1} (cap, floor, 0,
    C = 1) the rest of the trajectory is filled in without further p_tau
    evaluations; with ``cap=None`` a population growing past the double
    range becomes ``inf`` (p_tau(inf) = 0, its n -> inf limit) and stays
    there, and with ``floor=None`` a dying one reaches 0 -- no overflow
    warning, no NaN.

    Parameters
    ----------
    gamma, tau, q, r
        As in :func:`growth_factor` (``gamma``, ``q``, ``r`` broadcast).
    T : int
        Number of rounds (T >= 1).
    n0 : int
        N_0 >= 2, initial population.
    d, R, mu, Sigma, statistic
        Data model.
    cap : float or None
        Upper clip of the population (the simulations use 20000); ``None``
        for uncapped growth.
    floor : float or None
        Lower clip (Theorem 3 floors at 1); ``None`` for none.
    method, samples, seed
        p_tau evaluation (module docstring).

    Returns
    -------
    numpy.ndarray
        Shape ``broadcast(gamma, q, r).shape + (T + 1,)``: N_0, ..., N_T.

    References
    ----------
    Paper, Lemma 8, eq. (12)-(13); §4.5 (mean field); Lemma 12.

    Examples
    --------
    >>> from perfpriv.dynamics import mean_field_population
    >>> N = mean_field_population(2.0, 0.02, 0.3, 0.6, T=3, n0=1000, d=12, R=10, method="quadrature")
    >>> [round(float(x)) for x in N]
    [1000, 1277, 1653, 2174]
    """
    gamma, tau, q, r = _check_common(gamma, tau, q, r)
    T = check_int("T", T, low=1)
    n0 = check_int("n0", n0, low=2)
    cap, floor = _check_cap_floor(cap, floor, n0)
    check_same_shape(gamma=gamma, q=q, r=r)
    model = _model(d, R, mu, Sigma, statistic, method, samples, seed)
    return _mean_field(gamma, tau, q, r, T, n0, cap, floor, model)


def _rounds_slice(N, rounds):
    return N[..., 1:] if rounds == "paper" else N[..., :-1]


def mean_field_error(gamma, tau, q, r, *, T, n0, d, R, mu=None, Sigma=None, statistic="paper",
                     cap=20000, floor=1, rounds="paper", method="auto", samples=None, seed=None):
    r"""Mean-field expected error of each round, (gamma^2 Tr Sigma^-1 + d) / N_t.

    Lemma 3 at the mean-field population of :func:`mean_field_population`.

    Two indexings of the T releases exist:

    * ``rounds="paper"`` (Lemma 9): the release of round t = 1..T uses
      N_t = N_0 C_1 ... C_t records, so the first release already benefits
      from one round of growth.
    * ``rounds="algorithm"`` (Algorithm 1 and :func:`perfpriv.gaussian.simulate`):
      the first release uses the N_0 initial records; round t uses N_{t-1}.

    Parameters
    ----------
    gamma, tau, q, r, T, n0, d, R, mu, Sigma, statistic, cap, floor, method, samples, seed
        As in :func:`mean_field_population`.
    rounds : {"paper", "algorithm"}
        Which populations the T releases use (see above).

    Returns
    -------
    numpy.ndarray
        Shape ``broadcast(gamma, q, r).shape + (T,)``.

    References
    ----------
    Paper, Lemma 3 (eq. 7), Lemma 9 (proof).

    Examples
    --------
    >>> from perfpriv.dynamics import mean_field_error
    >>> e = mean_field_error(2.0, 0.02, 0.3, 0.6, T=3, n0=1000, d=12, R=10, method="quadrature")
    >>> [round(float(x), 4) for x in e]
    [0.047, 0.0363, 0.0276]
    """
    gamma, tau, q, r = _check_common(gamma, tau, q, r)
    rounds = check_choice("rounds", rounds, _ROUNDS)
    T = check_int("T", T, low=1)
    n0 = check_int("n0", n0, low=2)
    cap, floor = _check_cap_floor(cap, floor, n0)
    check_same_shape(gamma=gamma, q=q, r=r)
    model = _model(d, R, mu, Sigma, statistic, method, samples, seed)
    N = _mean_field(gamma, tau, q, r, T, n0, cap, floor, model)
    num = _release_error(np.broadcast_to(gamma, N.shape[:-1]), model)[..., None]
    with np.errstate(divide="ignore", over="ignore"):  # N_t = 0 or subnormal: infinite error
        return num / _rounds_slice(N, rounds)


def mean_field_cumulative_error(gamma, tau, q, r, *, T, n0, d, R, mu=None, Sigma=None,
                                statistic="paper", cap=20000, floor=1, rounds="paper",
                                method="auto", samples=None, seed=None):
    r"""Mean-field cumulative error E_total = sum over the T rounds of :func:`mean_field_error`.

    The quantity Lemma 9 bounds (with ``rounds="paper"``, ``cap=None``),
    computed exactly along the mean-field trajectory instead of with C_1
    frozen.

    Parameters
    ----------
    gamma, tau, q, r, T, n0, d, R, mu, Sigma, statistic, cap, floor, rounds, method, samples, seed
        As in :func:`mean_field_error`.

    Returns
    -------
    float or numpy.ndarray
        Broadcast over ``gamma``, ``q``, ``r``.

    References
    ----------
    Paper, Lemma 9 (definition of E_total).

    Examples
    --------
    >>> from perfpriv.dynamics import mean_field_cumulative_error
    >>> round(mean_field_cumulative_error(2.0, 0.02, 0.3, 0.6, T=3, n0=1000, d=12, R=10,
    ...                                   method="quadrature"), 4)
    0.1109
    """
    err = mean_field_error(gamma, tau, q, r, T=T, n0=n0, d=d, R=R, mu=mu, Sigma=Sigma,
                           statistic=statistic, cap=cap, floor=floor, rounds=rounds,
                           method=method, samples=samples, seed=seed)
    return _out(err.sum(axis=-1))


# --------------------------------------------------------------------------
# Lemma 9
# --------------------------------------------------------------------------
def cumulative_error_bound(gamma, tau, q, r, *, T, n0, d, R, mu=None, Sigma=None, statistic="paper",
                           method="auto", samples=None, seed=None):
    r"""Lemma 9's closed-form cumulative error Ê_total(gamma) (eq. 16 / 23).

    .. math::

       \hat{\mathcal E}_{\rm total}(\gamma) = \sum_{t=1}^{T}
       \frac{\gamma^2\mathrm{Tr}\,\Sigma^{-1}+d}{N_0 C_1^t}
       = \frac{\gamma^2\mathrm{Tr}\,\Sigma^{-1}+d}{N_0 (C_1-1)}\big(1 - C_1^{-T}\big),

    with C_1 = C(gamma; N_0). Computed as
    -expm1(-T log1p(C_1 - 1)) / (C_1 - 1), which is accurate near C_1 = 1
    (limit T (gamma^2 Tr Sigma^-1 + d) / N_0) and equals +inf when C_1 = 0.

    The paper proves Ê_total >= E_total only for C_t > 1 (growth regime,
    no cap, mean field). For C_1 <= 1 the same expression is still the
    finite sum above -- the cumulative error of a population shrinking by
    the fixed factor C_1 -- but it bounds nothing the paper proves.

    Parameters
    ----------
    gamma, tau, q, r
        As in :func:`growth_factor` (broadcast).
    T : int
        T >= 1, horizon.
    n0 : int
        N_0 >= 2, initial population (C_1 is evaluated at N_0).
    d, R, mu, Sigma, statistic, method, samples, seed
        Data model and p_tau evaluation.

    Returns
    -------
    float or numpy.ndarray
        Ê_total, broadcast over ``gamma``, ``q``, ``r``.

    References
    ----------
    Paper, Lemma 9, eq. (16) and (23); Remark 3.

    Examples
    --------
    >>> from perfpriv.dynamics import cumulative_error_bound
    >>> round(cumulative_error_bound(2.0, 0.02, 0.3, 0.6, T=3, n0=1000, d=12, R=10,
    ...                              method="quadrature"), 4)
    0.1126
    """
    gamma, tau, q, r = _check_common(gamma, tau, q, r)
    T = check_int("T", T, low=1)
    n0 = check_int("n0", n0, low=2)
    check_same_shape(gamma=gamma, q=q, r=r)
    model = _model(d, R, mu, Sigma, statistic, method, samples, seed)
    return _bound_from_p(gamma, q, r, _marginal_p(n0, gamma, tau, model), T, n0, model)


def _bound_from_p(gamma, q, r, p, T, n0, model):
    """Ê_total from the leak probability p = p_tau(gamma; N_0) (eq. 16)."""
    excess = _excess(np.asarray(p, float), np.asarray(q, float), np.asarray(r, float))
    num = _release_error(gamma, model)
    return _out(num / n0 * _inverse_geometric_sum(excess, T))


# --------------------------------------------------------------------------
# Theorem 4
# --------------------------------------------------------------------------
def _pac_constants(gamma, delta, model):
    """(B(R), V_{delta/2} + gamma sqrt(lambda_max(Sigma^-1) K_{delta/2})) of Theorem 4."""
    Sigma, mu, d, R = model.Sigma, model.mu, model.d, model.R
    eig = np.linalg.eigvalsh(Sigma)
    lam_max_sigma, lam_max_inv = float(eig.max()), float(1.0 / eig.min())
    M = math.sqrt(float(mu @ mu) + float(np.trace(Sigma)))
    if R > M:
        z = (R - M) / (2 * math.sqrt(lam_max_sigma))  # exp(-(R - M)^2 / (4 lambda_max)) = exp(-z^2)
        B = math.sqrt(lam_max_inv) * M * (math.exp(-z * z) if z < 1e150 else 0.0)
    else:
        # the concentration step of the proof needs R > M; Pr(||z|| > R) <= 1 instead
        B = math.sqrt(lam_max_inv) * M
    V = 2 * R * math.sqrt(2 * lam_max_inv * math.log(4 / delta))
    lg = math.log(2 / delta)
    K = d + 2 * math.sqrt(d * lg) + 2 * lg
    with np.errstate(over="ignore"):  # inf for absurd gamma or R: an infinite radius
        A = V + np.asarray(gamma, float) * math.sqrt(lam_max_inv * K)
    return B, A


def pac_radius(gamma, n, *, d, R, mu=None, Sigma=None, delta):
    r"""Theorem 4's high-probability radius for the Mahalanobis error at n records.

    With probability at least 1 - delta a release from ``n`` records
    satisfies ||o - mu||_{Sigma^-1} <= B(R) + (V_{delta/2} +
    gamma sqrt(lambda_max(Sigma^-1) K_{delta/2})) / sqrt(n), where

    * M = sqrt(||mu||^2 + Tr Sigma),
    * B(R) = sqrt(lambda_max(Sigma^-1)) M exp(-(R - M)^2 / (4 lambda_max(Sigma)))
      (clipping bias; the proof needs R > M -- for R <= M this function uses
      the trivial sqrt(lambda_max(Sigma^-1)) M),
    * V_{delta/2} = 2R sqrt(2 lambda_max(Sigma^-1) ln(4/delta)) (Pinelis),
    * K_{delta/2} = d + 2 sqrt(d ln(2/delta)) + 2 ln(2/delta) (Laurent-Massart).

    Parameters
    ----------
    gamma : float or array_like
        gamma > 0, noise scale.
    n : float or array_like
        Number of records (>= 1).
    d, R, mu, Sigma
        Data model.
    delta : float
        Failure probability in (0, 1).

    Returns
    -------
    float or numpy.ndarray
        The radius epsilon reached with probability >= 1 - delta.

    References
    ----------
    Paper, Theorem 4 and its proof (eq. 25-28), appendix E.

    Examples
    --------
    >>> from perfpriv.dynamics import pac_radius
    >>> round(pac_radius(1.0, 10_000, d=2, R=10, delta=0.05), 4)
    0.6306
    """
    gamma = check_real("gamma", gamma, low=0, low_open=True)
    n = check_real("n", n, low=1)
    delta = check_real("delta", delta, low=0, high=1, low_open=True, high_open=True, scalar=True)
    check_same_shape(gamma=gamma, n=n)
    model = _model(d, R, mu, Sigma, "paper", fix_seed=False)
    B, A = _pac_constants(gamma, delta, model)
    return _out(B + A / np.sqrt(np.asarray(n, float)))


def pac_rounds(gamma, tau, q, r, *, n0, d, R, mu=None, Sigma=None, epsilon, delta, statistic="paper",
               method="auto", samples=None, seed=None):
    r"""Theorem 4: rounds after which ||o_t - mu||_{Sigma^-1} <= epsilon w.p. >= 1 - delta.

    .. math::

       t \ge \frac{1}{\ln C_1(\gamma)}
       \ln\frac{\big(V_{\delta/2} + \gamma\sqrt{\lambda_{\max}(\Sigma^{-1})K_{\delta/2}}\big)^2}
               {N_0\,(\epsilon - B(R))^2}

    under the mean-field assumption N_t >= N_0 C_1^t (constants as in
    :func:`pac_radius`). Returns the smallest integer t >= 0 satisfying it.

    Parameters
    ----------
    gamma, tau, q, r
        Scalars, as in :func:`growth_factor`.
    n0 : int
        N_0 >= 2; C_1 is evaluated at N_0.
    d, R, mu, Sigma, statistic, method, samples, seed
        Data model and p_tau evaluation.
    epsilon : float
        Target radius; must exceed the clipping bias B(R).
    delta : float
        Failure probability in (0, 1).

    Returns
    -------
    int
        Number of rounds.

    Raises
    ------
    ValueError
        If epsilon <= B(R) (no number of rounds removes the clipping bias)
        or C_1(gamma) <= 1 (the population does not grow; Theorem 4 needs
        gamma above the survival threshold).

    References
    ----------
    Paper, Theorem 4, eq. (24), appendix E.

    Examples
    --------
    >>> from perfpriv.dynamics import pac_rounds
    >>> pac_rounds(2.0, 0.02, 0.3, 0.6, n0=1000, d=12, R=10, epsilon=1.0, delta=0.05,
    ...            method="quadrature")
    7
    """
    gamma, tau, q, r = _check_common(gamma, tau, q, r)
    for name, v in (("gamma", gamma), ("q", q), ("r", r)):
        if np.ndim(v):
            raise TypeError(f"{name} must be a single number; got an array of shape {np.shape(v)}")
    n0 = check_int("n0", n0, low=2)
    epsilon = check_real("epsilon", epsilon, low=0, low_open=True, scalar=True)
    delta = check_real("delta", delta, low=0, high=1, low_open=True, high_open=True, scalar=True)
    model = _model(d, R, mu, Sigma, statistic, method, samples, seed, fix_seed=False)
    B, A = _pac_constants(gamma, delta, model)
    if epsilon <= B:
        raise ValueError(f"epsilon must exceed the clipping bias B(R) = {B:.4g} (Theorem 4); got {epsilon!r}")
    excess = float(_excess(_marginal_p(n0, gamma, tau, model), q, r))
    if excess <= 0:
        raise ValueError(
            f"gamma = {gamma!r} gives C_1(gamma) = {1 + excess:.6g} <= 1: Theorem 4 needs a growing "
            "population (gamma above the survival threshold, see critical_gamma)")
    ratio_log = 2 * math.log(float(A)) - math.log(n0) - 2 * math.log(epsilon - B)
    t = ratio_log / math.log1p(excess)
    if not math.isfinite(t):
        raise ValueError(f"no finite number of rounds reaches epsilon = {epsilon!r}: the radius constant "
                         f"V + gamma sqrt(lambda_max K) is infinite (gamma = {gamma!r}, R = {model.R!r})")
    return max(0, int(math.ceil(t - 1e-12)))
