r"""Population dynamics of the Gaussian model: who survives, and at what cost.

Paper §4.5, Lemma 9, Remarks 2-3, Theorem 4 and appendices D.3, D.4 and E.
The theory of this module sits on the engine's mechanism and behaviour
(:class:`perfpriv.gaussian.GaussianMean`, :class:`perfpriv.behaviour.Memoryless`)
and its one mean-field recursion (:func:`perfpriv.engine.mean_field`):

* the expected growth factor :math:`C(γ) = 1 + r - (q + r) p_τ` (eq. 13),
  :func:`growth_factor`;
* the sufficient survival threshold :math:`γ_c` of Theorem 2 (worst case
  s = 2R), :func:`critical_gamma`, and the exact γ at which C = 1,
  :func:`exact_critical_gamma`;
* the finite-sample error bounds of Theorem 3, :func:`kappa` and
  :func:`error_bounds`;
* the mean-field path :math:`N_t = N_{t-1} C(γ; N_{t-1})` with the error of each
  round and their sum, :func:`mean_field`;
* Lemma 9's cumulative error bound, :func:`cumulative_error_bound`;
* the long-run limit that corrects Remark 2, :func:`infinite_horizon_gamma`;
* Theorem 4's PAC horizon, :func:`pac_radius` and :func:`pac_rounds`.

Conventions shared by every function
------------------------------------
``gamma`` is the per-user noise scale γ (the release is the clipped mean
plus :math:`\mathcal{N}(0, γ^{2}/N I_d)`), ``tau`` the leak threshold τ on the log-likelihood
ratio, ``q`` the probability that a leaked user leaves and ``r`` the
probability that a non-leaked user recruits one more; ``q``, ``r`` and
``tau`` are keyword-only. ``d``, ``R``, ``mu`` and ``Sigma`` describe the
data (dimension, clipping radius, mean and covariance of the Gaussian
records, defaults 0 and I), and ``statistic`` chooses the membership
statistic ("paper": Lemma 6; "exact": the exact remove-one likelihood
ratio). ``method``, ``samples`` and ``seed`` say how :math:`p_τ` is evaluated
(:func:`perfpriv.leakage.marginal_leak_probability`; a Monte Carlo :math:`p_τ` uses
one fixed seed, so it is a deterministic function of γ and n).

Pointwise functions (:func:`growth_factor`, :func:`error_bounds`,
:func:`cumulative_error_bound`) broadcast ``gamma``, ``q``, ``r`` and ``n``
as numpy does. The mean-field path (:func:`mean_field`) follows
:mod:`perfpriv.engine`: array ``q``, ``r`` are cells
(leading axes), a 1-D ``gamma`` is a grid of levels (next axis) and a
:class:`perfpriv.engine.Schedule` one level per round.

Population sizes may be real numbers (the mean field is a real-valued
recursion): :math:`p_τ` is evaluated at real n >= 2; at n = 1 the leak probability
is 1 -- the n → 1 limit of Lemma 7, where a one-record release *is* the
record -- and for 1 < n < 2 it is interpolated linearly
(:meth:`perfpriv.gaussian.GaussianMean.leak_probability`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from . import engine, keyed
from ._validate import (
    check_allocation,
    check_bracket,
    check_choice,
    check_int,
    check_probability,
    check_real,
    check_same_shape,
)
from .behaviour import Memoryless
from .gaussian import GaussianMean

__all__ = [
    "growth_factor",
    "critical_gamma",
    "exact_critical_gamma",
    "kappa",
    "ErrorBounds",
    "error_bounds",
    "mean_field",
    "cumulative_error_bound",
    "InfiniteHorizonGamma",
    "infinite_horizon_gamma",
    "pac_radius",
    "pac_rounds",
]

_ROUNDS = ("algorithm", "paper")


def _out(x):
    """Python float for 0-d results, array otherwise."""
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


def _mechanism(gamma, tau, d, R, mu, Sigma, statistic, method, samples, seed):
    """The GaussianMean of a data model (its levels ``gamma``; the :math:`p_τ` options).

    ``method``, ``samples`` and ``seed`` are checked here, under the names this module's
    functions give them (GaussianMean calls them ``leak_method``, ``leak_samples``, ``leak_seed``).
    """
    method = check_choice("method", method, ("auto", "quadrature", "montecarlo"))
    if samples is not None:
        samples = check_int("samples", samples, low=1)
    if not isinstance(seed, (np.random.Generator, np.random.BitGenerator)):
        keyed.as_seed_sequence(seed, name="seed")  # checked under its name here (read, not consumed)
    return GaussianMean(gamma, tau=tau, d=d, R=R, mu=mu, Sigma=Sigma,
                        statistic=check_choice("statistic", statistic, ("paper", "exact")),
                        leak_method=method, leak_samples=samples, leak_seed=seed)


def _check_common(gamma, tau, q, r):
    gamma = check_real("gamma", gamma, low=0, low_open=True)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    q = check_probability("q", q)
    r = check_probability("r", r)
    return gamma, tau, q, r


# --------------------------------------------------------------------------
# growth factor and survival threshold
# --------------------------------------------------------------------------
def growth_factor(gamma, *, tau, q, r, n, d, R, mu=None, Sigma=None, statistic="paper",
                  method="auto", samples=None, seed=None):
    r"""Expected growth factor :math:`C(γ) = 1 + r - (q + r) p_τ` (eq. 13).

    The expected ratio :math:`\mathbb{E}[N_t \mid N_{t-1}] / N_{t-1}` of Lemma 8 when the
    previous round had ``n`` = :math:`N_{t-1}` records: the marginal leak probability
    of :meth:`perfpriv.gaussian.GaussianMean.leak_probability` inside the
    paper's growth rule (:meth:`perfpriv.behaviour.Memoryless.growth_factor`).

    Parameters
    ----------
    gamma : float or array_like
        γ > 0, per-user noise scale.
    tau : float
        τ > 0, leak threshold on the log-likelihood ratio.
    q, r : float or array_like
        q, probability that a leaked user leaves; r, probability that a
        non-leaked user recruits one more (both in [0, 1]).
    n : float or array_like
        :math:`N_{t-1} \ge 1`, population of the previous round (real values allowed).
    d, R, mu, Sigma, statistic
        Data model (module docstring).
    method, samples, seed
        Evaluation of :math:`p_τ`.

    Returns
    -------
    float or numpy.ndarray
        C, broadcast over ``gamma``, ``q``, ``r`` and ``n``.

    References
    ----------
    Paper, eq. (12)-(13) (Lemma 8).

    Examples
    --------
    >>> round(growth_factor(5.0, tau=0.02, q=0.3, r=0.6, n=1000, d=12, R=10, method="quadrature"), 3)
    1.444
    """
    gamma, tau, q, r = _check_common(gamma, tau, q, r)
    n = check_real("n", n, low=1)
    check_same_shape(gamma=gamma, q=q, r=r, n=n)
    mech = _mechanism(1.0, tau, d, R, mu, Sigma, statistic, method, samples, seed)
    p = mech.leak_probability(n, gamma)
    return _out(Memoryless(q=q, r=r).growth_factor(p))


def _probit_factor(q, r, tau):
    r""":math:`(x + \sqrt{x^2 + 2 \tau}) / (2 \tau)` with :math:`x = \Phi^{-1}(q / (q + r))`, stably."""
    q, r = np.broadcast_arrays(np.asarray(q, float), np.asarray(r, float))
    both_zero = (q == 0) & (r == 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = np.where(both_zero, 1.0, q + r)
        # Φ^{-1}(q/(q+r)) from the smaller of q/(q+r) and r/(q+r): Φ^{-1}(1 - u) = -Φ^{-1}(u)
        # keeps the upper tail (tiny r) that q/(q+r), rounded to 1, would send to +inf
        x = np.where(q > r, -special.ndtri(r / total), special.ndtri(np.where(both_zero, 0.5, q / total)))
        root = np.hypot(x, math.sqrt(2 * tau))  # sqrt(x^2 + 2 tau), inf-safe
        # x >= 0: no cancellation in the sum; x < 0: use the conjugate form
        # 1 / (sqrt(x^2 + 2 tau) - x), which tends to 0 as x -> -inf.
        fac = np.where(x >= 0, (x + root) / (2 * tau), 1.0 / (root - x))
    fac = np.where(np.isposinf(x), np.inf, fac)
    fac = np.where(np.isneginf(x), 0.0, fac)
    return np.where(both_zero, 0.0, fac)


def critical_gamma(*, q, r, tau, n, R):
    r"""Sufficient survival threshold :math:`\gamma_c` of Theorem 2 (explicit form).

    .. math::

       \gamma_c = \frac{2R\sqrt{N}}{N-1}\cdot
       \frac{x + \sqrt{x^2 + 2\tau}}{2\tau}, \qquad x = \Phi^{-1}\!\Big(\frac{q}{q+r}\Big).

    With :math:`\gamma \ge \gamma_c` even a record at the worst-case distance
    s = ||z - mean|| = 2R leaks with probability at most r / (q + r), so
    C >= 1 whatever the data (the marginal :math:`p_{\tau}` is an average over
    s <= 2R of the decreasing-in-gamma Lemma 7 probability).

    Edge cases, all limits of the formula:

    * :math:`q = 0, r > 0`: nobody ever leaves, :math:`C = 1 + r(1 - p_{\tau}) \ge 1` for
      every gamma; x = -inf and the factor :math:`(x + \sqrt{x^2+2 \tau})/(2 \tau)`
      tends to 0, so :math:`\gamma_c = 0`. It is computed in the cancellation-free
      form :math:`1 / (\sqrt{x^2 + 2 \tau} - x)` whenever x < 0.
    * :math:`r = 0, q > 0`: nobody ever joins, :math:`C = 1 - q p_{\tau} < 1` for every
      finite :math:`\gamma (p_{\tau} > 0); x = +\infty` and :math:`\gamma_c = \infty`.
    * :math:`q = r = 0`: C = 1 identically, every gamma keeps the population;
      :math:`\gamma_c = 0`.

    Parameters
    ----------
    q, r : float or array_like
        Leave and recruit probabilities, in [0, 1].
    tau : float
        tau > 0, leak threshold.
    n : float or array_like
        :math:`N_{t-1} > 1`, population size at which :math:`C_t` must be >= 1.
    R : float
        R > 0, clipping radius.

    Returns
    -------
    float or numpy.ndarray
        :math:`\gamma_c`, broadcast over ``q``, ``r`` and ``n``.

    References
    ----------
    Paper, Theorem 2, eq. (14) and its proof in appendix D.3 (eq. 20-21).

    Examples
    --------
    >>> from perfpriv.dynamics import critical_gamma
    >>> round(critical_gamma(q=0.3, r=0.6, tau=0.02, n=1000, R=10), 3)
    0.699
    >>> critical_gamma(q=0.0, r=0.5, tau=0.02, n=1000, R=10), critical_gamma(q=0.5, r=0.0, tau=0.02, n=1000, R=10)
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


def exact_critical_gamma(*, q, r, tau, n, d, R, mu=None, Sigma=None, statistic="paper",
                         method="auto", samples=None, seed=None, bracket=(1e-6, 1e8)):
    r"""The noise scale at which the expected growth factor is exactly 1.

    Solves :math:`p_{\tau}(\gamma) = r / (q + r)`, i.e. C(gamma) = 1 (eq. 13), with
    :func:`scipy.optimize.brentq` on log gamma. :math:`p_{\tau}` decreases in gamma, so
    C >= 1 exactly for gamma at or above the returned value; comparing with
    :func:`critical_gamma` shows how conservative Theorem 2 is.

    Edge cases: :math:`q = 0` (or :math:`q = r = 0`) gives 0 (C >= 1 for all gamma);
    :math:`r = 0 < q` gives inf. If :math:`p_{\tau}` stays above r / (q + r) up to
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
        :math:`N_{t-1} \ge 2`, population size.
    d, R, mu, Sigma, statistic, method, samples, seed
        Data model and :math:`p_{\tau}` evaluation (module docstring). A Monte Carlo
        :math:`p_{\tau}` uses one fixed seed for every gamma, so the root is that of a
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
    >>> g = exact_critical_gamma(q=0.3, r=0.6, tau=0.02, n=1000, d=12, R=10, method="quadrature")
    >>> round(g, 3), round(critical_gamma(q=0.3, r=0.6, tau=0.02, n=1000, R=10) / g, 2)
    (0.118, 5.94)
    """
    q = check_probability("q", q)
    r = check_probability("r", r)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    n = check_real("n", n, low=2, scalar=True)
    lo, hi = check_bracket(bracket)
    shape = check_same_shape(q=q, r=r)
    model = _mechanism(1.0, tau, d, R, mu, Sigma, statistic, method, samples, seed)
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
            out[idx] = _solve_p_equals(ri / (qi + ri), n, model, lo, hi, qi + ri, cache)
    return _out(out)


def _solve_p_equals(target, n, model, lo, hi, qr, cache):
    r"""Root of (q + r)(target - :math:`p_{\tau}(e^u)`) = C - 1 in u = log gamma."""
    key = round(target, 15)
    if key in cache:
        return cache[key]

    def f(u):
        return float(qr * (target - model.leak_probability(n, math.exp(u))))

    a, b = math.log(lo), math.log(hi)
    fa, fb = f(a), f(b)
    if fa >= 0:
        root = lo
    elif fb < 0:
        root = np.inf
    else:
        # shrink the bracket on a coarse log grid first (p_tau is monotone)
        grid = np.linspace(a, b, 29)
        vals = qr * (target - model.leak_probability(n, np.exp(grid)))
        k = int(np.argmax(vals >= 0))
        a, b = grid[k - 1], grid[k]
        u = optimize.brentq(f, a, b, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=200)
        root = math.exp(u)
    cache[key] = root
    return root



# --------------------------------------------------------------------------
# Theorem 3
# --------------------------------------------------------------------------
def kappa(*, q, r):
    r"""Kantorovich constant of Theorem :math:`3, (2 + r - q)^2 / (4 (1 - q)(1 + r))`.

    The ratio sup E[1/X] E[X] over random variables X with values in
    [1 - q, 1 + r]; it is attained by the two-point law putting mass 1/2 on
    each end (Kantorovich's inequality). :math:`q = 1` gives inf (X can be 0).

    Parameters
    ----------
    q, r : float or array_like
        Leave and recruit probabilities, in [0, 1].

    Returns
    -------
    float or numpy.ndarray
        :math:`\kappa_{q,r} \ge 1`.

    References
    ----------
    Paper, Theorem 3, eq. (22).

    Examples
    --------
    >>> from perfpriv.dynamics import kappa
    >>> round(kappa(q=0.3, r=0.6), 4), kappa(q=0.0, r=0.0), kappa(q=1.0, r=0.5)
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


@dataclass(frozen=True, eq=False)
class ErrorBounds:
    r"""Theorem 3's bounds on :math:`\mathbb{E}[\|o_t - \mu\|^2_{\Sigma^{-1}} \mid N_{t-1}]`.

    Attributes
    ----------
    lower : float or numpy.ndarray
        :math:`(\gamma^2 \mathrm{Tr} \Sigma^{-1} + d) / (C N_{t-1})` (Jensen).
    upper : float or numpy.ndarray
        ``kappa * lower`` (Kantorovich).
    growth : float or numpy.ndarray
        :math:`C = C_t(\gamma)` used in both.
    kappa : float or numpy.ndarray
        :math:`\kappa_{q,r}`.

    Unpacks as ``lower, upper = error_bounds(...)``.
    """

    lower: np.ndarray | float
    upper: np.ndarray | float
    growth: np.ndarray | float
    kappa: np.ndarray | float

    def __iter__(self):
        yield self.lower
        yield self.upper




def error_bounds(gamma, *, tau, q, r, n_prev, d, R, mu=None, Sigma=None, statistic="paper",
                 method="auto", samples=None, seed=None):
    r"""Theorem 3: lower and upper bounds on the expected error of round t.

    .. math::

       \frac{\gamma^2\mathrm{Tr}\,\Sigma^{-1} + d}{C_t(\gamma) N_{t-1}}
       \le E\big[\|o_t-\mu\|^2_{\Sigma^{-1}} \mid N_{t-1}\big]
       \le \kappa_{q,r}\frac{\gamma^2\mathrm{Tr}\,\Sigma^{-1} + d}{C_t(\gamma) N_{t-1}}

    The proof assumes :math:`N_t / N_{t-1}` lies in [1 − q, 1 + r], which holds
    only approximately at finite N (one shared noise draw makes the leak
    count over-dispersed), and a population floored at 1.

    Parameters
    ----------
    gamma, tau, q, r
        As in :func:`growth_factor`.
    n_prev : float or array_like
        :math:`N_{t-1} \ge 1`.
    d, R, mu, Sigma, statistic, method, samples, seed
        Data model and :math:`p_τ` evaluation (module docstring).

    Returns
    -------
    ErrorBounds
        ``lower``, ``upper``, ``growth`` and ``kappa``.

    References
    ----------
    Paper, Theorem 3, eq. (15) and (22), appendix D.4.

    Examples
    --------
    >>> lo, hi = error_bounds(2.0, tau=0.02, q=0.3, r=0.6, n_prev=1000, d=12, R=10, method="quadrature")
    >>> round(lo, 4), round(hi, 4)
    (0.047, 0.0555)
    """
    gamma, tau, q, r = _check_common(gamma, tau, q, r)
    n_prev = check_real("n_prev", n_prev, low=1)
    check_same_shape(gamma=gamma, q=q, r=r, n_prev=n_prev)
    mech = _mechanism(1.0, tau, d, R, mu, Sigma, statistic, method, samples, seed)
    C = np.asarray(Memoryless(q=q, r=r).growth_factor(mech.leak_probability(n_prev, gamma)), float)
    k = np.asarray(kappa(q=q, r=r), float)
    with np.errstate(divide="ignore"):
        lower = np.asarray(mech.expected_error(n_prev, gamma), float) / C
    with np.errstate(invalid="ignore"):
        upper = np.where(lower == 0, 0.0, k * lower)
    return ErrorBounds(_out(lower), _out(upper), _out(C), _out(k))


# --------------------------------------------------------------------------
# mean field (the engine's recursion)
# --------------------------------------------------------------------------
def mean_field(gamma, *, tau, q, r, T, n0, d, R, mu=None, Sigma=None, statistic="paper", cap=20000, floor=1,
               rounds="algorithm", method="auto", samples=None, seed=None):
    r"""The mean-field path of the Gaussian model: population, error of each round and their sum.

    The expected-value recursion of Lemma 8 with the random population
    replaced by its mean at every step (the paper's "mean-field
    approximation"), :math:`N_t = N_{t-1} C(γ; N_{t-1})`, clipped to
    ``[floor, cap]``. :math:`p_τ` is re-evaluated at every :math:`N_{t-1}`, so :math:`C_t` changes
    with the population (Lemma 12: it rises while the population grows).
    With ``cap=None`` a population growing past the double range becomes
    ``inf`` :math:`(p_τ(\infty) = 0)` and stays there; with ``floor=None`` a dying one
    reaches 0.

    The expected error of a round is Lemma 3's :math:`(γ^{2} \mathrm{Tr} Σ^{-1} + d) / N`. Two
    indexings of the T releases exist:

    * ``rounds="algorithm"`` (default; Algorithm 1 and
      :func:`perfpriv.gaussian.simulate`): round t uses the :math:`N_{t-1}` users
      present at its start, so the first release uses the :math:`N_0` initial users.
    * ``rounds="paper"`` (the proof of Lemma 9): the release of round t uses
      :math:`N_t = N_0 C_1 \dots C_t` records, one round of growth ahead.

    The path's ``cumulative_error`` is the :math:`E_{\mathrm{total}}` that Lemma 9 bounds (with
    ``rounds="paper"``, ``cap=None``), computed along the mean-field
    trajectory instead of with :math:`C_1` frozen.

    This front end builds the model's objects -- a
    :class:`perfpriv.gaussian.GaussianMean` at the levels ``gamma`` and a
    :class:`perfpriv.behaviour.Memoryless` of ``q``, ``r`` -- and runs
    :func:`perfpriv.engine.mean_field` on them.

    Parameters
    ----------
    gamma : float, 1-D array_like or perfpriv.engine.Schedule
        γ > 0: one level, a grid, or one level per round.
    tau, q, r
        As in :func:`growth_factor` (array ``q``, ``r`` are cells).
    T : int
        Number of rounds (T >= 1).
    n0 : int
        :math:`N_0 \ge 2`, initial population.
    d, R, mu, Sigma, statistic
        Data model.
    cap, floor : float or None
        Population clip (20000 and 1 in the simulations).
    rounds : {"algorithm", "paper"}
        Which populations the T releases use (see above).
    method, samples, seed
        :math:`p_τ` evaluation (module docstring).

    Returns
    -------
    perfpriv.engine.MeanFieldPath
        ``population`` (shape ``cells + levels + (T + 1,)``: :math:`N_0`, ..., :math:`N_T`),
        ``sq_error`` and ``leak_probability`` (shape ``cells + levels + (T,)``)
        and ``cumulative_error`` (shape ``cells + levels``).

    References
    ----------
    Paper, Lemma 8, eq. (12)-(13); §4.5 (mean field); Lemma 3 (eq. 7);
    Lemma 9 (definition of :math:`E_{\mathrm{total}}`); Lemma 12.

    Examples
    --------
    >>> path = mean_field(2.0, tau=0.02, q=0.3, r=0.6, T=3, n0=1000, d=12, R=10, method="quadrature")
    >>> [round(float(x)) for x in path.population]
    [1000, 1277, 1653, 2174]
    >>> [round(float(x), 4) for x in path.sq_error]
    [0.06, 0.047, 0.0363]
    >>> round(mean_field(2.0, tau=0.02, q=0.3, r=0.6, T=3, n0=1000, d=12, R=10, rounds="paper",
    ...                  method="quadrature").cumulative_error, 4)
    0.1109
    """
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    n0 = check_int("n0", n0, low=2)
    rounds = check_choice("rounds", rounds, _ROUNDS)
    mech = _mechanism(gamma, tau, d, R, mu, Sigma, statistic, method, samples, seed)
    return engine.mean_field(mech, Memoryless(q=q, r=r), T=T, n0=n0, cap=cap, floor=floor, rounds=rounds)


# --------------------------------------------------------------------------
# Lemma 9
# --------------------------------------------------------------------------
def cumulative_error_bound(gamma, *, tau, q, r, T, n0, d, R, mu=None, Sigma=None, statistic="paper",
                           method="auto", samples=None, seed=None):
    r"""Lemma 9's closed-form cumulative error :math:`Ê_{\mathrm{total}}(γ)` (eq. 16 / 23).

    .. math::

       \hat{\mathcal E}_{\rm total}(\gamma) = \sum_{t=1}^{T}
       \frac{\gamma^2\mathrm{Tr}\,\Sigma^{-1}+d}{N_0 C_1^t}
       = \frac{\gamma^2\mathrm{Tr}\,\Sigma^{-1}+d}{N_0 (C_1-1)}\big(1 - C_1^{-T}\big),

    with :math:`C_1 = C(γ; N_0)`. Computed as :math:`-\operatorname{expm1}(-T \operatorname{log1p}(C_1 - 1)) / (C_1 - 1)`,
    which is accurate near :math:`C_1 = 1` (limit :math:`T (γ^{2} \mathrm{Tr} Σ^{-1} + d) / N_0`) and equals
    +inf when :math:`C_1 = 0`.

    The paper proves :math:`Ê_{\mathrm{total}} \ge E_{\mathrm{total}}` only for :math:`C_t > 1` (growth regime,
    no cap, mean field). For :math:`C_1 \le 1` the same expression is still the
    finite sum above -- the cumulative error of a population shrinking by
    the fixed factor :math:`C_1` -- but it bounds nothing the paper proves.

    Parameters
    ----------
    gamma, tau, q, r
        As in :func:`growth_factor` (broadcast).
    T : int
        T >= 1, horizon.
    n0 : int
        :math:`N_0 \ge 2`, initial population (:math:`C_1` is evaluated at :math:`N_0`).
    d, R, mu, Sigma, statistic, method, samples, seed
        Data model and :math:`p_τ` evaluation.

    Returns
    -------
    float or numpy.ndarray
        :math:`Ê_{\mathrm{total}}`, broadcast over ``gamma``, ``q``, ``r``.

    References
    ----------
    Paper, Lemma 9, eq. (16) and (23); Remark 3.

    Examples
    --------
    >>> round(cumulative_error_bound(2.0, tau=0.02, q=0.3, r=0.6, T=3, n0=1000, d=12, R=10,
    ...                              method="quadrature"), 4)
    0.1126
    """
    gamma, tau, q, r = _check_common(gamma, tau, q, r)
    T = check_int("T", T, low=1)
    n0 = check_int("n0", n0, low=2)
    check_same_shape(gamma=gamma, q=q, r=r)
    mech = _mechanism(1.0, tau, d, R, mu, Sigma, statistic, method, samples, seed)
    return _bound_from_p(mech, gamma, q, r, mech.leak_probability(n0, gamma), T, n0)


def _inverse_geometric_sum(excess, T):
    r""":math:`\sum_{t=1}^T C^{-t}` with C = 1 + excess, stably.

    Equals :math:`(1 - C^{-T}) / (C - 1) = -\operatorname{expm1}(-T \operatorname{log1p}(C - 1)) / (C - 1)`, with
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




def _bound_from_p(mech, gamma, q, r, p, T, n0):
    r""":math:`Ê_{\mathrm{total}}` from the leak probability :math:`p = p_τ(γ; N_0)` (eq. 16)."""
    excess = np.asarray(Memoryless(q=q, r=r).growth_factor(np.asarray(p, float)), float) - 1.0
    return _out(np.asarray(mech.expected_error(n0, gamma), float) * _inverse_geometric_sum(excess, T))


# --------------------------------------------------------------------------
# the long run (corrects Remark 2)
# --------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class InfiniteHorizonGamma:
    r"""The noise scale that is best in the long run, without a cap (:func:`infinite_horizon_gamma`).

    Attributes
    ----------
    gamma : float
        γ∞ minimizing the limit L(γ) (``nan`` when no γ has a finite limit).
    limit : float
        :math:`L(γ_∞) = \lim_t (1 + r)^t E_t(γ_∞)`, the rescaled per-round error.
    finite : bool
        Whether L is finite at some γ.
    gammas, limits : numpy.ndarray
        The grid the optimum was bracketed on and L on it (``inf`` where the
        population does not reach the growth regime).
    growth_limit : numpy.ndarray
        :math:`P(γ) = Π_k C_k(γ)/(1 + r)` on the grid (0 where it vanishes).
    reason : str
        Why the limit is infinite, when it is.
    """

    gamma: float
    limit: float
    finite: bool
    gammas: np.ndarray
    limits: np.ndarray
    growth_limit: np.ndarray
    reason: str = ""

    def __repr__(self) -> str:
        return (f"InfiniteHorizonGamma(gamma={self.gamma:.6g}, limit={self.limit:.6g}, finite={self.finite}"
                + (f", reason={self.reason!r}" if self.reason else "") + ")")


def infinite_horizon_gamma(*, q, r, tau, n0, d, R, mu=None, Sigma=None, statistic="paper",
                           bracket=(1e-2, 1e3), rounds_max=2000, grid=41):
    r"""The noise scale minimizing the long-run limit of the uncapped per-round error.

    Without a cap the mean-field population grows like :math:`(1 + r)^t` once it is
    large (:math:`p_τ` vanishes, so every :math:`C_t` tends to 1 + r), and the per-round
    error :math:`E_t(γ) = (γ^{2} \mathrm{Tr} Σ^{-1} + d)/N_{t-1}` decays like :math:`(1 + r)^{-t}`. The
    rescaled error tends to a limit,

    .. math::

       L(\gamma) = \lim_{t\to\infty} (1+r)^t\,\mathcal E_t(\gamma)
                 = \frac{(\gamma^2\,\mathrm{Tr}\,\Sigma^{-1} + d)(1+r)}{N_0\,P(\gamma)},

    with

    .. math::

       P(\gamma) = \prod_{k\ge 1} \frac{C_k(\gamma)}{1+r},

    finite and positive whenever the population reaches the growth regime
    (the product converges because :math:`p_τ` falls faster than geometrically in
    N). So two noise levels keep a constant error ratio L(γ₁)/L(γ₂) forever:
    the larger one does *not* eventually win, and infinite noise is not
    optimal even over an infinite horizon (L → ∞ as γ → ∞). This corrects
    the paper's Remark 2.

    The limit is infinite (``finite=False``) when the population never
    grows like :math:`(1 + r)^t: r = 0 < q` (nobody joins, the population shrinks),
    or -- under the exact statistic -- when the leak probability's floor at
    small populations (:func:`perfpriv.leakage.exact_leak_floor`) keeps C <= 1
    for every γ. With q = 0 nobody leaves: P = C-products of 1 + r(1 − p),
    and the limit is finite for every γ (γ∞ may then be at the bracket's
    lower end, reported as found).

    Parameters
    ----------
    q, r, tau
        Behaviour and threshold (keyword-only).
    n0 : float
        :math:`N_0 \ge 2`.
    d, R, mu, Sigma, statistic
        Data model.
    bracket : (float, float)
        Range of γ searched.
    rounds_max : int
        Longest mean-field path used to evaluate the product (it stops as
        soon as the remaining factors are 1 to double precision).
    grid : int
        Points of the log grid that brackets the optimum before the
        bounded refinement.

    Returns
    -------
    InfiniteHorizonGamma

    References
    ----------
    Paper, Remark 2 and Corollary 2 (which the limit corrects), eq. (13), Lemma 3.

    Examples
    --------
    >>> res = infinite_horizon_gamma(q=0.3, r=0.6, tau=0.02, n0=1000, d=12, R=10.0)
    >>> res.finite, 0.1 < res.gamma < 100
    (True, True)
    """
    q = check_probability("q", q, scalar=True)
    r = check_probability("r", r, scalar=True)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    n0 = check_real("n0", n0, low=2, scalar=True)
    lo, hi = check_bracket(bracket)
    rounds_max = check_int("rounds_max", rounds_max, low=10)
    grid = check_int("grid", grid, low=5)
    check_allocation("the mean-field paths of the grid (grid x rounds_max populations)", float(grid) * rounds_max,
                     name="grid" if grid >= rounds_max else "rounds_max")
    mech = _mechanism(1.0, tau, d, R, mu, Sigma, statistic, "quadrature", None, None)
    gammas = np.geomspace(lo, hi, grid)
    if r == 0 and q > 0:
        inf = np.full(grid, np.inf)
        return InfiniteHorizonGamma(np.nan, np.inf, False, gammas, inf, np.zeros(grid),
                                    "r = 0 < q: nobody joins, the population shrinks for every noise level")

    def log_p(g):
        return _log_growth_product(mech, np.atleast_1d(g), q, r, n0, rounds_max)

    lp = log_p(gammas)
    num = np.log(np.asarray(mech.one_record_error(gammas), float)) + math.log1p(r) - math.log(n0)
    limits = np.exp(num - lp)
    finite = np.isfinite(limits)
    if not finite.any():
        reason = ("the population never reaches the growth regime for any noise level in the bracket"
                  + (" (the exact statistic's leak floor keeps C <= 1)" if statistic == "exact" else ""))
        return InfiniteHorizonGamma(np.nan, np.inf, False, gammas, limits, np.exp(lp), reason)
    k = int(np.nanargmin(np.where(finite, limits, np.inf)))
    if 0 < k < grid - 1 and finite[k - 1] and finite[k + 1]:
        def f(u):
            # log of the limit (up to constants); a point where the population stops growing has an
            # infinite limit, which the bounded search must see as large but finite (no inf - inf)
            g = math.exp(u)
            value = float(np.log(mech.one_record_error(np.array([g])))[0] - log_p(g)[0])
            return value if math.isfinite(value) else 1e6
        res = optimize.minimize_scalar(f, bounds=(math.log(gammas[k - 1]), math.log(gammas[k + 1])),
                                       method="bounded", options={"xatol": 1e-9})
        g_star = math.exp(res.x)
        value = math.exp(res.fun + math.log1p(r) - math.log(n0))
        if value > limits[k]:
            g_star, value = float(gammas[k]), float(limits[k])
    else:
        g_star, value = float(gammas[k]), float(limits[k])
    return InfiniteHorizonGamma(g_star, value, True, gammas, limits, np.exp(lp))


def _log_growth_product(mech, gammas, q, r, n0, rounds_max):
    r""":math:`\log Π_k C_k(γ)/(1 + r)` along the uncapped mean field (−inf if the population does not grow)."""
    beh = Memoryless(q=q, r=r)
    n = np.full(gammas.shape, float(n0))
    total = np.zeros(gammas.shape)
    active = np.ones(gammas.shape, bool)
    log1r = math.log1p(r)
    shrinking = np.zeros(gammas.shape, int)
    for _ in range(rounds_max):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        p = mech.leak_probability(n[idx], gammas[idx])
        C = np.asarray(beh.growth_factor(p), float)
        with np.errstate(divide="ignore"):
            total[idx] += np.log(C) - log1r
        with np.errstate(over="ignore"):
            n[idx] = n[idx] * C
        shrinking[idx] = np.where(C <= 1.0, shrinking[idx] + 1, 0)
        # done once the factor is 1 to double precision (p below 1e-17 stays below: n only grows),
        # or once the population has shrunk for 50 rounds in a row (it will not recover)
        done = (p * (q + r) < 1e-17 * (1 + r)) | ~np.isfinite(n[idx]) | (C == 0)
        dead = shrinking[idx] >= 50
        total[idx[dead]] = -np.inf
        active[idx[done | dead]] = False
    total[active] = np.where(shrinking[active] > 0, -np.inf, total[active])
    return total



# --------------------------------------------------------------------------
# Theorem 4
# --------------------------------------------------------------------------
def _pac_constants(gamma, delta, model):
    r""":math:`(B(R), V_{\delta/2} + \gamma \sqrt{\lambda_{\max}(\Sigma^{-1}) K_{\delta/2}})` of Theorem 4."""
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
    satisfies :math:`\|o - \mu\|_{\Sigma^{-1}} \le B(R) + (V_{\delta/2} + \gamma \sqrt{\lambda_{\max}(\Sigma^{-1}) K_{\delta/2}}) / \sqrt n`,
    where

    * :math:`M = \sqrt{\|\mu\|^2 + \mathrm{Tr} \Sigma}`,
    * :math:`B(R) = \sqrt{\lambda_{\max}(\Sigma^{-1})} M \exp(-(R - M)^2 / (4 \lambda_{\max}(\Sigma)))`
      (clipping bias; the proof needs R > M -- for R <= M this function uses
      the trivial :math:`\sqrt{\lambda_{\max}(\Sigma^{-1})} M`),
    * :math:`V_{\delta/2} = 2R \sqrt{2 \lambda_{\max}(\Sigma^{-1}) \ln(4/\delta)}` (Pinelis),
    * :math:`K_{\delta/2} = d + 2 \sqrt{d \ln(2/\delta)} + 2 \ln(2/\delta)` (Laurent-Massart).

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
    model = _mechanism(1.0, 1.0, d, R, mu, Sigma, "paper", "quadrature", None, None)
    B, A = _pac_constants(gamma, delta, model)
    return _out(B + A / np.sqrt(np.asarray(n, float)))


def pac_rounds(gamma, *, tau, q, r, n0, d, R, mu=None, Sigma=None, epsilon, delta, statistic="paper",
               method="auto", samples=None, seed=None):
    r"""Theorem 4: rounds after which :math:`\|o_t - \mu\|_{\Sigma^{-1}} \le \varepsilon` w.p. >= 1 - delta.

    .. math::

       t \ge \frac{1}{\ln C_1(\gamma)}
       \ln\frac{\big(V_{\delta/2} + \gamma\sqrt{\lambda_{\max}(\Sigma^{-1})K_{\delta/2}}\big)^2}
               {N_0\,(\epsilon - B(R))^2}

    under the mean-field assumption :math:`N_t \ge N_0 C_1^t` (constants as in
    :func:`pac_radius`). Returns the smallest integer t >= 0 satisfying it.

    Parameters
    ----------
    gamma, tau, q, r
        Scalars, as in :func:`growth_factor`.
    n0 : int
        :math:`N_0 \ge 2; C_1` is evaluated at :math:`N_0`.
    d, R, mu, Sigma, statistic, method, samples, seed
        Data model and :math:`p_{\tau}` evaluation.
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
        or :math:`C_1(\gamma) \le 1` (the population does not grow; Theorem 4 needs
        gamma above the survival threshold).

    References
    ----------
    Paper, Theorem 4, eq. (24), appendix E.

    Examples
    --------
    >>> from perfpriv.dynamics import pac_rounds
    >>> pac_rounds(2.0, tau=0.02, q=0.3, r=0.6, n0=1000, d=12, R=10, epsilon=1.0, delta=0.05,
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
    model = _mechanism(gamma, tau, d, R, mu, Sigma, statistic, method, samples, seed)
    B, A = _pac_constants(gamma, delta, model)
    if epsilon <= B:
        raise ValueError(f"epsilon must exceed the clipping bias B(R) = {B:.4g} (Theorem 4); got {epsilon!r}")
    excess = float(Memoryless(q=q, r=r).growth_factor(model.leak_probability(n0, gamma))) - 1.0
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
