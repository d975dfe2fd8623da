r"""Optimal privacy schedules, for both models, on the engine's mean field.

The mean-field regret of a schedule -- the cumulative error of
:func:`perfpriv.engine.mean_field` with a :class:`perfpriv.engine.Schedule`
of levels and Algorithm 1's indexing (round t releases from :math:`N_{t-1}` users) --
is minimized over the schedule:

* :func:`optimal_schedule` (one free :math:`γ_t` per round), :func:`optimal_two_phase`
  ("protect then exploit") and :func:`optimal_geometric` for the Gaussian
  model;
* :func:`optimal_epsilon_schedule`, :func:`optimal_epsilon_two_phase` and
  :func:`optimal_epsilon_geometric` for randomized response.

How the free schedule is optimized
----------------------------------
A local descent on :math:`u_t = \log(\mathrm{level}_t)` (T variables in the box ``bracket``)
with the exact gradient of the mean-field recursion, computed by the
engine's adjoint pass (one forward and one backward pass, whatever T). The
descent is SciPy's bounded truncated Newton (TNC) rather than L-BFGS-B:
same optima here, but L-BFGS-B's BLAS calls on tiny vectors made it ~10x
slower on a busy machine.

For the Gaussian model each exact :math:`p_τ` costs a quadrature, so the search runs
on a bicubic spline of :math:`p_τ` over (log n, log γ), built once per (τ, data
model) and cached (error a few 1e-4 in p) and injected into the mean field
(``leak_probability=``, the one part of the recursion that may be
replaced); its optimum is then polished on the exact objective and every
reported regret is exact. The objective has kinks (where the cap or the
floor start to bind) and may have several local minima, so the search
starts from several schedules: the best constant, the best geometric and
the best two-phase schedules (grid searches on the surrogate). The result
is the best, by the exact regret, of all starts and local optima; since the
best constant is a candidate, the optimal schedule is never worse than it.

Why not dynamic programming over a discretized population (the state
:math:`N_{t-1}` is one number and the dynamics do not depend on t)? It would find
the global optimum of the discretized problem, but its interpolation error
in N is of the order of the few-percent gains being measured; the tests
check the descent against brute force over all schedules on a log grid for
T = 2 and 3 instead.

References
----------
Paper §3 (Lemma 2), Lemma 3, Lemma 8 and eq. 13, Lemma 9 and Remarks 2-3
(the constant γ*), §5 (discussion: time-varying privacy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize as _opt
from scipy.interpolate import RectBivariateSpline

from .. import engine
from .._validate import check_allocation, check_bracket, check_choice, check_int, check_probability, check_real
from ..behaviour import Memoryless, RULES
from ..bernoulli import RandomizedResponse
from ..gaussian import GaussianMean
from ._cells import GAMMA_SEARCH_RANGE, check_leak_options
from ._gamma import optimal_gamma

__all__ = [
    "ScheduleOptimum",
    "optimal_schedule",
    "optimal_two_phase",
    "optimal_geometric",
    "optimal_epsilon_schedule",
    "optimal_epsilon_two_phase",
    "optimal_epsilon_geometric",
]

_EPS_BRACKET = (1e-2, 50.0)
#: Where an :math:`ε_t` of a searched schedule may lie: below 1e-50 the flip probability's derivative
#: underflows (:math:`β^{3}` in the adjoint), above 500 cosh(ε/2)² nears the largest double (β is 0 to
#: working precision from ε ≈ 40 on, so the upper end loses nothing).
EPS_RANGE = (1e-50, 500.0)
#: Most objective evaluations one TNC run may be given (``maxiter``, ``polish``): each is a
#: mean-field pass, so 10**6 of them is already hours; SciPy's counter is a C int.
MAX_EVALUATIONS = 10**6


@dataclass(frozen=True, eq=False)
class ScheduleOptimum:
    """An optimized privacy schedule and its mean-field regret.

    Attributes
    ----------
    schedule : numpy.ndarray, shape (T,)
        One privacy level per round (:math:`γ_t` or :math:`ε_t`); round t uses
        ``schedule[t-1]``. Also ``.gamma`` / ``.epsilon``; ``.as_schedule()``
        wraps it for the simulators.
    regret : float
        Mean-field regret of ``schedule``.
    population : numpy.ndarray, shape (T + 1,)
        Mean-field population :math:`N_0`, ..., :math:`N_T` along the schedule.
    constant : float
        The best constant level (γ* or ε*) under the same objective.
    constant_regret : float
        Regret of the constant schedule at ``constant``.
    family : str
        ``"free"``, ``"two_phase"`` or ``"geometric"``.
    params : dict
        Parameters of the family: ``{"first", "then", "switch"}`` (two
        phase), ``{"start", "ratio"}`` (geometric), ``{"start": name}``
        (free: which start led to the optimum).
    parameter : str
        ``"gamma"`` or ``"epsilon"``.
    settings : dict
        Provenance (q, r, tau, n0, cap, floor, bracket, ...).
    """

    schedule: np.ndarray
    regret: float
    population: np.ndarray
    constant: float
    constant_regret: float
    family: str
    params: dict = field(default_factory=dict)
    parameter: str = "gamma"
    settings: dict = field(default_factory=dict)

    @property
    def gamma(self) -> np.ndarray:
        """The schedule :math:`γ_1..γ_T` (Gaussian model)."""
        if self.parameter != "gamma":
            raise AttributeError("this is an epsilon schedule (randomized response): use .epsilon")
        return self.schedule

    @property
    def epsilon(self) -> np.ndarray:
        """The schedule :math:`ε_1..ε_T` (randomized response)."""
        if self.parameter != "epsilon":
            raise AttributeError("this is a gamma schedule (Gaussian model): use .gamma")
        return self.schedule

    @property
    def gain(self) -> float:
        """Relative regret reduction over the best constant, 1 − regret / constant_regret."""
        return float(1.0 - self.regret / self.constant_regret)

    def as_schedule(self) -> engine.Schedule:
        """The schedule as a :class:`perfpriv.engine.Schedule`."""
        return engine.Schedule(self.schedule)

    def __repr__(self) -> str:
        return (f"ScheduleOptimum({self.parameter}, family={self.family!r}, T={self.schedule.size}, "
                f"regret={self.regret:.6g}, constant={self.constant:.6g}, gain={self.gain:.4f})")


# --------------------------------------------------------------------------
# the problem: a mechanism factory, a behaviour and the population bounds
# --------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class _Problem:
    make: object          # levels -> mechanism
    behaviour: Memoryless
    n0: int
    cap: float | None
    floor: float | None
    parameter: str
    key: tuple            # identifies the p_τ model (surrogate cache)
    settings: dict
    make_coarse: object = None   # levels -> mechanism whose p_τ the surrogate is fitted to (None: make)

    def path(self, levels, *, gradient=False, leak_probability=None):
        """Mean-field path of schedules ``levels`` (shape (T,) or (L, T))."""
        return engine.mean_field(self.make(engine.Schedule(levels)), self.behaviour, T=np.shape(levels)[-1],
                                 n0=self.n0, cap=self.cap, floor=self.floor, rounds="algorithm",
                                 leak_probability=leak_probability, gradient=gradient)

    def regret(self, levels, leak_probability=None):
        """Regret of schedules of shape (..., T) (batched: one mean-field pass)."""
        arr = np.asarray(levels, float)
        flat = arr.reshape(-1, arr.shape[-1])
        vals = np.atleast_1d(self.path(flat, leak_probability=leak_probability).cumulative_error)
        return vals.reshape(arr.shape[:-1])


def _check_cap_floor(cap, floor, n0):
    if cap is not None:
        cap = check_real("cap", cap, low=1, scalar=True)
        if cap < n0:
            raise ValueError(f"cap must be >= n0; got cap={cap!r}, n0={n0!r}")
    if floor is not None:
        floor = check_real("floor", floor, low=0, scalar=True)
    return cap, floor


def _gauss_problem(q, r, tau, n0, d, R, mu, Sigma, statistic, cap, floor, method, samples, seed):
    q = check_probability("q", q, scalar=True)
    r = check_probability("r", r, scalar=True)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    n0 = check_int("n0", n0, low=2)
    cap, floor = _check_cap_floor(cap, floor, n0)
    # seed None -> 0: a Monte Carlo p_τ is then one fixed function, shared by every call
    method, samples, seed = check_leak_options(method, samples, seed)
    opts = dict(tau=tau, d=d, R=R, mu=mu, Sigma=Sigma, statistic=statistic, leak_method=method,
                leak_samples=samples, leak_seed=0 if seed is None else seed)
    proto = GaussianMean(1.0, **opts)
    key = (tau, proto.d, proto.R, proto.mu.tobytes(), proto.Sigma.tobytes(), proto.statistic, method, samples,
           proto.leak_seed)
    settings = dict(q=q, r=r, tau=tau, n0=n0, d=proto.d, R=proto.R, statistic=proto.statistic, cap=cap,
                    floor=floor)
    # the surrogate only guides the search: a Monte Carlo p_τ (clipped data) is fitted from
    # SURROGATE_SAMPLES records per population instead of the exact objective's (the quadrature ignores it)
    coarse = dict(opts, leak_samples=min(samples or SURROGATE_SAMPLES, SURROGATE_SAMPLES))
    return _Problem(lambda lv: GaussianMean(lv, **opts), Memoryless(q=q, r=r), n0, cap, floor, "gamma", key,
                    settings, lambda lv: GaussianMean(lv, **coarse))


# --------------------------------------------------------------------------
# the surrogate of p_τ
# --------------------------------------------------------------------------
#: Records per population of a Monte Carlo :math:`p_τ` behind the surrogate (clipped data): its 72 x 90 grid
#: then costs seconds, not minutes, and its error is the Monte Carlo's (about 1e-3 in p) instead of a few 1e-4.
SURROGATE_SAMPLES = 20_000


class _Surrogate:
    """Bicubic spline of :math:`p_τ` over (log n, log γ): a fast stand-in used only to *search*.

    Built from one vectorized evaluation of :math:`p_τ` on a 72 x 90 grid (n from 1
    to the largest reachable population, γ over the bracket); its error is a
    few 1e-4 in p where :math:`p_τ` is a quadrature, and the Monte Carlo's standard
    error (from :data:`SURROGATE_SAMPLES` records per population) where the
    data are clipped. Every returned schedule is polished and evaluated with
    the objective's own :math:`p_τ`.
    """

    def __init__(self, mech, lo, hi, upper):
        ln = np.linspace(0.0, math.log(upper), 72)
        lg = np.linspace(lo - 0.05, hi + 0.05, 90)
        n_grid = np.exp(ln)[:, None] * np.ones(lg.size)
        g_grid = np.exp(lg)[None, :] * np.ones((ln.size, 1))
        P = mech.leak_probability(n_grid, g_grid)
        self.spline = RectBivariateSpline(ln, lg, P, kx=3, ky=3, s=0)

    def p(self, n, level):
        """p at populations ``n`` and levels ``level`` (arrays of one shape)."""
        x = np.log(np.maximum(np.asarray(n, float), 1.0))
        return np.clip(self.spline.ev(x, np.log(np.asarray(level, float))), 0.0, 1.0)

    def p_grad(self, n, level):
        """(p, dp/dlog n, dp/dlog γ)."""
        x = np.log(np.maximum(np.asarray(n, float), 1.0))
        u = np.log(np.asarray(level, float))
        return (np.clip(self.spline.ev(x, u), 0.0, 1.0), self.spline.ev(x, u, dx=1), self.spline.ev(x, u, dy=1))


_SURROGATES: dict = {}


def _surrogate(pb, lo, hi, T):
    """The (cached) surrogate of :math:`p_τ` for this data model, τ and bracket."""
    upper = pb.cap if pb.cap is not None else pb.n0 * (1.0 + pb.behaviour.r) ** T
    upper = float(max(upper, 4.0 * pb.n0))
    key = pb.key + (lo, hi, upper)
    if key not in _SURROGATES:
        if len(_SURROGATES) >= 32:
            _SURROGATES.pop(next(iter(_SURROGATES)))
        _SURROGATES[key] = _Surrogate((pb.make_coarse or pb.make)(1.0), lo, hi, upper)
    return _SURROGATES[key]


# --------------------------------------------------------------------------
# local descent
# --------------------------------------------------------------------------
def _value_and_grad(u, pb, sur=None):
    """Regret of the schedule exp(u) and its gradient in u = log(level), by the engine's adjoint."""
    path = pb.path(np.exp(u), gradient=True, leak_probability=None if sur is None else sur.p_grad)
    return float(path.cumulative_error), np.asarray(path.gradient, float)


def _box_minimize(fun, x0, bounds, maxfun, jac=True):
    """Local minimum of ``fun`` in a box: bounded truncated Newton (SciPy's TNC)."""
    res = _opt.minimize(fun, np.asarray(x0, float), jac=jac, method="TNC", bounds=bounds,
                        options=dict(maxfun=int(maxfun)))
    return np.clip(res.x, [b[0] for b in bounds], [b[1] for b in bounds])


def _descend(fun_grad, x0, lo, hi, maxiter, bounds=None):
    bounds = [(lo, hi)] * len(x0) if bounds is None else bounds
    return _box_minimize(fun_grad, x0, bounds, maxiter)


def _common_args(T, bracket, maxiter, polish=0, *, parameter="gamma"):
    T = check_int("T", T, low=1)
    check_allocation("the constant schedules of the search (121 x T levels)", 121.0 * T, name="T")
    lo, hi = check_bracket(bracket, within=GAMMA_SEARCH_RANGE if parameter == "gamma" else EPS_RANGE, what=parameter)
    maxiter = check_int("maxiter", maxiter, low=1, high=MAX_EVALUATIONS)
    check_int("polish", polish, low=0, high=MAX_EVALUATIONS)
    return T, math.log(lo), math.log(hi), maxiter


def _result(levels, pb, const, const_regret, family, params):
    path = pb.path(np.asarray(levels, float))
    settings = dict(pb.settings, family=family)
    return ScheduleOptimum(np.asarray(levels, float), float(path.cumulative_error), path.population, const,
                           const_regret, family, params, pb.parameter, settings)


def _best_exact(cands, pb):
    """Name, schedule and exact regret of the best of several schedules (one batched pass)."""
    names = list(cands)
    vals = pb.regret(np.stack([cands[k] for k in names]))
    i = int(np.argmin(vals))
    return names[i], cands[names[i]], float(vals[i])


# Reduced parametrizations x -> u = log(level) (shape (T,)) and the chain rule back.
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


def _regret_on(pb, sur):
    """Batched regret on the surrogate (None: exact)."""
    return lambda levels: pb.regret(levels, leak_probability=None if sur is None else sur.p)


def _search_geometric(pb, sur, T, lo, hi, maxiter, polish, ratio_span=10.0):
    """Best (log level_1, log ρ): grid (on the surrogate if any), TNC, exact polish."""
    span = max(T - 1, 1)
    rb = ratio_span / span
    starts = np.linspace(lo, hi, 31)
    ratios = np.linspace(-rb, rb, 41)
    S, Q = np.meshgrid(starts, ratios, indexing="ij")
    k = np.arange(T, dtype=float)
    vals = _regret_on(pb, sur)(np.exp(np.clip(S[..., None] + Q[..., None] * k, lo, hi)))
    i, j = np.unravel_index(int(np.argmin(vals)), vals.shape)
    to_u, pull = _geometric_map(T, lo, hi)
    bounds = [(lo, hi), (-rb, rb)]
    x = _fit_reduced(to_u, pull, [starts[i], ratios[j]], pb, sur, lo, hi, maxiter, bounds)
    if polish and sur is not None:
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
    """Best (log first, log then, switch): grid over every switch at once, TNC for the three
    best switches, exact choice, exact polish."""
    grid = np.linspace(lo, hi, 41)
    vals = _regret_on(pb, sur)(np.exp(_two_phase_grid(switches, T, grid)))
    fits = {}
    for k, x0 in _top_switches(vals, switches, grid):
        to_u, pull = _two_phase_map(T, k)
        fits[k] = _fit_reduced(to_u, pull, x0, pb, sur, lo, hi, maxiter, None)
    k, _, _ = _best_exact({k: np.exp(_two_phase_map(T, k)[0](x)) for k, x in fits.items()}, pb)
    to_u, pull = _two_phase_map(T, k)
    x = fits[k]
    if polish and sur is not None:
        x = _fit_reduced(to_u, pull, x, pb, None, lo, hi, polish, None)
    return x, int(k), np.exp(to_u(x))


# --------------------------------------------------------------------------
# Gaussian model
# --------------------------------------------------------------------------
def _gauss_constant(pb, T, bracket, q, r, tau, d, R, mu, Sigma, statistic, method, samples, seed):
    """γ* of the constant schedule (the same objective: mean field, Algorithm 1's indexing)."""
    res = optimal_gamma(q=q, r=r, tau=tau, T=T, n0=pb.n0, d=d, R=R, mu=mu, Sigma=Sigma, statistic=statistic,
                        objective="mean_field", cap=pb.cap, floor=pb.floor, rounds="algorithm", bracket=bracket,
                        method=method, samples=samples, seed=0 if seed is None else seed)
    g = float(res.gamma)
    return g, float(pb.regret(np.full(T, g)))


_GAUSS_PARAMS = r"""
    q, r : float
        Leave probability of a leaked user and recruit probability of a
        non-leaked one, in [0, 1].
    tau : float
        Leak threshold τ > 0 (keyword-only).
    T : int
        Horizon (number of rounds) T >= 1.
    n0 : int
        :math:`N_0 \ge 2`.
    d, R, mu, Sigma, statistic
        Data model (:class:`perfpriv.gaussian.GaussianMean`).
    cap, floor : float or None
        Population clip of the mean field (20000 and 1).
    bracket : (float, float)
        Box for every :math:`γ_t` (and for γ*), inside [1e-99, 1e99] (within the
        mechanism's range ``perfpriv.gaussian.GAMMA_RANGE``, with a margin for
        the search's steps in log γ).
    maxiter : int
        Limit on the objective evaluations of each TNC run on the surrogate,
        in [1, 10**6].
    polish : int
        Limit on the exact objective evaluations of the final TNC run, in
        [0, 10**6] (0: no polish; the result is still evaluated exactly).
    method, samples, seed
        Evaluation of :math:`p_τ`; a Monte Carlo :math:`p_τ` uses one fixed seed (``None``
        means 0), so that the regret is a fixed function of the schedule."""


def optimal_schedule(*, q, r, tau, T, n0, d, R, mu=None, Sigma=None, statistic="paper", cap=20000, floor=1,
                     bracket=(1e-2, 1e3), maxiter=200, polish=40, starts="auto", method="auto", samples=None,
                     seed=None):
    r"""The γ schedule (one free value per round) minimizing the mean-field regret.

    TNC on :math:`\log γ_t` with the adjoint gradient (module docstring): first on a
    spline surrogate of :math:`p_τ` from several starts, then on the exact objective
    from the best of them. The result is the best, by the exact regret, of
    the starts, the surrogate optima and the polished one; since the best
    constant γ* is a start, ``regret <= constant_regret`` always.

    Parameters
    ----------%s
    starts : "auto" or "constant"
        ``"auto"``: the best constant, the best geometric and the best
        two-phase schedules (found on the surrogate); ``"constant"``: the
        best constant only (faster; used by the explorer).

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
    >>> res = optimal_schedule(q=0.3, r=0.6, tau=0.02, T=4, n0=200, d=12, R=10)
    >>> bool(res.regret <= res.constant_regret), res.gamma.shape
    (True, (4,))
    >>> bool(res.gamma[0] > res.gamma[-1])   # more noise first, less later
    True
    """
    T, lo, hi, maxiter = _common_args(T, bracket, maxiter, polish)
    starts = check_choice("starts", starts, ("auto", "constant"))
    pb = _gauss_problem(q, r, tau, n0, d, R, mu, Sigma, statistic, cap, floor, method, samples, seed)
    g_star, const_regret = _gauss_constant(pb, T, bracket, q, r, tau, d, R, mu, Sigma, statistic, method,
                                           samples, seed)
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
    if float(pb.regret(best)) > const_regret:  # (cannot happen: the constant is a candidate)
        name, best = "constant/start", np.full(T, g_star)
    return _result(best, pb, g_star, const_regret, "free", {"start": name.split("/")[0]})


optimal_schedule.__doc__ = optimal_schedule.__doc__ % _GAUSS_PARAMS


def optimal_two_phase(*, q, r, tau, T, n0, d, R, mu=None, Sigma=None, statistic="paper", cap=20000, floor=1,
                      bracket=(1e-2, 1e3), maxiter=100, polish=20, switches=None, method="auto", samples=None,
                      seed=None):
    """Best "protect then exploit" schedule: γ_first for ``switch`` rounds, then γ_then.

    For every switch round k (``switches``, default 1..T−1): a 41 x 41 log
    grid of (γ_first, γ_then) on the spline surrogate of :math:`p_τ`; for the three
    best k, TNC on the surrogate; the best of them by the exact regret is
    polished on the exact objective. A constant schedule is a two-phase
    schedule and the best constant is kept as a candidate:
    ``regret <= constant_regret``. A one-round horizon has no switch: the
    best constant is returned.

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
    >>> res = optimal_two_phase(q=0.3, r=0.6, tau=0.02, T=6, n0=200, d=12, R=10)
    >>> bool(res.params["first"] > res.params["then"])
    True
    """
    T, lo, hi, maxiter = _common_args(T, bracket, maxiter, polish)
    switches = _check_switches(switches, T)
    pb = _gauss_problem(q, r, tau, n0, d, R, mu, Sigma, statistic, cap, floor, method, samples, seed)
    g_star, const_regret = _gauss_constant(pb, T, bracket, q, r, tau, d, R, mu, Sigma, statistic, method,
                                           samples, seed)
    if not switches:
        return _result(np.full(T, g_star), pb, g_star, const_regret, "two_phase",
                       {"first": g_star, "then": g_star, "switch": 0})
    sur = _surrogate(pb, lo, hi, T)
    x, k, g = _search_two_phase(pb, sur, T, lo, hi, maxiter, polish, switches)
    a, b = float(math.exp(x[0])), float(math.exp(x[1]))
    if float(pb.regret(g)) >= const_regret:
        a, b, k, g = g_star, g_star, 0, np.full(T, g_star)
    return _result(g, pb, g_star, const_regret, "two_phase", {"first": a, "then": b, "switch": k})


optimal_two_phase.__doc__ = optimal_two_phase.__doc__ % _GAUSS_PARAMS


def _check_switches(switches, T):
    if switches is None:
        switches = list(range(1, T))
    else:
        switches = [check_int("switches", k, low=0, high=T) for k in np.atleast_1d(switches)]
    check_allocation("the two-phase grid (switches x 41 x 41 x T levels)", len(switches) * 1681.0 * T,
                     name="switches" if len(switches) > T else "T")
    return switches


def optimal_geometric(*, q, r, tau, T, n0, d, R, mu=None, Sigma=None, statistic="paper", cap=20000, floor=1,
                      bracket=(1e-2, 1e3), maxiter=100, polish=20, method="auto", samples=None, seed=None):
    """Best geometric schedule :math:`γ_t = γ_1 ρ^{t-1}` (a smooth change of the noise).

    A log grid of :math:`(γ_1, ρ)` on the spline surrogate of :math:`p_τ`, TNC on the
    surrogate, then on the exact objective; ρ = 1 is the constant schedule
    and the best constant is kept as a candidate: ``regret <= constant_regret``.
    (:math:`γ_t` is kept inside ``bracket``.)

    Parameters
    ----------%s

    Returns
    -------
    ScheduleOptimum
        ``family="geometric"``, ``params={"start", "ratio"}``.

    Examples
    --------
    >>> res = optimal_geometric(q=0.3, r=0.6, tau=0.02, T=6, n0=200, d=12, R=10)
    >>> bool(res.params["ratio"] < 1)
    True
    """
    T, lo, hi, maxiter = _common_args(T, bracket, maxiter, polish)
    pb = _gauss_problem(q, r, tau, n0, d, R, mu, Sigma, statistic, cap, floor, method, samples, seed)
    g_star, const_regret = _gauss_constant(pb, T, bracket, q, r, tau, d, R, mu, Sigma, statistic, method,
                                           samples, seed)
    sur = _surrogate(pb, lo, hi, T)
    x, g = _search_geometric(pb, sur, T, lo, hi, maxiter, polish)
    a, rho = float(math.exp(x[0])), float(math.exp(x[1]))
    if float(pb.regret(g)) >= const_regret:
        a, rho, g = g_star, 1.0, np.full(T, g_star)
    return _result(g, pb, g_star, const_regret, "geometric", {"start": a, "ratio": rho})


optimal_geometric.__doc__ = optimal_geometric.__doc__ % _GAUSS_PARAMS


# --------------------------------------------------------------------------
# randomized response
# --------------------------------------------------------------------------
def _rr_problem(q, r, n0, model, cap, floor, mu):
    q = check_probability("q", q, scalar=True)
    r = check_probability("r", r, scalar=True)
    n0 = check_int("n0", n0, low=1)
    model = check_choice("model", model, RULES)
    cap, floor = _check_cap_floor(cap, floor, n0)
    RandomizedResponse(1.0, mu=mu)  # checks mu
    settings = dict(q=q, r=r, n0=n0, model=model, cap=cap, floor=floor, mu=mu)
    return _Problem(lambda lv: RandomizedResponse(lv, mu=mu), Memoryless(q=q, r=r, rule=model), n0, cap, floor,
                    "epsilon", ("rr",), settings)


def _rr_constant(pb, T, lo, hi):
    """ε* of the constant schedule: log grid, then bounded Brent."""
    grid = np.linspace(lo, hi, 121)
    vals = pb.regret(np.exp(grid)[:, None] * np.ones(T))
    i = int(np.argmin(vals))
    a, b = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = _opt.minimize_scalar(lambda x: float(pb.regret(np.full(T, math.exp(x)))),
                               bounds=(a, b), method="bounded", options=dict(xatol=1e-10))
    x = res.x if res.fun < vals[i] else grid[i]
    e = float(math.exp(x))
    return e, float(pb.regret(np.full(T, e)))


def optimal_epsilon_schedule(*, q, r, T, n0, model="leak", cap=20000, floor=1, mu=(0.0, 1.0),
                             bracket=_EPS_BRACKET, maxiter=200):
    r"""The ε schedule minimizing the mean-field regret :math:`Σ_t \mathbb{E}(\hat μ_t - μ_t)^{2}` (randomized response).

    TNC on :math:`\log ε_t` with the engine's adjoint gradient (exact derivatives of
    Lemma 1 and eq. 1), started from the best constant ε* and from the best
    geometric schedule; the best of starts and optima is returned, so
    ``regret <= constant_regret``.

    Parameters
    ----------
    q, r : float
        Leaving and recruiting probabilities in [0, 1].
    T : int
        Horizon T >= 1.
    n0 : int
        :math:`N_0 \ge 1`.
    model : {"leak", "agnostic"}
        Growth rule (§3 / appendix B).
    cap, floor : float or None
        Population clip of the mean field.
    mu : float or (float, float)
        Law of :math:`μ_t`.
    bracket : (float, float)
        Box for every :math:`ε_t` (the upper end stands for "almost no privacy"),
        inside [1e-50, 500] (``EPS_RANGE``).
    maxiter : int
        Limit on the objective evaluations of each TNC run, in [1, 10**6].

    Returns
    -------
    ScheduleOptimum
        ``.epsilon`` (shape (T,)), ``.regret``, ``.constant`` (ε*), ...

    Examples
    --------
    >>> res = optimal_epsilon_schedule(q=0.3, r=0.6, T=20, n0=100)
    >>> bool(res.regret <= res.constant_regret), bool(res.epsilon[0] < res.epsilon[-1])
    (True, True)
    """
    T, lo, hi, maxiter = _common_args(T, bracket, maxiter, parameter="epsilon")
    pb = _rr_problem(q, r, n0, model, cap, floor, mu)
    e_star, const_regret = _rr_constant(pb, T, lo, hi)
    cands = {"constant": np.full(T, e_star)}
    if T > 1:
        cands["geometric"] = _search_geometric(pb, None, T, lo, hi, maxiter, 0, ratio_span=8.0)[1]
    best_name, best_e, best_v = "constant", cands["constant"], const_regret
    for name, e0 in cands.items():
        v0 = float(pb.regret(e0))
        if v0 < best_v:
            best_name, best_e, best_v = name, e0, v0
        e1 = np.exp(_descend(lambda x: _value_and_grad(x, pb), np.log(e0), lo, hi, maxiter))
        v1 = float(pb.regret(e1))
        if v1 < best_v:
            best_name, best_e, best_v = name, e1, v1
    return _result(best_e, pb, e_star, const_regret, "free", {"start": best_name})


def optimal_epsilon_two_phase(*, q, r, T, n0, model="leak", cap=20000, floor=1, mu=(0.0, 1.0),
                              bracket=_EPS_BRACKET, maxiter=100, switches=None):
    """Best two-phase ε schedule: ε_first for ``switch`` rounds, then ε_then (randomized response).

    A 41 x 41 log grid of (ε_first, ε_then) for every switch k, then TNC
    from the best grid points of the three best k; the best constant is a
    candidate. A one-round horizon has no switch: the best constant is
    returned.

    Parameters
    ----------
    q, r, T, n0, model, cap, floor, mu, bracket, maxiter
        As in :func:`optimal_epsilon_schedule`.
    switches : array_like of int, optional
        Candidate lengths of the first phase (default 1..T−1).

    Returns
    -------
    ScheduleOptimum
        ``family="two_phase"``, ``params={"first", "then", "switch"}``.

    Examples
    --------
    >>> res = optimal_epsilon_two_phase(q=0.3, r=0.6, T=20, n0=100)
    >>> bool(res.params["first"] < res.params["then"])   # protect first (small ε), then exploit
    True
    """
    T, lo, hi, maxiter = _common_args(T, bracket, maxiter, parameter="epsilon")
    switches = _check_switches(switches, T)
    pb = _rr_problem(q, r, n0, model, cap, floor, mu)
    e_star, const_regret = _rr_constant(pb, T, lo, hi)
    if not switches:
        return _result(np.full(T, e_star), pb, e_star, const_regret, "two_phase",
                       {"first": e_star, "then": e_star, "switch": 0})
    x, k, eps = _search_two_phase(pb, None, T, lo, hi, maxiter, 0, switches)
    a, b = float(math.exp(x[0])), float(math.exp(x[1]))
    if float(pb.regret(eps)) >= const_regret:
        a, b, k, eps = e_star, e_star, 0, np.full(T, e_star)
    return _result(eps, pb, e_star, const_regret, "two_phase", {"first": a, "then": b, "switch": k})


def optimal_epsilon_geometric(*, q, r, T, n0, model="leak", cap=20000, floor=1, mu=(0.0, 1.0),
                              bracket=_EPS_BRACKET, maxiter=100):
    """Best geometric ε schedule :math:`ε_t = ε_1 ρ^{t-1}` (randomized response).

    A log grid of :math:`(ε_1, ρ)`, then TNC with the adjoint gradient; the best
    constant is a candidate.

    Parameters
    ----------
    q, r, T, n0, model, cap, floor, mu, bracket, maxiter
        As in :func:`optimal_epsilon_schedule`.

    Returns
    -------
    ScheduleOptimum
        ``family="geometric"``, ``params={"start", "ratio"}``.

    Examples
    --------
    >>> res = optimal_epsilon_geometric(q=0.3, r=0.6, T=20, n0=100)
    >>> bool(res.params["ratio"] > 1)   # the budget grows over time
    True
    """
    T, lo, hi, maxiter = _common_args(T, bracket, maxiter, parameter="epsilon")
    pb = _rr_problem(q, r, n0, model, cap, floor, mu)
    e_star, const_regret = _rr_constant(pb, T, lo, hi)
    x, eps = _search_geometric(pb, None, T, lo, hi, maxiter, 0, ratio_span=8.0)
    a, rho = float(math.exp(x[0])), float(math.exp(x[1]))
    if float(pb.regret(eps)) >= const_regret:
        a, rho, eps = e_star, 1.0, np.full(T, e_star)
    return _result(eps, pb, e_star, const_regret, "geometric", {"start": a, "ratio": rho})
