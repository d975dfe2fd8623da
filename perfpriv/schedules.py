r"""Privacy schedules: a privacy level that changes from round to round.

The paper keeps the privacy level fixed over the horizon and, in its
discussion (§5), suggests that varying it over time could lower the error
accumulated along the whole trajectory. This module goes beyond the paper: it
computes the cumulative error (the *regret*) of a schedule and optimizes it.

Gaussian model (§4, Algorithm 1). A schedule is ``gamma = (γ_1, ..., γ_T)``.
Round t releases the noisy mean of the N_{t-1} current users with noise scale
γ_t, and its leaks move the population to N_t. The mean-field regret is

.. math::

   R_T(\gamma) = \sum_{t=1}^{T} \frac{\gamma_t^2\,\mathrm{Tr}\,\Sigma^{-1} + d}{N_{t-1}},
   \qquad N_t = \mathrm{clip}\big(N_{t-1}\,C(\gamma_t; N_{t-1}),\ \text{floor},\ \text{cap}\big),

with ``C(γ; N) = 1 + r - (q + r) p_τ(N, γ)`` (eq. 13) and Lemma 3's error of a
release. This is :func:`perfpriv.dynamics.mean_field_cumulative_error` with
``rounds="algorithm"`` (the indexing of Algorithm 1 and of
:func:`perfpriv.gaussian.simulate`: the first release uses the N_0 initial
users) when the schedule is constant -- number for number.

Bernoulli model (§3). A schedule is ``epsilon = (ε_1, ..., ε_T)``; round t
answers by randomized response with ε_t, so its squared error has mean
``E_μ[ν(1-ν)] / (4 β_t² N_{t-1})`` and the population grows by ``C(β_t)``
(Lemma 2): :func:`perfpriv.bernoulli.mean_field_error` with ``per_round=True``.

Functions
---------
Regret: :func:`mean_field_regret` (Gaussian), :func:`bernoulli_regret`.
Schedules a practitioner can deploy: :func:`two_phase` ("protect then
exploit": a first level for ``switch`` rounds, then another) and
:func:`geometric` (``γ_t = γ_0 ρ^{t-1}``). Optimizers, each returning a
:class:`ScheduleOptimum`: :func:`optimal_schedule` (one free value per round),
:func:`optimal_two_phase`, :func:`optimal_geometric`, and their Bernoulli
counterparts :func:`optimal_epsilon_schedule`,
:func:`optimal_epsilon_two_phase`, :func:`optimal_epsilon_geometric`.
Theory next to simulation: :func:`compare_schedules` (Algorithm 1 with
:func:`perfpriv.gaussian.simulate`), :func:`compare_epsilon_schedules`
(:func:`perfpriv.bernoulli.simulate` with ``per_round=True``). Where
schedules help: :func:`gain_map`.

How the free schedule is optimized
----------------------------------
A local descent on ``u_t = log γ_t`` (T variables in the box ``bracket``)
with the exact gradient of the mean-field recursion, computed backwards in
time (an adjoint pass: one forward pass, one backward pass, whatever T); the
only numerical derivatives are those of p_τ in n and γ, by central
differences in log space. The descent is SciPy's bounded truncated Newton
(TNC) rather than L-BFGS-B: same optima here, but L-BFGS-B's BLAS calls on
tiny vectors made it ~10x slower on a busy machine.

Each evaluation of the exact p_τ costs a quadrature, so the search runs on a
bicubic spline of p_τ over (log n, log γ) built once per (τ, data model) and
cached (error a few 1e-4 in p); its optimum is then polished on the exact
objective and every reported regret is exact. The objective has kinks (where
the cap or the floor start to bind) and may have several local minima, so
the search starts from several schedules: the best constant γ*
(:func:`perfpriv.optimize.optimal_gamma` with ``objective="mean_field"`` and
``rounds="algorithm"``), the best geometric and the best two-phase schedules
(found by grid search on the surrogate). The result is the best, by the
exact regret, of all starts and local optima; since the best constant is a
candidate, the optimal schedule is never worse than it.

Why not dynamic programming over a discretized population (the state
N_{t-1} is one number and the dynamics do not depend on t)? It would find
the global optimum of the discretized problem, but its interpolation error
in N is of the order of the few-percent gains being measured; the tests
instead check the descent against brute force over all schedules on a
log grid for T = 2 and 3.

References
----------
Paper ``papers/000_6858eaefe28505f4.txt``: §3 (eqs. 1-4, Lemma 2), Lemma 3,
Lemma 8 and eq. 13, Lemma 9 and Remarks 2-3 (the constant γ*), §5
(discussion: time-varying privacy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize as _opt
from scipy.interpolate import RectBivariateSpline

from . import bernoulli as _bern
from . import dynamics as _dyn
from . import gamma_search as _gs
from . import gaussian as _gauss
from ._validate import check_choice, check_int, check_probability, check_real

__all__ = [
    "ScheduleOptimum",
    "mean_field_regret",
    "bernoulli_regret",
    "two_phase",
    "geometric",
    "optimal_schedule",
    "optimal_two_phase",
    "optimal_geometric",
    "optimal_epsilon_schedule",
    "optimal_epsilon_two_phase",
    "optimal_epsilon_geometric",
    "ScheduleComparison",
    "compare_schedules",
    "compare_epsilon_schedules",
    "GainMap",
    "gain_map",
]

_H = 1e-5  # log-space step of the central differences of p_tau
_EPS_BRACKET = (1e-2, 50.0)


@dataclass(frozen=True, eq=False)
class ScheduleOptimum:
    """An optimized privacy schedule and its mean-field regret.

    Attributes
    ----------
    schedule : numpy.ndarray, shape (T,)
        One privacy level per round (γ_t for the Gaussian model, ε_t for the
        Bernoulli model); round t uses ``schedule[t-1]``. Also available as
        ``.gamma`` or ``.epsilon``.
    regret : float
        Mean-field regret of ``schedule`` (equal to :func:`mean_field_regret`
        / :func:`bernoulli_regret` of it, with the same arguments and seed).
    population : numpy.ndarray, shape (T + 1,)
        Mean-field population N_0, ..., N_T along the schedule.
    constant : float
        The best constant level (γ* or ε*) under the same objective.
    constant_regret : float
        Regret of the constant schedule at ``constant``.
    family : str
        ``"free"``, ``"two_phase"`` or ``"geometric"``.
    params : dict
        Parameters of the family: ``{"first", "then", "switch"}`` (two phase),
        ``{"start", "ratio"}`` (geometric), ``{"start": name}`` (free: which
        start led to the optimum).
    parameter : str
        ``"gamma"`` or ``"epsilon"``.
    """

    schedule: np.ndarray
    regret: float
    population: np.ndarray
    constant: float
    constant_regret: float
    family: str
    params: dict = field(default_factory=dict)
    parameter: str = "gamma"

    @property
    def gamma(self) -> np.ndarray:
        """The schedule γ_1..γ_T (Gaussian model)."""
        if self.parameter != "gamma":
            raise AttributeError("this is an epsilon schedule (Bernoulli model): use .epsilon")
        return self.schedule

    @property
    def epsilon(self) -> np.ndarray:
        """The schedule ε_1..ε_T (Bernoulli model)."""
        if self.parameter != "epsilon":
            raise AttributeError("this is a gamma schedule (Gaussian model): use .gamma")
        return self.schedule

    @property
    def gain(self) -> float:
        """Relative regret reduction over the best constant, 1 - regret / constant_regret."""
        return float(1.0 - self.regret / self.constant_regret)


# --------------------------------------------------------------------------
# schedules a practitioner can deploy
# --------------------------------------------------------------------------
def two_phase(first, then, switch, T):
    """"Protect then exploit": level ``first`` for rounds 1..switch, ``then`` afterwards.

    Parameters
    ----------
    first, then : float
        Privacy levels (γ or ε) > 0 of the two phases.
    switch : int
        Number of rounds of the first phase, 0 <= switch <= T.
    T : int
        Horizon T >= 1.

    Returns
    -------
    numpy.ndarray, shape (T,)

    Examples
    --------
    >>> two_phase(4.0, 1.0, 2, 4).tolist()
    [4.0, 4.0, 1.0, 1.0]
    """
    first = check_real("first", first, low=0, low_open=True, scalar=True)
    then = check_real("then", then, low=0, low_open=True, scalar=True)
    T = check_int("T", T, low=1)
    switch = check_int("switch", switch, low=0, high=T)
    return np.where(np.arange(T) < switch, first, then).astype(float)


def geometric(start, ratio, T):
    """Geometric schedule: round t uses ``start * ratio**(t-1)``, t = 1..T.

    Parameters
    ----------
    start : float
        Level of the first round (γ_1 or ε_1) > 0.
    ratio : float
        ρ > 0 (ρ < 1 decays, ρ = 1 is constant).
    T : int
        Horizon T >= 1.

    Returns
    -------
    numpy.ndarray, shape (T,)

    Examples
    --------
    >>> geometric(8.0, 0.5, 3).tolist()
    [8.0, 4.0, 2.0]
    """
    start = check_real("start", start, low=0, low_open=True, scalar=True)
    ratio = check_real("ratio", ratio, low=0, low_open=True, scalar=True)
    T = check_int("T", T, low=1)
    # ratio**k beyond the double range gives inf (or 0) -- the true level is out of
    # range there -- without a RuntimeWarning; start > 0, so never inf * 0
    with np.errstate(over="ignore", under="ignore"):
        return start * ratio ** np.arange(T, dtype=float)


# --------------------------------------------------------------------------
# Gaussian model: the regret and its gradient
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Problem:
    q: float
    r: float
    tau: float
    n0: int
    cap: float | None
    floor: float | None
    model: object
    trace_inv: float


def _problem(q, r, tau, n0, d, R, mu, Sigma, statistic, cap, floor, method, samples, seed):
    q = check_probability("q", q, scalar=True)
    r = check_probability("r", r, scalar=True)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    n0 = check_int("n0", n0, low=2)
    cap, floor = _dyn._check_cap_floor(cap, floor, n0)
    # seed None -> 0: a Monte Carlo p_tau is then one fixed function, shared by every call
    model = _dyn._model(d, R, mu, Sigma, statistic, method, samples, 0 if seed is None else seed)
    trace_inv = float(np.trace(np.linalg.inv(model.Sigma)))
    return _Problem(q, r, tau, n0, cap, floor, model, trace_inv)


def _check_gammas(gammas, T=None, name="gammas"):
    g = check_real(name, gammas, low=0, low_open=True)
    g = np.asarray(g, dtype=float)
    if g.ndim == 0:
        raise ValueError(f"{name} must be a schedule: an array whose last axis runs over the rounds "
                         f"(shape (T,) or (..., T)); got a single number {float(g)!r}")
    if T is not None and g.shape[-1] != T:
        raise ValueError(f"{name} must have T={T} values along its last axis; got shape {g.shape}")
    return g


def _clip(x, pb):
    if pb.cap is not None:
        x = np.minimum(x, pb.cap)
    if pb.floor is not None:
        x = np.maximum(x, pb.floor)
    return x


def _regret(gammas, pb):
    """Regret and population of schedules of shape (..., T) (validated)."""
    T = gammas.shape[-1]
    N = np.empty(gammas.shape[:-1] + (T + 1,))
    N[..., 0] = pb.n0
    for t in range(1, T + 1):
        prev = N[..., t - 1]
        # the same arithmetic as dynamics._mean_field, round by round
        nxt = prev * (1.0 + _dyn._excess(_dyn._marginal_p(prev, gammas[..., t - 1], pb.tau, pb.model),
                                         pb.q, pb.r))
        N[..., t] = _clip(nxt, pb)
    num = _dyn._release_error(gammas, pb.model)
    with np.errstate(divide="ignore"):
        return (num / N[..., :-1]).sum(axis=-1), N


def _value_and_grad(u, pb, sur=None):
    """Regret of the schedule exp(u) (shape (T,)) and its gradient in u = log gamma.

    Forward: N_t = clip(M_t), M_t = N_{t-1}(1 + r - (q + r) p(N_{t-1}, γ_t)).
    Backward (adjoint): λ_t = dJ/dN_t, λ_T = 0,
    dJ/du_t = e'(γ_t) γ_t / N_{t-1} + λ_t ∂N_t/∂u_t and
    λ_{t-1} = -e(γ_t)/N_{t-1}^2 + λ_t ∂N_t/∂N_{t-1}; ∂p by central differences
    of the exact p_τ, or from the spline surrogate ``sur`` when given.
    """
    g = np.exp(u)
    T = g.size
    s = pb.q + pb.r
    N = np.empty(T + 1)
    N[0] = pb.n0
    p = np.empty(T)
    dp_du = np.empty(T)
    dp_dlogn = np.empty(T)
    inside = np.empty(T, dtype=bool)
    up, dn = math.exp(_H), math.exp(-_H)
    for t in range(T):
        n, gt = N[t], g[t]
        if sur is None:
            vals = _dyn._marginal_p(np.array([n, n * up, n * dn, n, n]),
                                    np.array([gt, gt, gt, gt * up, gt * dn]), pb.tau, pb.model)
            p[t] = vals[0]
            dp_dlogn[t] = (vals[1] - vals[2]) / (2 * _H)
            dp_du[t] = (vals[3] - vals[4]) / (2 * _H)
        else:
            p[t], dp_dlogn[t], dp_du[t] = sur.ev(n, u[t])
        m = n * (1.0 + _dyn._excess(p[t], pb.q, pb.r))
        c = float(_clip(m, pb))
        inside[t] = c == m
        N[t + 1] = c
    e = np.asarray(_dyn._release_error(g, pb.model), float)
    de_du = 2.0 * g**2 * pb.trace_inv
    value = float((e / N[:-1]).sum())
    grad = np.empty(T)
    lam = 0.0
    for t in range(T - 1, -1, -1):
        n = N[t]
        dNt_du = -s * n * dp_du[t] if inside[t] else 0.0
        grad[t] = de_du[t] / n + lam * dNt_du
        dNt_dn = (1.0 + pb.r - s * p[t] - s * dp_dlogn[t]) if inside[t] else 0.0
        lam = -e[t] / n**2 + lam * dNt_dn
    return value, grad


class _Surrogate:
    """Bicubic spline of p_τ over (log n, log γ): a fast stand-in used only to *search*.

    Built from one vectorized evaluation of the exact p_τ on a 72 x 90 grid
    (n from 1 to the largest reachable population, γ over the bracket); its
    error is a few 1e-4 in p. Every returned schedule is polished and
    evaluated with the exact p_τ.
    """

    def __init__(self, tau, model, lo, hi, upper):
        ln = np.linspace(0.0, math.log(upper), 72)
        lg = np.linspace(lo - 0.05, hi + 0.05, 90)
        n_grid = np.exp(ln)[:, None] * np.ones(lg.size)
        g_grid = np.exp(lg)[None, :] * np.ones((ln.size, 1))
        P = _dyn._marginal_p(n_grid, g_grid, tau, model)
        self.spline = RectBivariateSpline(ln, lg, P, kx=3, ky=3, s=0)

    def ev(self, n, u):
        """p, dp/dlog n, dp/dlog γ at population n and u = log γ."""
        x = math.log(max(n, 1.0))
        return (float(self.spline.ev(x, u)), float(self.spline.ev(x, u, dx=1)),
                float(self.spline.ev(x, u, dy=1)))

    def regret(self, U, pb):
        """Surrogate regret of schedules exp(U), U of shape (..., T) (batch search)."""
        U = np.asarray(U, float)
        N = np.full(U.shape[:-1], float(pb.n0))
        total = np.zeros(U.shape[:-1])
        for t in range(U.shape[-1]):
            total += (np.exp(2 * U[..., t]) * pb.trace_inv + pb.model.d) / N
            p = np.clip(self.spline.ev(np.log(np.maximum(N, 1.0)), U[..., t]), 0.0, 1.0)
            N = _clip(N * (1.0 + _dyn._excess(p, pb.q, pb.r)), pb)
        return total


_SURROGATES: dict = {}


def _surrogate(pb, lo, hi, T):
    """The (cached) surrogate of p_τ for this data model, τ and bracket."""
    upper = pb.cap if pb.cap is not None else pb.n0 * (1.0 + pb.r) ** T
    upper = float(max(upper, 4.0 * pb.n0))
    m = pb.model
    key = (pb.tau, m.d, m.R, m.mu.tobytes(), m.Sigma.tobytes(), m.statistic, m.method, m.samples, m.seed,
           lo, hi, upper)
    if key not in _SURROGATES:
        if len(_SURROGATES) >= 32:
            _SURROGATES.pop(next(iter(_SURROGATES)))
        _SURROGATES[key] = _Surrogate(pb.tau, m, lo, hi, upper)
    return _SURROGATES[key]


def mean_field_regret(gammas, q, r, tau, *, n0, d, R, mu=None, Sigma=None, statistic="paper", cap=20000,
                      floor=1, method="auto", samples=None, seed=None):
    r"""Mean-field regret R_T = Σ_t (γ_t² Tr Σ⁻¹ + d) / N_{t-1} of a γ schedule.

    The population follows N_t = clip(N_{t-1} C(γ_t; N_{t-1}), floor, cap)
    with C = 1 + r - (q + r) p_τ (eq. 13), p_τ re-evaluated at every N_{t-1}
    (Lemma 8); round t releases from the N_{t-1} current users (Algorithm 1's
    indexing). A constant schedule gives exactly
    :func:`perfpriv.dynamics.mean_field_cumulative_error` with
    ``rounds="algorithm"``.

    Parameters
    ----------
    gammas : array_like, shape (T,) or (..., T)
        Schedule(s) γ_1..γ_T > 0 (per-user noise scales), the last axis over
        rounds; leading axes are a batch of schedules.
    q, r : float
        Leave probability of a leaked user and recruit probability of a
        non-leaked one, in [0, 1].
    tau : float
        Leak threshold τ > 0.
    n0 : int
        N_0 >= 2.
    d, R, mu, Sigma, statistic
        Data model (dimension, clipping radius, mean, covariance, membership
        statistic), as in :mod:`perfpriv.dynamics`.
    cap, floor : float or None
        Population clip (20000 and 1 as in the simulations; None: no clip).
    method, samples, seed
        Evaluation of p_τ (:func:`perfpriv.leakage.marginal_leak_probability`);
        the default quadrature is deterministic; a Monte Carlo p_τ uses one
        fixed seed derived from ``seed`` (``None`` means 0, so that the
        regret is a fixed function of the schedule).

    Returns
    -------
    float or numpy.ndarray
        One regret per schedule (shape ``gammas.shape[:-1]``).

    References
    ----------
    Paper Lemma 3 (eq. 7), Lemma 8 (eq. 13), Lemma 9 (the constant case), §5.

    Examples
    --------
    >>> round(mean_field_regret([2.0, 1.0, 0.5], 0.3, 0.6, 0.02, n0=200, d=12, R=10), 4)
    0.4558
    """
    g = _check_gammas(gammas)
    pb = _problem(q, r, tau, n0, d, R, mu, Sigma, statistic, cap, floor, method, samples, seed)
    return _dyn._out(_regret(g, pb)[0])


def _constant_optimum(pb, T, bracket, d, R, mu, Sigma, statistic, method, samples, seed):
    """γ* of the constant schedule, by perfpriv.optimize (same objective and indexing)."""
    from . import optimize  # optimize and schedules are on the same layer

    res = optimize.optimal_gamma(pb.q, pb.r, pb.tau, T=T, n0=pb.n0, d=d, R=R, mu=mu, Sigma=Sigma,
                                 statistic=statistic, objective="mean_field", cap=pb.cap, floor=pb.floor,
                                 rounds="algorithm", bracket=bracket, method=method, samples=samples,
                                 seed=pb.model.seed)
    g = float(res.gamma)
    return g, float(_regret(np.full(T, g), pb)[0])


def _box_minimize(fun, x0, bounds, maxfun, jac=True):
    """Local minimum of ``fun`` in a box: bounded truncated Newton (SciPy's TNC).

    TNC rather than L-BFGS-B: both use the same gradient and reach the same
    optima here, but SciPy's L-BFGS-B calls multi-threaded BLAS on tiny
    vectors, which on a busy two-core machine costs milliseconds per
    iteration (measured: ~10x slower than TNC, whose own work is negligible).
    """
    res = _opt.minimize(fun, np.asarray(x0, float), jac=jac, method="TNC", bounds=bounds,
                        options=dict(maxfun=int(maxfun)))
    return np.clip(res.x, [b[0] for b in bounds], [b[1] for b in bounds])


def _descend(fun_grad, x0, lo, hi, maxiter, bounds=None):
    """Box-constrained gradient descent on log-levels (see :func:`_box_minimize`)."""
    bounds = [(lo, hi)] * len(x0) if bounds is None else bounds
    return _box_minimize(fun_grad, x0, bounds, maxiter)


def _common_args(T, bracket, maxiter, polish=0):
    T = check_int("T", T, low=1)
    lo, hi = _dyn._check_bracket(bracket)
    maxiter = check_int("maxiter", maxiter, low=1)
    check_int("polish", polish, low=0)
    return T, math.log(lo), math.log(hi), maxiter


def _result(gammas, pb, const, const_regret, family, params, parameter="gamma"):
    val, N = _regret(gammas, pb)
    return ScheduleOptimum(gammas, float(val), N, const, const_regret, family, params, parameter)


def _best_exact(cands, pb):
    """Name, schedule and exact regret of the best of several schedules (one batched pass)."""
    names = list(cands)
    vals = _regret(np.stack([cands[k] for k in names]), pb)[0]
    i = int(np.argmin(vals))
    return names[i], cands[names[i]], float(vals[i])


# Reduced parametrizations x -> u = log γ (shape (T,)) and the chain rule back.
def _geometric_map(T, lo, hi):
    k = np.arange(T, dtype=float)

    def to_u(x):
        return np.clip(x[0] + k * x[1], lo, hi)

    def pull(x, gr):
        raw = x[0] + k * x[1]
        gr = gr * ((raw > lo) & (raw < hi))
        return np.array([gr.sum(), (k * gr).sum()])

    return to_u, pull


def _two_phase_map(T, switch):
    first = np.arange(T) < switch

    def to_u(x):
        return np.where(first, x[0], x[1]).astype(float)

    def pull(x, gr):
        return np.array([gr[first].sum(), gr[~first].sum()])

    return to_u, pull


def _fit_reduced(to_u, pull, x0, pb, sur, lo, hi, maxiter, bounds):
    def fg(x):
        v, gr = _value_and_grad(to_u(x), pb, sur)
        return v, pull(x, gr)

    return _descend(fg, x0, lo, hi, maxiter, bounds)


def _search_geometric(pb, sur, T, lo, hi, maxiter, polish):
    """Best (log γ_1, log ρ): surrogate grid, surrogate TNC, exact polish."""
    span = max(T - 1, 1)
    rb = 10.0 / span
    starts = np.linspace(lo, hi, 31)
    ratios = np.linspace(-rb, rb, 41)
    S, Q = np.meshgrid(starts, ratios, indexing="ij")
    k = np.arange(T, dtype=float)
    vals = sur.regret(np.clip(S[..., None] + Q[..., None] * k, lo, hi), pb)
    i, j = np.unravel_index(int(np.argmin(vals)), vals.shape)
    to_u, pull = _geometric_map(T, lo, hi)
    bounds = [(lo, hi), (-rb, rb)]
    x = _fit_reduced(to_u, pull, [starts[i], ratios[j]], pb, sur, lo, hi, maxiter, bounds)
    if polish:
        x = _fit_reduced(to_u, pull, x, pb, None, lo, hi, polish, bounds)
    return x, np.exp(to_u(x))


def _two_phase_grid(switches, T, grid):
    """Log-schedules of every (switch, first, then) on ``grid``, shape (K, G, G, T)."""
    first = np.arange(T)[None, :] < np.asarray(switches)[:, None]          # (K, T)
    A = grid[None, :, None, None]
    B = grid[None, None, :, None]
    return np.where(first[:, None, None, :], A, B)


def _top_switches(vals, switches, grid, top=3):
    """The ``top`` switches with the smallest grid minimum, with their best grid points."""
    flat = vals.reshape(len(switches), -1)
    best = flat.min(axis=1)
    order = np.argsort(best, kind="stable")[:top]
    out = []
    for i in order:
        a, b = np.unravel_index(int(np.argmin(flat[i])), vals.shape[1:])
        out.append((int(switches[i]), np.array([grid[a], grid[b]])))
    return out


def _search_two_phase(pb, sur, T, lo, hi, maxiter, polish, switches):
    """Best (log γ_first, log γ_then, switch): surrogate grid over every switch at once,
    surrogate TNC for the three best switches, exact choice, exact polish."""
    grid = np.linspace(lo, hi, 41)
    vals = sur.regret(_two_phase_grid(switches, T, grid), pb)
    fits = {}
    for k, x0 in _top_switches(vals, switches, grid):
        to_u, pull = _two_phase_map(T, k)
        fits[k] = _fit_reduced(to_u, pull, x0, pb, sur, lo, hi, maxiter, None)
    k, _, _ = _best_exact({k: np.exp(_two_phase_map(T, k)[0](x)) for k, x in fits.items()}, pb)
    to_u, pull = _two_phase_map(T, k)
    x = fits[k]
    if polish:
        x = _fit_reduced(to_u, pull, x, pb, None, lo, hi, polish, None)
    return x, int(k), np.exp(to_u(x))


_GAUSS_PARAMS = """
    q, r, tau, n0, d, R, mu, Sigma, statistic, cap, floor, method, samples, seed
        As in :func:`mean_field_regret`.
    T : int
        Horizon (number of rounds) T >= 1.
    bracket : (float, float)
        Box for every γ_t (and for γ*).
    maxiter : int
        Limit on the objective evaluations of each TNC run on the surrogate.
    polish : int
        Limit on the exact objective evaluations of the final TNC run
        (0: no polish; the result is still evaluated exactly)."""


def optimal_schedule(q, r, tau, *, T, n0, d, R, mu=None, Sigma=None, statistic="paper", cap=20000, floor=1,
                     bracket=(1e-2, 1e3), maxiter=200, polish=40, starts="auto", method="auto", samples=None,
                     seed=None):
    """The γ schedule (one free value per round) minimizing :func:`mean_field_regret`.

    TNC on log γ_t with the adjoint gradient (module docstring): first
    on a spline surrogate of p_τ from several starts, then on the exact
    objective from the best of them. The result is the best, by the exact
    regret, of the starts, the surrogate optima and the polished one; since
    the best constant γ* is a start, ``regret <= constant_regret`` always.

    Parameters
    ----------%s
    starts : "auto" or "constant"
        ``"auto"``: the best constant, the best geometric and the best
        two-phase schedules (found on the surrogate); ``"constant"``: the
        best constant only (faster; used by the widget).

    Returns
    -------
    ScheduleOptimum
        ``.gamma`` (shape (T,)), ``.regret``, ``.constant`` (γ*),
        ``.constant_regret``, ``.gain``, ``.params["start"]``.

    References
    ----------
    Paper §5 (time-varying privacy, suggested), Remarks 2-3 (γ*).

    Examples
    --------
    >>> res = optimal_schedule(0.3, 0.6, 0.02, T=4, n0=200, d=12, R=10)
    >>> bool(res.regret <= res.constant_regret), res.gamma.shape
    (True, (4,))
    >>> bool(res.gamma[0] > res.gamma[-1])   # more noise first, less later
    True
    """
    T, lo, hi, maxiter = _common_args(T, bracket, maxiter, polish)
    starts = check_choice("starts", starts, ("auto", "constant"))
    pb = _problem(q, r, tau, n0, d, R, mu, Sigma, statistic, cap, floor, method, samples, seed)
    g_star, const_regret = _constant_optimum(pb, T, bracket, d, R, mu, Sigma, statistic, method, samples,
                                             seed)
    sur = _surrogate(pb, lo, hi, T)
    inits = {"constant": np.full(T, math.log(g_star))}
    if starts == "auto" and T > 1:
        inits["geometric"] = np.log(_search_geometric(pb, sur, T, lo, hi, maxiter, 0)[1])
        inits["two_phase"] = np.log(_search_two_phase(pb, sur, T, lo, hi, maxiter, 0, range(1, T))[2])
    cands = {}
    for name, u0 in inits.items():
        cands[name + "/start"] = np.exp(u0)
        cands[name] = np.exp(_descend(lambda x: _value_and_grad(x, pb, sur), u0, lo, hi, maxiter))
    name, best, _ = _best_exact(cands, pb)
    if polish:
        cands[name.split("/")[0] + "/polished"] = np.exp(
            _descend(lambda x: _value_and_grad(x, pb), np.log(best), lo, hi, polish))
        name, best, _ = _best_exact(cands, pb)
    if float(_regret(best, pb)[0]) > const_regret:  # (cannot happen: the constant is a candidate)
        name, best = "constant/start", np.full(T, g_star)
    return _result(best, pb, g_star, const_regret, "free", {"start": name.split("/")[0]})


optimal_schedule.__doc__ = optimal_schedule.__doc__ % _GAUSS_PARAMS


def optimal_two_phase(q, r, tau, *, T, n0, d, R, mu=None, Sigma=None, statistic="paper", cap=20000, floor=1,
                      bracket=(1e-2, 1e3), maxiter=100, polish=20, switches=None, method="auto", samples=None,
                      seed=None):
    """Best "protect then exploit" schedule: γ_first for ``switch`` rounds, then γ_then.

    For every switch round k (``switches``, default 1..T-1): a 41 x 41 log
    grid of (γ_first, γ_then) on the spline surrogate of p_τ; for the three
    best k, TNC on the surrogate; the best of them by the exact regret
    is polished on the exact objective. A constant schedule is a two-phase schedule and
    the best constant is kept as a candidate: ``regret <= constant_regret``.

    Parameters
    ----------%s
    switches : array_like of int, optional
        Candidate lengths of the first phase (each in 0..T).

    Returns
    -------
    ScheduleOptimum
        ``family="two_phase"``, ``params={"first", "then", "switch"}``.

    Examples
    --------
    >>> res = optimal_two_phase(0.3, 0.6, 0.02, T=6, n0=200, d=12, R=10)
    >>> bool(res.params["first"] > res.params["then"])
    True
    """
    T, lo, hi, maxiter = _common_args(T, bracket, maxiter, polish)
    if switches is None:
        switches = np.arange(1, T) if T > 1 else np.array([0])
    switches = [check_int("switches", k, low=0, high=T) for k in np.atleast_1d(switches)]
    pb = _problem(q, r, tau, n0, d, R, mu, Sigma, statistic, cap, floor, method, samples, seed)
    g_star, const_regret = _constant_optimum(pb, T, bracket, d, R, mu, Sigma, statistic, method, samples,
                                             seed)
    sur = _surrogate(pb, lo, hi, T)
    x, k, g = _search_two_phase(pb, sur, T, lo, hi, maxiter, polish, switches)
    a, b = float(math.exp(x[0])), float(math.exp(x[1]))
    if float(_regret(g, pb)[0]) >= const_regret:
        a, b, k, g = g_star, g_star, 0, np.full(T, g_star)
    return _result(g, pb, g_star, const_regret, "two_phase", {"first": a, "then": b, "switch": k})


optimal_two_phase.__doc__ = optimal_two_phase.__doc__ % _GAUSS_PARAMS


def optimal_geometric(q, r, tau, *, T, n0, d, R, mu=None, Sigma=None, statistic="paper", cap=20000, floor=1,
                      bracket=(1e-2, 1e3), maxiter=100, polish=20, method="auto", samples=None, seed=None):
    """Best geometric schedule γ_t = γ_1 ρ^{t-1} (a smooth change of the noise).

    A log grid of (γ_1, ρ) on the spline surrogate of p_τ, TNC on the
    surrogate, then on the exact objective; ρ = 1 is the constant schedule
    and the best constant is kept as a candidate: ``regret <= constant_regret``.
    (γ_t is kept inside ``bracket``.)

    Parameters
    ----------%s

    Returns
    -------
    ScheduleOptimum
        ``family="geometric"``, ``params={"start", "ratio"}``.

    Examples
    --------
    >>> res = optimal_geometric(0.3, 0.6, 0.02, T=6, n0=200, d=12, R=10)
    >>> bool(res.params["ratio"] < 1)
    True
    """
    T, lo, hi, maxiter = _common_args(T, bracket, maxiter, polish)
    pb = _problem(q, r, tau, n0, d, R, mu, Sigma, statistic, cap, floor, method, samples, seed)
    g_star, const_regret = _constant_optimum(pb, T, bracket, d, R, mu, Sigma, statistic, method, samples,
                                             seed)
    sur = _surrogate(pb, lo, hi, T)
    x, g = _search_geometric(pb, sur, T, lo, hi, maxiter, polish)
    a, rho = float(math.exp(x[0])), float(math.exp(x[1]))
    if float(_regret(g, pb)[0]) >= const_regret:
        a, rho, g = g_star, 1.0, np.full(T, g_star)
    return _result(g, pb, g_star, const_regret, "geometric", {"start": a, "ratio": rho})


optimal_geometric.__doc__ = optimal_geometric.__doc__ % _GAUSS_PARAMS


# --------------------------------------------------------------------------
# Bernoulli model
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class _BernProblem:
    q: float
    r: float
    n0: int
    model: str
    cap: int
    mu: object


def _bern_problem(q, r, n0, model, cap, mu):
    q = check_probability("q", q, scalar=True)
    r = check_probability("r", r, scalar=True)
    n0 = check_int("n0", n0, low=1)
    model = check_choice("model", model, _bern.MODELS)
    cap = check_int("cap", cap, low=n0)
    _bern._check_mu_law(mu)
    return _BernProblem(q, r, n0, model, cap, mu)


def _bern_regret(eps, pb):
    T = eps.shape[-1]
    err = _bern.mean_field_error(eps, pb.q, pb.r, T=T, n0=pb.n0, model=pb.model, cap=pb.cap, mu=pb.mu,
                                 per_round=True)
    return err.sum(axis=-1)


def bernoulli_regret(epsilons, q, r, *, n0, model="leak", cap=20000, mu=(0.0, 1.0)):
    """Mean-field regret Σ_t E(μ̂_t - μ_t)² of an ε schedule (Bernoulli model).

    The sum over rounds of :func:`perfpriv.bernoulli.mean_field_error` with
    ``per_round=True``: round t uses ε_t for its answers and its leaks, and
    N_{t-1} users.

    Parameters
    ----------
    epsilons : array_like, shape (T,) or (..., T)
        Schedule(s) ε_1..ε_T in (0, inf] (``np.inf``: no privacy that round).
    q, r : float
        Leaving and recruiting probabilities in [0, 1].
    n0 : int
        N_0 >= 1.
    model : {"leak", "agnostic"}
        Growth rule (§3 / appendix B).
    cap : int
        Largest population.
    mu : float or (float, float)
        Law of μ_t, as in :func:`perfpriv.bernoulli.simulate`.

    Returns
    -------
    float or numpy.ndarray
        One regret per schedule.

    References
    ----------
    Paper §3, eq. 1, Lemma 2.

    Examples
    --------
    >>> round(bernoulli_regret([0.5, 1.0, 2.0], 0.3, 0.6, n0=100), 4)
    0.0549
    """
    eps = np.asarray(_bern._check_epsilon(epsilons, positive=True, name="epsilons"), dtype=float)
    if eps.ndim == 0:
        raise ValueError(f"epsilons must be a schedule: an array whose last axis runs over the rounds; "
                         f"got a single number {float(eps)!r}")
    pb = _bern_problem(q, r, n0, model, cap, mu)
    return _dyn._out(_bern_regret(eps, pb))


def _bern_value_grad(u, pb, lo, hi):
    """Regret of exp(u) and its gradient by batched central differences (pure numpy)."""
    T = u.size
    h = 1e-6
    batch = np.vstack([u, u + h * np.eye(T), u - h * np.eye(T)])
    vals = _bern_regret(np.exp(batch), pb)
    return float(vals[0]), (vals[1:T + 1] - vals[T + 1:]) / (2 * h)


def _bern_constant(pb, T, lo, hi):
    """ε* of the constant schedule: log grid, then bounded Brent."""
    grid = np.linspace(lo, hi, 121)
    vals = _bern_regret(np.exp(grid)[:, None] * np.ones(T), pb)
    i = int(np.argmin(vals))
    a, b = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = _opt.minimize_scalar(lambda x: float(_bern_regret(np.full(T, math.exp(x)), pb)),
                               bounds=(a, b), method="bounded", options=dict(xatol=1e-10))
    x = res.x if res.fun < vals[i] else grid[i]
    e = float(math.exp(x))
    return e, float(_bern_regret(np.full(T, e), pb))


def _bern_args(q, r, T, n0, model, cap, mu, bracket, maxiter):
    T, lo, hi, maxiter = _common_args(T, bracket, maxiter)
    return T, lo, hi, maxiter, _bern_problem(q, r, n0, model, cap, mu)


def _bern_result(eps, pb, const, const_regret, family, params):
    T = eps.size
    N = _bern.mean_field_population(eps, pb.q, pb.r, T=T, n0=pb.n0, model=pb.model, cap=pb.cap,
                                    per_round=True)
    return ScheduleOptimum(eps, float(_bern_regret(eps, pb)), N, const, const_regret, family, params,
                           "epsilon")


def optimal_epsilon_schedule(q, r, *, T, n0, model="leak", cap=20000, mu=(0.0, 1.0), bracket=_EPS_BRACKET,
                             maxiter=200):
    """The ε schedule minimizing :func:`bernoulli_regret` (Bernoulli analogue of :func:`optimal_schedule`).

    TNC on log ε_t (gradient by central differences, all 2T perturbed
    schedules evaluated in one vectorized mean-field pass), started from the
    best constant ε* and from the best geometric schedule;
    the best of starts and optima is returned, so ``regret <= constant_regret``.

    Parameters
    ----------
    q, r, n0, model, cap, mu
        As in :func:`bernoulli_regret`.
    T : int
        Horizon T >= 1.
    bracket : (float, float)
        Box for every ε_t (the upper end stands for "almost no privacy").
    maxiter : int
        Limit on the objective evaluations of each TNC run.

    Returns
    -------
    ScheduleOptimum
        ``.epsilon`` (shape (T,)), ``.regret``, ``.constant`` (ε*), ...

    Examples
    --------
    >>> res = optimal_epsilon_schedule(0.3, 0.6, T=20, n0=100)
    >>> bool(res.regret <= res.constant_regret), bool(res.epsilon[0] < res.epsilon[-1])
    (True, True)
    """
    T, lo, hi, maxiter, pb = _bern_args(q, r, T, n0, model, cap, mu, bracket, maxiter)
    e_star, const_regret = _bern_constant(pb, T, lo, hi)
    cands = {"constant": np.full(T, e_star)}
    if T > 1:
        cands["geometric"] = _bern_geometric(pb, T, lo, hi, e_star, maxiter)[1]
    best_name, best_e, best_v = "constant", cands["constant"], const_regret
    for name, e0 in cands.items():
        v0 = float(_bern_regret(e0, pb))
        if v0 < best_v:
            best_name, best_e, best_v = name, e0, v0
        e1 = np.exp(_descend(lambda x: _bern_value_grad(x, pb, lo, hi), np.log(e0), lo, hi, maxiter))
        v1 = float(_bern_regret(e1, pb))
        if v1 < best_v:
            best_name, best_e, best_v = name, e1, v1
    return _bern_result(best_e, pb, e_star, const_regret, "free", {"start": best_name})


def _bern_two_phase(pb, T, lo, hi, e_star, maxiter, switches):
    """Best (first, then, switch): a log grid over every switch at once, then
    TNC for the three best switches; the best constant is a candidate."""
    grid = np.linspace(lo, hi, 41)
    vals = _bern_regret(np.exp(_two_phase_grid(switches, T, grid)), pb)
    best = (float(_bern_regret(np.full(T, e_star), pb)), e_star, e_star, 0)
    for k, x0 in _top_switches(vals, switches, grid):
        first = np.arange(T) < k

        def fun(x):
            return float(_bern_regret(np.exp(np.where(first, x[0], x[1])), pb))

        x = _box_minimize(fun, x0, [(lo, hi)] * 2, maxiter, jac=False)
        v = fun(x)
        if v < best[0]:
            best = (v, math.exp(x[0]), math.exp(x[1]), int(k))
    v, a, b, k = best
    return (a, b, k), np.where(np.arange(T) < k, a, b).astype(float)


def _bern_geometric(pb, T, lo, hi, e_star, maxiter):
    k = np.arange(T, dtype=float)
    span = max(T - 1, 1)
    starts = np.linspace(lo, hi, 31)
    ratios = np.linspace(-8.0 / span, 8.0 / span, 33)
    S, Q = np.meshgrid(starts, ratios, indexing="ij")
    logs = np.clip(S[..., None] + Q[..., None] * k, lo, hi)
    vals = _bern_regret(np.exp(logs), pb)
    i, j = np.unravel_index(int(np.argmin(vals)), vals.shape)

    def fun(x):
        return float(_bern_regret(np.exp(np.clip(x[0] + x[1] * k, lo, hi)), pb))

    x = _box_minimize(fun, np.array([starts[i], ratios[j]]), [(lo, hi), (-10.0 / span, 10.0 / span)], maxiter,
                      jac=False)
    e = np.exp(np.clip(x[0] + x[1] * k, lo, hi))
    if fun(x) >= float(_bern_regret(np.full(T, e_star), pb)):
        return (e_star, 1.0), np.full(T, e_star)
    return (math.exp(x[0]), math.exp(x[1])), e


def optimal_epsilon_two_phase(q, r, *, T, n0, model="leak", cap=20000, mu=(0.0, 1.0), bracket=_EPS_BRACKET,
                              maxiter=100, switches=None):
    """Best two-phase ε schedule: ε_first for ``switch`` rounds, then ε_then (Bernoulli model).

    A 41 x 41 log grid of (ε_first, ε_then) for every switch k, then
    TNC from the best grid points of the three best k; the best
    constant is a candidate.

    Parameters
    ----------
    q, r, T, n0, model, cap, mu, bracket, maxiter
        As in :func:`optimal_epsilon_schedule`.
    switches : array_like of int, optional
        Candidate lengths of the first phase (default 1..T-1).

    Returns
    -------
    ScheduleOptimum
        ``family="two_phase"``, ``params={"first", "then", "switch"}``.

    Examples
    --------
    >>> res = optimal_epsilon_two_phase(0.3, 0.6, T=20, n0=100)
    >>> bool(res.params["first"] < res.params["then"])   # protect first (small ε), then exploit
    True
    """
    T, lo, hi, maxiter, pb = _bern_args(q, r, T, n0, model, cap, mu, bracket, maxiter)
    if switches is None:
        switches = np.arange(1, T)
    switches = [check_int("switches", k, low=0, high=T) for k in np.atleast_1d(switches)]
    e_star, const_regret = _bern_constant(pb, T, lo, hi)
    (a, b, k), eps = _bern_two_phase(pb, T, lo, hi, e_star, maxiter, switches)
    return _bern_result(eps, pb, e_star, const_regret, "two_phase", {"first": a, "then": b, "switch": k})


def optimal_epsilon_geometric(q, r, *, T, n0, model="leak", cap=20000, mu=(0.0, 1.0), bracket=_EPS_BRACKET,
                              maxiter=100):
    """Best geometric ε schedule ε_t = ε_1 ρ^{t-1} (Bernoulli model).

    A log grid of (ε_1, ρ) then TNC; the best constant is a candidate.

    Parameters
    ----------
    q, r, T, n0, model, cap, mu, bracket, maxiter
        As in :func:`optimal_epsilon_schedule`.

    Returns
    -------
    ScheduleOptimum
        ``family="geometric"``, ``params={"start", "ratio"}``.

    Examples
    --------
    >>> res = optimal_epsilon_geometric(0.3, 0.6, T=20, n0=100)
    >>> bool(res.params["ratio"] > 1)   # the budget grows over time
    True
    """
    T, lo, hi, maxiter, pb = _bern_args(q, r, T, n0, model, cap, mu, bracket, maxiter)
    e_star, const_regret = _bern_constant(pb, T, lo, hi)
    (a, rho), eps = _bern_geometric(pb, T, lo, hi, e_star, maxiter)
    return _bern_result(eps, pb, e_star, const_regret, "geometric", {"start": a, "ratio": rho})


# --------------------------------------------------------------------------
# theory next to simulation, and where schedules help
# --------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ScheduleComparison:
    """Regret of several schedules, from the mean field and from simulation.

    Attributes
    ----------
    names : tuple of str
        Schedule names, in the order given.
    schedules : numpy.ndarray, shape (K, T)
        The schedules (γ or ε per round).
    mean_field : numpy.ndarray, shape (K,)
        Mean-field regret of each schedule.
    simulated : numpy.ndarray, shape (K,)
        Mean over trials of the simulated regret (sum over rounds of the
        realized squared error).
    se : numpy.ndarray, shape (K,)
        Its standard error.
    difference, difference_se : numpy.ndarray, shape (K,)
        Simulated regret minus that of ``reference``, averaged over paired
        trials (every schedule is run with the same seed), and its standard
        error.
    reference : str
        Name of the reference schedule.
    trials : int
        Number of simulated runs per schedule.
    """

    names: tuple
    schedules: np.ndarray
    mean_field: np.ndarray
    simulated: np.ndarray
    se: np.ndarray
    difference: np.ndarray
    difference_se: np.ndarray
    reference: str
    trials: int


def _compare(names, scheds, mf, per_trial, reference, trials):
    ref = names.index(reference)
    diff = per_trial - per_trial[ref]
    root = np.sqrt(trials)
    return ScheduleComparison(tuple(names), scheds, np.asarray(mf, float), per_trial.mean(axis=1),
                              per_trial.std(axis=1, ddof=1) / root if trials > 1 else np.full(len(names), np.nan),
                              diff.mean(axis=1),
                              diff.std(axis=1, ddof=1) / root if trials > 1 else np.full(len(names), np.nan),
                              reference, trials)


def _check_named(schedules, T=None, reference=None):
    if not isinstance(schedules, dict) or not schedules:
        raise ValueError("schedules must be a non-empty dict {name: schedule}")
    names = list(schedules)
    if reference is None:
        reference = names[0]
    if reference not in schedules:
        raise ValueError(f"reference must be one of {names}; got {reference!r}")
    return names, reference


def compare_schedules(schedules, q, r, tau, *, n0, d, R, trials=100, reference=None, mu=None, Sigma=None,
                      statistic="paper", cap=20000, collapse="floor", seed=None):
    """Mean-field and simulated regret of named γ schedules (Gaussian model, Algorithm 1).

    Each schedule is simulated with :func:`perfpriv.gaussian.simulate`
    (``trials`` runs, all schedules with the same ``seed``: paired trials)
    and its per-trial regret is the sum over the T rounds of the squared
    Mahalanobis error of the releases. The mean field is
    :func:`mean_field_regret`.

    Rounds after a collapse (population at most 1) are counted as in the
    γ* search of :func:`perfpriv.optimize.optimal_gamma_empirical`:
    ``collapse="floor"`` (default) charges each the expected error of a
    one-record release at that round's γ, (γ_t² Tr Σ⁻¹ + d), which is what
    the mean field's population floor of one user charges, so the two
    columns compare like with like; ``"repeat"`` sums the errors
    :func:`perfpriv.gaussian.simulate` records (after a collapse, the last
    release repeated).

    Parameters
    ----------
    schedules : dict of str to array_like
        Name -> schedule γ_1..γ_T (all of the same length T).
    q, r, tau, n0, d, R, mu, Sigma, statistic, cap
        As in :func:`mean_field_regret`.
    trials : int
        Simulated runs per schedule (>= 2 for standard errors).
    reference : str, optional
        Schedule the differences are taken against (default: the first).
    collapse : {"floor", "repeat"}
        Cost of the rounds after a collapse (see above).
    seed : None, int, SeedSequence or Generator
        Randomness of the simulations.

    Returns
    -------
    ScheduleComparison

    Examples
    --------
    >>> cmp = compare_schedules({"constant": [1.0] * 3, "decay": [2.0, 1.0, 0.5]}, 0.3, 0.6, 0.02,
    ...                         n0=100, d=12, R=10, trials=5, seed=0)
    >>> cmp.simulated.shape, cmp.reference
    ((2,), 'constant')
    """
    names, reference = _check_named(schedules, reference=reference)
    scheds = np.stack([_check_gammas(schedules[k], name=f"schedules[{k!r}]") for k in names])
    trials = check_int("trials", trials, low=1)
    collapse = check_choice("collapse", collapse, ("floor", "repeat"))
    mf = mean_field_regret(scheds, q, r, tau, n0=n0, d=d, R=R, mu=mu, Sigma=Sigma, statistic=statistic,
                           cap=cap)
    root = _bern._root_seed_sequence(seed)
    per_trial = []
    for g in scheds:
        # a fresh copy of the root for every schedule (spawning mutates a SeedSequence): paired trials
        sim = _gauss.simulate(g, tau, q, r, T=g.size, n0=n0, d=d, R=R, trials=trials, mu=mu, Sigma=Sigma,
                              statistic=statistic, cap=cap, seed=_bern._child_seed(root))
        if collapse == "repeat":
            per_trial.append(sim.error.sum(axis=1))
        else:
            one_record = _gauss.mahalanobis_error(g, 1, Sigma, d=d)
            per_trial.append(_gs._cumulative(sim, one_record, g.size, "floor"))
    per_trial = np.stack(per_trial)
    return _compare(names, scheds, np.atleast_1d(mf), per_trial, reference, trials)


def compare_epsilon_schedules(schedules, q, r, *, n0, trials=100, reference=None, model="leak", cap=20000,
                              mu=(0.0, 1.0), seed=None):
    """Mean-field and simulated regret of named ε schedules (Bernoulli model).

    One call of :func:`perfpriv.bernoulli.simulate` with ``per_round=True``
    for all schedules (the μ_t path is shared); per-trial regret is the sum
    over rounds of ``(μ̂_t - μ_t)²``. ``np.inf`` entries mean no privacy.

    Parameters
    ----------
    schedules : dict of str to array_like
        Name -> schedule ε_1..ε_T.
    q, r, n0, model, cap, mu
        As in :func:`bernoulli_regret`.
    trials : int
        Simulated runs.
    reference : str, optional
        Schedule the differences are taken against (default: the first).
    seed : None, int, SeedSequence or Generator
        Randomness.

    Returns
    -------
    ScheduleComparison

    Examples
    --------
    >>> cmp = compare_epsilon_schedules({"eps=1": [1.0] * 20, "none": [np.inf] * 20}, 0.3, 0.6, n0=100,
    ...                                 trials=20, seed=0)
    >>> bool(cmp.mean_field[1] > cmp.mean_field[0])   # over 20 rounds privacy wins
    True
    """
    names, reference = _check_named(schedules, reference=reference)
    eps = np.stack([np.asarray(_bern._check_epsilon(schedules[k], positive=True, name=f"schedules[{k!r}]"),
                               dtype=float) for k in names])
    if eps.ndim != 2:
        raise ValueError("schedules must all be 1-D arrays of the same length T")
    trials = check_int("trials", trials, low=1)
    mf = bernoulli_regret(eps, q, r, n0=n0, model=model, cap=cap, mu=mu)
    run = _bern.simulate(eps, q, r, T=eps.shape[1], n0=n0, trials=trials, model=model, cap=cap, mu=mu,
                         seed=seed, per_round=True)
    per_trial = run.sq_error.sum(axis=-1)
    return _compare(names, eps, np.atleast_1d(mf), per_trial, reference, trials)


@dataclass(frozen=True, eq=False)
class GainMap:
    """How much the optimal schedule gains over the best constant, on a (q, r) grid.

    Attributes
    ----------
    qs, rs : numpy.ndarray
        Grid axes.
    gain : numpy.ndarray, shape (len(qs), len(rs))
        1 - regret(optimal schedule) / regret(best constant).
    constant : numpy.ndarray
        γ* (or ε*) of each cell.
    first, last : numpy.ndarray
        First and last value of the optimal schedule in each cell.
    T, tau : int, float
        Horizon and threshold (tau is NaN for the Bernoulli model).
    """

    qs: np.ndarray
    rs: np.ndarray
    gain: np.ndarray
    constant: np.ndarray
    first: np.ndarray
    last: np.ndarray
    T: int
    tau: float


def gain_map(qs, rs, tau=None, *, T, n0, d=None, R=None, model="bernoulli", cap=20000, **kwargs):
    """Gain of the optimal schedule over the best constant on a (q, r) grid.

    Parameters
    ----------
    qs, rs : array_like
        Values of q and r (1-D).
    tau : float
        τ (Gaussian model only).
    T, n0, cap
        Horizon, initial population, population cap.
    d, R : int, float
        Data model (Gaussian model only).
    model : {"gaussian", "bernoulli"}
        Which model: :func:`optimal_schedule` with ``starts="constant"`` and
        ``polish=0`` (the fast setting, cells in about 0.3 s at T = 10), or
        :func:`optimal_epsilon_schedule`.
    **kwargs
        Passed to the optimizer.

    Returns
    -------
    GainMap

    Examples
    --------
    >>> m = gain_map([0.3], [0.6], T=10, n0=100)
    >>> bool(m.gain[0, 0] > 0)
    True
    """
    model = check_choice("model", model, ("gaussian", "bernoulli"))
    if model == "gaussian" and tau is None:
        raise ValueError("tau must be given (a threshold > 0) for model='gaussian'")
    qs = np.atleast_1d(np.asarray(check_probability("qs", qs), dtype=float))
    rs = np.atleast_1d(np.asarray(check_probability("rs", rs), dtype=float))
    shape = (qs.size, rs.size)
    gain, const, first, last = (np.empty(shape) for _ in range(4))
    for i, j in np.ndindex(shape):
        if model == "gaussian":
            opts = dict(starts="constant", polish=0)
            opts.update(kwargs)
            res = optimal_schedule(qs[i], rs[j], tau, T=T, n0=n0, d=d, R=R, cap=cap, **opts)
        else:
            res = optimal_epsilon_schedule(qs[i], rs[j], T=T, n0=n0, cap=cap, **kwargs)
        gain[i, j], const[i, j] = res.gain, res.constant
        first[i, j], last[i, j] = res.schedule[0], res.schedule[-1]
    return GainMap(qs, rs, gain, const, first, last, int(T), float("nan") if tau is None else float(tau))
