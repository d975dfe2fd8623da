r"""Population dynamics of the Gaussian model: who survives, and at what cost.

Paper §4.5, Lemma 9, Remarks 2-3, Theorem 4 and appendices D.3, D.4 and E, on the engine's mechanism
and behaviour (:class:`perfpriv.gaussian.GaussianMean`, :class:`perfpriv.behaviour.Memoryless`) and its
one mean-field recursion (:func:`perfpriv.engine.mean_field`): the growth factor
:math:`C(γ) = 1 + r - (q + r) p_τ` of eq. 13 (:func:`growth_factor`); Theorem 2's sufficient survival
threshold :math:`γ_c` (worst case s = 2R) and the exact γ at which C = 1 (:func:`critical_gamma`,
:func:`exact_critical_gamma`); Theorem 3's bounds (:func:`kappa`, :func:`error_bounds`); Lemma 9's
cumulative error bound (:func:`cumulative_error_bound`); the long-run limit that corrects Remark 2
(:func:`infinite_horizon_gamma`); Theorem 4's PAC horizon (:func:`pac_radius`, :func:`pac_rounds`).

The model is the engine's two objects
-------------------------------------
Every function takes the model as :func:`perfpriv.engine.simulate` does: ``mechanism``, a
:class:`perfpriv.gaussian.GaussianMean` (τ, the data, the membership statistic -- ``None``: the
paper's, Lemma 6 -- and how :math:`p_τ` is evaluated), whose level γ is the noise scale evaluated
unless an explicit ``gamma`` is given; and ``behaviour``, a :class:`perfpriv.behaviour.Memoryless`
(q, r; arrays of q and r are cells).

The thresholds (:func:`critical_gamma`, :func:`exact_critical_gamma`,
:func:`infinite_horizon_gamma`) choose γ themselves: their mechanism needs no
level (``GaussianMean(tau=..., d=..., R=...)``). :func:`exact_critical_gamma`
takes any :class:`perfpriv.behaviour.Behaviour`, the others the paper's users.

Pointwise functions (:func:`growth_factor`, :func:`error_bounds`,
:func:`cumulative_error_bound`, :func:`critical_gamma`) broadcast γ (the
mechanism's level, a number or a 1-D grid, or an explicit ``gamma`` of any
shape), the behaviour's ``q`` and ``r`` and ``n`` as numpy does.

Population sizes may be real numbers (the mean field is a real-valued recursion), down to n = 1
(:meth:`perfpriv.gaussian.GaussianMean.leak_probability`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from . import engine
from ._stats import float_or_array as _out
from ._bisect import bisect_log_boundary
from ._validate import (
    check_allocation,
    check_bracket,
    check_int,
    check_real,
    check_same_shape,
)
from .behaviour import Behaviour, Memoryless
from .gaussian import GaussianMean

__all__ = [
    "growth_factor",
    "critical_gamma",
    "exact_critical_gamma",
    "kappa",
    "ErrorBounds",
    "error_bounds",
    "cumulative_error_bound",
    "InfiniteHorizonGamma",
    "infinite_horizon_gamma",
    "pac_radius",
    "pac_rounds",
]


def _model(mechanism, behaviour, kind=Memoryless):
    """Check the model objects (``kind=None``: no behaviour); the mechanism with its statistic resolved."""
    if not isinstance(mechanism, GaussianMean):
        raise TypeError(f"mechanism must be a perfpriv.gaussian.GaussianMean; got {type(mechanism).__name__}")
    if kind is not None and not isinstance(behaviour, kind):
        raise TypeError(f"behaviour must be a perfpriv.behaviour.{kind.__name__}"
                        + (" (the paper's users, q and r)" if kind is Memoryless else "")
                        + f"; got {type(behaviour).__name__}")
    return mechanism.resolved("paper")


def _check_leak_rule(behaviour, what):
    if behaviour.rule != "leak":
        raise ValueError(f"behaviour: {what} is stated for the paper's leak rule (a leaked user leaves "
                         f"w.p. q, the others recruit w.p. r); got rule={behaviour.rule!r}")


def _gamma(mechanism, gamma):
    """The noise scale evaluated: an explicit ``gamma`` (any shape), else the mechanism's level."""
    if gamma is not None:
        return check_real("gamma", gamma, low=0, low_open=True)
    levels = mechanism.levels
    if levels is None:
        raise ValueError("gamma: the mechanism was built without a noise scale; give it one "
                         "(GaussianMean(gamma, ...)) or pass gamma= (a number or an array of noise scales > 0)")
    if levels.per_round or isinstance(levels.given, engine.PerCell):
        raise ValueError("gamma: the mechanism's levels are a schedule or one level per cell; pass gamma= "
                         "(a number or an array of noise scales > 0) to evaluate this pointwise formula")
    return levels.describe()


# ------------------------------------- growth factor and survival threshold
def growth_factor(mechanism, behaviour, n, gamma=None):
    r"""Expected growth factor :math:`C(γ) = 1 + r - (q + r) p_τ` (eq. 13).

    The expected ratio :math:`\mathbb{E}[N_t \mid N_{t-1}] / N_{t-1}` of Lemma 8: the marginal leak
    probability (:meth:`perfpriv.gaussian.GaussianMean.leak_probability`) at :math:`N_{t-1}` in the users'
    growth rule (:meth:`perfpriv.behaviour.Memoryless.growth_factor`).

    Parameters
    ----------
    mechanism, behaviour, gamma
        The model and the noise scale evaluated (module docstring).
    n : float or array_like
        :math:`N_{t-1} \ge 1`, population of the previous round (real values allowed).

    Returns
    -------
    float or numpy.ndarray
        C, broadcast over γ, ``q``, ``r`` and ``n``.

    References
    ----------
    Paper, eq. (12)-(13) (Lemma 8).

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> from perfpriv.gaussian import GaussianMean
    >>> mech = GaussianMean(5.0, tau=0.02, d=12, R=10, leak_method="quadrature")
    >>> round(growth_factor(mech, Memoryless(q=0.3, r=0.6), n=1000), 3)
    1.444
    """
    mech = _model(mechanism, behaviour)
    gamma = _gamma(mech, gamma)
    n = check_real("n", n, low=1)
    check_same_shape(gamma=gamma, q=behaviour.q, r=behaviour.r, n=n)
    return _out(behaviour.growth_factor(mech.leak_probability(n, gamma)))


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


def critical_gamma(mechanism, behaviour, n):
    r"""Sufficient survival threshold :math:`\gamma_c` of Theorem 2 (explicit form).

    .. math::

       \gamma_c = \frac{2R\sqrt{N}}{N-1}\cdot
       \frac{x + \sqrt{x^2 + 2\tau}}{2\tau}, \qquad x = \Phi^{-1}\!\Big(\frac{q}{q+r}\Big).

    With :math:`\gamma \ge \gamma_c` even a record at the worst-case distance
    s = ||z - mean|| = 2R leaks with probability at most r / (q + r), so
    C >= 1 whatever the data (the marginal :math:`p_{\tau}` is an average over
    s <= 2R of the decreasing-in-gamma Lemma 7 probability).

    The edge cases are limits of the formula: q = 0 < r (nobody leaves,
    :math:`C = 1 + r(1 - p_{\tau}) \ge 1`) gives x = −inf and :math:`\gamma_c = 0`; r = 0 < q (nobody
    joins, :math:`C = 1 - q p_{\tau} < 1`) gives :math:`\gamma_c = \infty`; q = r = 0 (C = 1) gives 0.

    Parameters
    ----------
    mechanism, behaviour
        The model (module docstring): only τ and R of the mechanism are used, and the
        users must follow the leak rule of the theorem.
    n : float or array_like
        :math:`N_{t-1} > 1`, population size at which :math:`C_t` must be >= 1.

    Returns
    -------
    float or numpy.ndarray
        :math:`\gamma_c`, broadcast over ``q``, ``r`` and ``n``.

    References
    ----------
    Paper, Theorem 2, eq. (14) and its proof in appendix D.3 (eq. 20-21).

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> from perfpriv.gaussian import GaussianMean
    >>> mech = GaussianMean(tau=0.02, d=12, R=10)
    >>> round(critical_gamma(mech, Memoryless(q=0.3, r=0.6), n=1000), 3)
    0.699
    >>> critical_gamma(mech, Memoryless(q=0.0, r=0.5), 1000), critical_gamma(mech, Memoryless(q=0.5, r=0.0), 1000)
    (0.0, inf)
    """
    mech = _model(mechanism, behaviour)
    _check_leak_rule(behaviour, "critical_gamma (Theorem 2)")
    n = check_real("n", n, low=1, low_open=True)
    q, r = behaviour.q, behaviour.r
    check_same_shape(q=q, r=r, n=n)
    n = np.asarray(n, float)
    scale = 2 * mech.R * np.sqrt(n) / (n - 1)
    fac = _probit_factor(q, r, mech.tau)
    with np.errstate(invalid="ignore"):
        out = np.where(fac == 0, 0.0, scale * fac)
    return _out(out)


def exact_critical_gamma(mechanism, behaviour, n, *, bracket=(1e-6, 1e8)):
    r"""The noise scale at which the expected growth factor is exactly 1.

    Solves :math:`p_{\tau}(\gamma) = p_c`, the users' critical leak probability
    (:meth:`perfpriv.behaviour.Memoryless.critical_leak_probability`: :math:`r / (q + r)` under the leak
    rule, so that C(γ) = 1 in eq. 13), by :func:`scipy.optimize.brentq` on log γ. :math:`p_{\tau}`
    decreases in γ, so C >= 1 exactly from the returned value on; comparing with :func:`critical_gamma`
    shows how conservative Theorem 2 is.

    Users who count the privacy they spend (:class:`perfpriv.behaviour.BudgetAware`, ``uses_cost``)
    also pay :math:`ρ = 2R^{2}/γ^{2}` per round (:meth:`perfpriv.gaussian.GaussianMean.privacy_cost`):
    their threshold is the smallest γ whose reproduction number
    (:meth:`perfpriv.behaviour.Behaviour.reproduction_number`, :math:`p_τ` held at ``n``) is at least 1,
    found by bisection on log γ.

    Edge cases: :math:`p_c = 1` (nobody leaves, q = 0, or q = r = 0) gives 0
    (C >= 1 for all γ); :math:`p_c = 0` (r = 0 < q) gives inf. If
    :math:`p_{\tau}` stays above :math:`p_c` up to ``bracket[1]`` (possible with the exact statistic at
    small n: :func:`perfpriv.leakage.exact_leak_floor`) the result is inf; if it is already below at
    ``bracket[0]`` the result is ``bracket[0]``.

    Parameters
    ----------
    mechanism, behaviour
        The model (module docstring); the behaviour may be any
        :class:`perfpriv.behaviour.Behaviour`.
    n : float
        :math:`N_{t-1} \ge 2`, population size.
    bracket : tuple of float
        Search interval for γ.

    Returns
    -------
    float or numpy.ndarray
        The exact threshold, one per cell of the behaviour.

    References
    ----------
    Paper, eq. (13) and Theorem 2.

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> from perfpriv.gaussian import GaussianMean
    >>> mech = GaussianMean(tau=0.02, d=12, R=10, leak_method="quadrature")
    >>> users = Memoryless(q=0.3, r=0.6)
    >>> g = exact_critical_gamma(mech, users, n=1000)
    >>> round(g, 3), round(critical_gamma(mech, users, n=1000) / g, 2)
    (0.118, 5.94)
    """
    model = _model(mechanism, behaviour, kind=Behaviour)
    n = check_real("n", n, low=2, scalar=True)
    lo, hi = check_bracket(bracket)
    shape = tuple(behaviour.shape)
    if behaviour.uses_cost:
        def survives(g):
            p = np.asarray(model.leak_probability(np.full(np.shape(g), n), g), float)
            return np.asarray(behaviour.reproduction_number(p, cost=model.privacy_cost(g)), float) >= 1.0

        g = bisect_log_boundary(survives, lo, hi, shape, increasing=True, iterations=50)
        return _out(np.where(survives(np.full(shape, lo)), lo, np.where(survives(np.full(shape, hi)), g, np.inf)))
    pc = np.broadcast_to(np.asarray(behaviour.critical_leak_probability(), float), shape)
    out = np.empty(shape)
    cache: dict[float, float] = {}
    for idx in np.ndindex(shape):
        target = float(pc[idx])
        if target >= 1.0:
            out[idx] = 0.0
        elif target <= 0.0:
            out[idx] = np.inf
        else:
            out[idx] = _solve_p_equals(target, n, model, lo, hi, cache)
    return _out(out)


def _solve_p_equals(target, n, model, lo, hi, cache):
    r"""Root of target - :math:`p_{\tau}(e^u)` in u = log γ."""
    key = round(target, 15)
    if key in cache:
        return cache[key]

    def f(u):
        return float(target - model.leak_probability(n, math.exp(u)))

    a, b = math.log(lo), math.log(hi)
    fa, fb = f(a), f(b)
    if fa >= 0:
        root = lo
    elif fb < 0:
        root = np.inf
    else:
        # shrink the bracket on a coarse log grid first (p_tau is monotone)
        grid = np.linspace(a, b, 29)
        vals = target - model.leak_probability(n, np.exp(grid))
        k = int(np.argmax(vals >= 0))
        a, b = grid[k - 1], grid[k]
        u = optimize.brentq(f, a, b, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=200)
        root = math.exp(u)
    cache[key] = root
    return root


# ---------------------------------------------------------------- Theorem 3
def kappa(behaviour):
    r"""Kantorovich constant of Theorem 3, :math:`(2 + r - q)^2 / (4 (1 - q)(1 + r))`.

    The ratio sup E[1/X] E[X] over random variables X with values in
    [1 - q, 1 + r]; it is attained by the two-point law putting mass 1/2 on
    each end (Kantorovich's inequality). :math:`q = 1` gives inf (X can be 0).

    Parameters
    ----------
    behaviour : perfpriv.behaviour.Memoryless
        The users (q, r), under either growth rule.

    Returns
    -------
    float or numpy.ndarray
        :math:`\kappa_{q,r} \ge 1`.

    References
    ----------
    Paper, Theorem 3, eq. (22).

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> from perfpriv.dynamics import kappa
    >>> round(kappa(Memoryless(q=0.3, r=0.6)), 4), kappa(Memoryless(q=0.0, r=0.0)), kappa(Memoryless(q=1.0, r=0.5))
    (1.1808, 1.0, inf)
    """
    if not isinstance(behaviour, Memoryless):
        raise TypeError(f"behaviour must be a perfpriv.behaviour.Memoryless (q, r); got {type(behaviour).__name__}")
    q, r = np.asarray(behaviour.q, float), np.asarray(behaviour.r, float)
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
    growth, kappa : float or numpy.ndarray
        :math:`C = C_t(\gamma)` used in both, and :math:`\kappa_{q,r}`.

    Unpacks as ``lower, upper = error_bounds(...)``.
    """

    lower: np.ndarray | float
    upper: np.ndarray | float
    growth: np.ndarray | float
    kappa: np.ndarray | float

    def __iter__(self):
        yield self.lower
        yield self.upper


def error_bounds(mechanism, behaviour, n_prev, gamma=None):
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
    mechanism, behaviour, gamma
        The model and the noise scale evaluated (module docstring).
    n_prev : float or array_like
        :math:`N_{t-1} \ge 1`.

    Returns
    -------
    ErrorBounds

    References
    ----------
    Paper, Theorem 3, eq. (15) and (22), appendix D.4.

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> from perfpriv.gaussian import GaussianMean
    >>> mech = GaussianMean(2.0, tau=0.02, d=12, R=10, leak_method="quadrature")
    >>> lo, hi = error_bounds(mech, Memoryless(q=0.3, r=0.6), n_prev=1000)
    >>> round(lo, 4), round(hi, 4)
    (0.047, 0.0555)
    """
    mech = _model(mechanism, behaviour)
    gamma = _gamma(mech, gamma)
    n_prev = check_real("n_prev", n_prev, low=1)
    check_same_shape(gamma=gamma, q=behaviour.q, r=behaviour.r, n_prev=n_prev)
    C = np.asarray(behaviour.growth_factor(mech.leak_probability(n_prev, gamma)), float)
    k = np.asarray(kappa(behaviour), float)
    with np.errstate(divide="ignore"):
        lower = np.asarray(mech.expected_error(n_prev, gamma), float) / C
    with np.errstate(invalid="ignore"):
        upper = np.where(lower == 0, 0.0, k * lower)
    return ErrorBounds(_out(lower), _out(upper), _out(C), _out(k))


# ------------------------------------------------------------------ Lemma 9
def cumulative_error_bound(mechanism, behaviour, *, T, n0, gamma=None):
    r"""Lemma 9's closed-form cumulative error :math:`Ê_{\mathrm{total}}(γ)` (eq. 16 / 23).

    .. math::

       \hat{\mathcal E}_{\rm total}(\gamma) = \sum_{t=1}^{T}
       \frac{\gamma^2\mathrm{Tr}\,\Sigma^{-1}+d}{N_0 C_1^t}
       = \frac{\gamma^2\mathrm{Tr}\,\Sigma^{-1}+d}{N_0 (C_1-1)}\big(1 - C_1^{-T}\big),

    with :math:`C_1 = C(γ; N_0)`. Computed as :math:`-\operatorname{expm1}(-T \operatorname{log1p}(C_1 - 1)) / (C_1 - 1)`,
    which is accurate near :math:`C_1 = 1` (limit :math:`T (γ^{2} \mathrm{Tr} Σ^{-1} + d) / N_0`) and equals
    +inf when :math:`C_1 = 0`.

    The paper proves :math:`Ê_{\mathrm{total}} \ge E_{\mathrm{total}}` only for :math:`C_t > 1` (growth regime,
    no cap, mean field). For :math:`C_1 \le 1` it is still the finite sum above (a population
    shrinking by the factor :math:`C_1`), but it bounds nothing the paper proves.

    Parameters
    ----------
    mechanism, behaviour, gamma
        The model and the noise scale evaluated (module docstring).
    T, n0 : int
        Horizon T >= 1 and initial population :math:`N_0 \ge 2` (where :math:`C_1` is evaluated).

    Returns
    -------
    float or numpy.ndarray
        :math:`Ê_{\mathrm{total}}`, broadcast over ``gamma``, ``q``, ``r``.

    References
    ----------
    Paper, Lemma 9, eq. (16) and (23); Remark 3.

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> from perfpriv.gaussian import GaussianMean
    >>> mech = GaussianMean(2.0, tau=0.02, d=12, R=10, leak_method="quadrature")
    >>> round(cumulative_error_bound(mech, Memoryless(q=0.3, r=0.6), T=3, n0=1000), 4)
    0.1126
    """
    mech = _model(mechanism, behaviour)
    gamma = _gamma(mech, gamma)
    T = check_int("T", T, low=1)
    n0 = check_int("n0", n0, low=2)
    check_same_shape(gamma=gamma, q=behaviour.q, r=behaviour.r)
    excess = np.asarray(behaviour.growth_factor(mech.leak_probability(n0, gamma)), float) - 1.0
    return _out(np.asarray(mech.expected_error(n0, gamma), float) * _inverse_geometric_sum(excess, T))


def _inverse_geometric_sum(excess, T):
    r""":math:`\sum_{t=1}^T C^{-t}` with C = 1 + excess, stably (as :func:`cumulative_error_bound` says)."""
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


# ----------------------------------------- the long run (corrects Remark 2)
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


def infinite_horizon_gamma(mechanism, behaviour, n0, *, bracket=(1e-2, 1e3), rounds_max=2000, grid=41):
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

       P(\gamma) = \prod_{k\ge 1} \frac{C_k(\gamma)}{1+r}

    finite and positive whenever the population reaches the growth regime. So infinite
    noise is not optimal even over an infinite horizon (L → ∞ as γ → ∞): this corrects the
    paper's Remark 2 (proof: the book, chapter 05).

    The limit is infinite (``finite=False``) when the population never grows like
    :math:`(1 + r)^t`: r = 0 < q, or -- under the exact statistic -- when the leak floor
    (:func:`perfpriv.leakage.exact_leak_floor`) keeps C <= 1 for every γ. With q = 0 it is
    finite for every γ (γ∞ may then be the bracket's lower end, reported as found).

    Parameters
    ----------
    mechanism, behaviour
        The model (module docstring), one cell (scalar q and r). The product needs
        thousands of :math:`p_τ` evaluations: use the quadrature, not a Monte Carlo.
    n0 : float
        :math:`N_0 \ge 2`.
    bracket : (float, float)
        Range of γ searched.
    rounds_max, grid : int
        Longest mean-field path evaluating the product (it stops once the remaining factors are 1
        to double precision); points of the log grid bracketing the optimum before refinement.

    Returns
    -------
    InfiniteHorizonGamma

    References
    ----------
    Paper, Remark 2 and Corollary 2 (which the limit corrects), eq. (13), Lemma 3.

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> from perfpriv.gaussian import GaussianMean
    >>> mech = GaussianMean(tau=0.02, d=12, R=10.0, leak_method="quadrature")
    >>> res = infinite_horizon_gamma(mech, Memoryless(q=0.3, r=0.6), n0=1000)
    >>> res.finite, 0.1 < res.gamma < 100
    (True, True)
    """
    mech = _model(mechanism, behaviour)
    if behaviour.shape != ():
        raise ValueError(f"behaviour: infinite_horizon_gamma takes one cell (scalar q and r); got cells of shape "
                         f"{behaviour.shape}")
    q, r = float(behaviour.q), float(behaviour.r)
    n0 = check_real("n0", n0, low=2, scalar=True)
    lo, hi = check_bracket(bracket)
    rounds_max = check_int("rounds_max", rounds_max, low=10)
    grid = check_int("grid", grid, low=5)
    check_allocation("the mean-field paths of the grid (grid x rounds_max populations)", float(grid) * rounds_max,
                     name="grid" if grid >= rounds_max else "rounds_max")
    gammas = np.geomspace(lo, hi, grid)
    if r == 0 and q > 0:
        inf = np.full(grid, np.inf)
        return InfiniteHorizonGamma(np.nan, np.inf, False, gammas, inf, np.zeros(grid),
                                    "r = 0 < q: nobody joins, the population shrinks for every noise level")

    def log_p(g):
        return _log_growth_product(mech, behaviour, np.atleast_1d(g), n0, rounds_max)

    lp = log_p(gammas)
    num = np.log(np.asarray(mech.one_record_error(gammas), float)) + math.log1p(r) - math.log(n0)
    limits = np.exp(num - lp)
    finite = np.isfinite(limits)
    if not finite.any():
        reason = ("the population never reaches the growth regime for any noise level in the bracket"
                  + (" (the exact statistic's leak floor keeps C <= 1)" if mech.statistic == "exact" else ""))
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


def _log_growth_product(mech, beh, gammas, n0, rounds_max):
    r""":math:`\log Π_k C_k(γ)/(1 + r)` along the uncapped mean field (−inf if the population does not grow)."""
    q, r = float(beh.q), float(beh.r)
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


# ---------------------------------------------------------------- Theorem 4
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


def pac_radius(mechanism, n, gamma=None, *, delta):
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
    mechanism, gamma
        The data model (d, R, μ, Σ) and the noise scale evaluated (module docstring).
    n : float or array_like
        Number of records (>= 1).
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
    >>> from perfpriv.gaussian import GaussianMean
    >>> round(pac_radius(GaussianMean(1.0, tau=0.02, d=2, R=10), 10_000, delta=0.05), 4)
    0.6306
    """
    model = _model(mechanism, None, kind=None)
    gamma = _gamma(model, gamma)
    n = check_real("n", n, low=1)
    delta = check_real("delta", delta, low=0, high=1, low_open=True, high_open=True, scalar=True)
    check_same_shape(gamma=gamma, n=n)
    B, A = _pac_constants(gamma, delta, model)
    return _out(B + A / np.sqrt(np.asarray(n, float)))


def pac_rounds(mechanism, behaviour, n0, *, epsilon, delta, gamma=None):
    r"""Theorem 4: rounds after which :math:`\|o_t - \mu\|_{\Sigma^{-1}} \le \varepsilon` w.p. >= 1 - delta.

    .. math::

       t \ge \frac{1}{\ln C_1(\gamma)}
       \ln\frac{\big(V_{\delta/2} + \gamma\sqrt{\lambda_{\max}(\Sigma^{-1})K_{\delta/2}}\big)^2}
               {N_0\,(\epsilon - B(R))^2}

    under the mean-field assumption :math:`N_t \ge N_0 C_1^t` (constants as in
    :func:`pac_radius`). Returns the smallest integer t >= 0 satisfying it.

    Parameters
    ----------
    mechanism, behaviour
        The model (module docstring), one cell (scalar q and r).
    n0 : int
        :math:`N_0 \ge 2; C_1` is evaluated at :math:`N_0`.
    epsilon, delta : float
        Target radius (above the clipping bias B(R)) and failure probability, as in :func:`pac_radius`.
    gamma : float, optional
        γ > 0; default: the mechanism's level (one number).

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
    >>> from perfpriv.behaviour import Memoryless
    >>> from perfpriv.gaussian import GaussianMean
    >>> mech = GaussianMean(2.0, tau=0.02, d=12, R=10, leak_method="quadrature")
    >>> pac_rounds(mech, Memoryless(q=0.3, r=0.6), n0=1000, epsilon=1.0, delta=0.05)
    7
    """
    model = _model(mechanism, behaviour)
    gamma = _gamma(model, gamma)
    for name, v in (("gamma", gamma), ("behaviour's q", behaviour.q), ("behaviour's r", behaviour.r)):
        if np.ndim(v):
            raise TypeError(f"{name} must be a single number; got an array of shape {np.shape(v)}")
    n0 = check_int("n0", n0, low=2)
    epsilon = check_real("epsilon", epsilon, low=0, low_open=True, scalar=True)
    delta = check_real("delta", delta, low=0, high=1, low_open=True, high_open=True, scalar=True)
    B, A = _pac_constants(gamma, delta, model)
    if epsilon <= B:
        raise ValueError(f"epsilon must exceed the clipping bias B(R) = {B:.4g} (Theorem 4); got {epsilon!r}")
    excess = float(behaviour.growth_factor(model.leak_probability(n0, gamma))) - 1.0
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
