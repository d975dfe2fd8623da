r"""Optimal privacy schedules, for both models, on the engine's mean field (:func:`optimal_schedule`).

How the free schedule is optimized
----------------------------------
A local descent on :math:`u_t = \log(\mathrm{level}_t)` in the box ``bracket``, with the exact
gradient of the mean-field recursion from the engine's adjoint pass (one forward and one backward
pass, whatever T), by SciPy's bounded TNC (L-BFGS-B finds the same optima, but its BLAS calls on
tiny vectors made it ~10x slower on a busy machine).

For the Gaussian model each exact :math:`p_τ` costs a quadrature, so the search runs on a bicubic
spline of :math:`p_τ` over (log n, log γ), built once per (τ, data model) and cached (error a few 1e-4
in p), injected into the mean field (``leak_probability=``); its optimum is then polished on the exact
objective and every reported regret is exact. The objective has kinks (where the cap or the floor
start to bind) and may have several local minima, hence several starts (``search["starts"]`` of
:func:`optimal_schedule`); the result is the best, by the exact regret, of all starts and local optima.

Not dynamic programming over a discretized population: its interpolation error in N is of the
order of the few-percent gains measured. The tests check the descent against brute force over all
schedules on a log grid for T = 2 and 3 instead.

References
----------
Paper §3 (Lemma 2), Lemma 3, Lemma 8 and eq. 13, Lemma 9 and Remarks 2-3
(the constant γ*), §5 (discussion: time-varying privacy).
"""

from __future__ import annotations

import math
import numbers
import dataclasses
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize as _opt
from scipy.interpolate import RectBivariateSpline

from .. import engine
from .._validate import check_allocation, check_bracket, check_choice, check_int
from ..behaviour import Memoryless
from ..bernoulli import RandomizedResponse
from ..gaussian import GaussianMean
from ._cells import GAMMA_SEARCH_RANGE
from ._gamma import optimal_gamma

__all__ = ["ScheduleOptimum", "optimal_schedule"]

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
    constant, constant_regret : float
        The best constant level (γ* or ε*) under the same objective, and its regret.
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


# ---------- the problem: a mechanism factory, a behaviour and the population bounds
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
    constant_args: dict = field(default_factory=dict)   # optimal_gamma's mechanism and users (Gaussian model)

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


#: The keys of :func:`optimal_schedule`'s ``search`` and their defaults (None: the family's default).
SEARCH_SETTINGS = {"maxiter": None, "polish": None, "starts": "auto", "switches": None}


def _search_settings(search):
    """``(maxiter, polish, starts, switches)`` of :func:`optimal_schedule`'s ``search`` (values checked later)."""
    if search is None:
        search = {}
    if not isinstance(search, dict):
        raise TypeError(f"search must be None or a dict with keys among {sorted(SEARCH_SETTINGS)}; "
                        f"got {type(search).__name__}")
    unknown = sorted(map(str, set(search) - set(SEARCH_SETTINGS)))
    if unknown:
        raise ValueError(f"search has no key {unknown[0]!r}; its keys are {sorted(SEARCH_SETTINGS)}")
    return tuple(search.get(key, default) for key, default in SEARCH_SETTINGS.items())


def _cap_floor(policy, mechanism, n0):
    """The cap and floor of the mean field: ``policy``'s, unset fields from the paper's preset."""
    resolved = policy.resolve(mechanism, "paper", n0=n0)
    return resolved.cap, resolved.floor


def _users(behaviour, parameter):
    """The scalar q, r of ``behaviour`` (a :class:`perfpriv.behaviour.Memoryless` of one cell), checked."""
    if not isinstance(behaviour, Memoryless):
        raise TypeError(f"behaviour must be a perfpriv.behaviour.Memoryless; got {type(behaviour).__name__}")
    if behaviour.shape != ():
        raise ValueError(f"behaviour must have scalar q and r (one cell); got q and r of shape {behaviour.shape}")
    if parameter == "gamma" and behaviour.rule != "leak":
        raise ValueError(f"behaviour must have rule='leak' with the Gaussian mechanism (Algorithm 1: only users "
                         f"who did not leak recruit); got rule={behaviour.rule!r}")
    return float(behaviour.q), float(behaviour.r)


def _gauss_problem(mech, behaviour, n0, policy):
    q, r = _users(behaviour, "gamma")
    n0 = check_int("n0", n0, low=2)
    cap, floor = _cap_floor(policy, mech, n0)
    # a Monte Carlo p_τ uses one fixed seed: the mechanism's if it was given one, else 0 (a Key carries the
    # mechanism's seed through unchanged: GaussianMean derives leak_seed from the seed it is given)
    opts = mech.options()
    del opts["draw"]                               # the mean field draws nothing
    leak = opts["leak_method"]
    opts.update(statistic=opts["statistic"] or "paper",
                leak_method=dataclasses.replace(leak, seed=0 if leak.seed is None else leak.seed))
    proto = GaussianMean(**opts)
    key = (proto.tau, proto.d, proto.R, proto.mu.tobytes(), proto.Sigma.tobytes(), proto.statistic,
           proto.leak_method, proto.leak_samples, proto.leak_seed)
    settings = dict(q=q, r=r, tau=proto.tau, n0=n0, d=proto.d, R=proto.R, statistic=proto.statistic, cap=cap,
                    floor=floor)
    # the surrogate only guides the search: a Monte Carlo p_τ (clipped data) is fitted from
    # SURROGATE_SAMPLES records per population instead of the exact objective's (the quadrature ignores it)
    coarse = dict(opts, leak_method=dataclasses.replace(
        opts["leak_method"], samples=min(mech.leak_samples or SURROGATE_SAMPLES, SURROGATE_SAMPLES)))
    # optimal_gamma's model for γ* (the same data model, p_τ and seed): the mechanism without levels, the users
    const = dict(mechanism=GaussianMean(**opts), users=behaviour)
    return _Problem(lambda lv: GaussianMean(lv, **opts), behaviour, n0, cap, floor, "gamma", key, settings,
                    lambda lv: GaussianMean(lv, **coarse), const)


def _rr_problem(mech, behaviour, n0, policy):
    q, r = _users(behaviour, "epsilon")
    n0 = check_int("n0", n0, low=1)
    cap, floor = _cap_floor(policy, mech, n0)
    settings = dict(q=q, r=r, n0=n0, rule=behaviour.rule, cap=cap, floor=floor, mu=mech.mu)
    return _Problem(lambda lv: RandomizedResponse(lv, mu=mech.mu, clip_estimate=mech.clip_estimate), behaviour,
                    n0, cap, floor, "epsilon", ("rr",), settings)


# ----------------------------------------------------- the surrogate of p_τ
#: Records per population of a Monte Carlo :math:`p_τ` behind the surrogate (clipped data): its 72 x 90 grid
#: then costs seconds, not minutes, and its error is the Monte Carlo's (about 1e-3 in p) instead of the
#: quadrature's few 1e-4.
SURROGATE_SAMPLES = 20_000


class _Surrogate:
    """Bicubic spline of :math:`p_τ` over (log n, log γ): a fast stand-in used only to *search*.

    One vectorized evaluation of :math:`p_τ` on a 72 x 90 grid (n from 1 to the largest reachable
    population, γ over the bracket); for its error see :data:`SURROGATE_SAMPLES`.
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


# ------------------------------------------------------------ local descent
def _value_and_grad(u, pb, sur=None):
    """Regret of the schedule exp(u) and its gradient in u = log(level), by the engine's adjoint."""
    path = pb.path(np.exp(u), gradient=True, leak_probability=None if sur is None else sur.p_grad)
    return float(path.cumulative_error), np.asarray(path.gradient, float)


def _descend(fun_grad, x0, lo, hi, maxiter, bounds=None):
    """Local minimum of ``fun_grad`` (value, gradient) in ``bounds`` (default: [lo, hi]), by SciPy's TNC."""
    bounds = [(lo, hi)] * len(x0) if bounds is None else bounds
    res = _opt.minimize(fun_grad, np.asarray(x0, float), jac=True, method="TNC", bounds=bounds,
                        options=dict(maxfun=int(maxiter)))
    return np.clip(res.x, [b[0] for b in bounds], [b[1] for b in bounds])


def _common_args(T, bracket, maxiter, polish=0, *, parameter="gamma"):
    T = check_int("T", T, low=1)
    check_allocation("the constant schedules of the search (121 x T levels)", 121.0 * T, name="T")
    lo, hi = check_bracket(bracket, within=GAMMA_SEARCH_RANGE if parameter == "gamma" else EPS_RANGE, what=parameter)
    maxiter = check_int('search["maxiter"]', maxiter, low=1, high=MAX_EVALUATIONS)
    check_int('search["polish"]', polish, low=0, high=MAX_EVALUATIONS)
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


# --------------------------- the best constant level and the three families
def _constant(pb, T, bracket, lo, hi):
    """The best constant level (γ* by :func:`perfpriv.optimize.optimal_gamma`, ε* by a log grid then bounded
    Brent) and its regret, on the same objective (mean field, Algorithm 1's indexing)."""
    if pb.parameter == "gamma":
        model = pb.constant_args
        grid = GaussianMean(np.geomspace(*bracket, 61), **model["mechanism"].options())
        res = optimal_gamma(grid, model["users"], T=T, n0=pb.n0, objective="mean_field",
                            policy=engine.Policy(cap=pb.cap, floor=pb.floor), rounds="algorithm")
        level = float(res.gamma)
    else:
        grid = np.linspace(lo, hi, 121)
        vals = pb.regret(np.exp(grid)[:, None] * np.ones(T))
        i = int(np.argmin(vals))
        a, b = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
        res = _opt.minimize_scalar(lambda x: float(pb.regret(np.full(T, math.exp(x)))),
                                   bounds=(a, b), method="bounded", options=dict(xatol=1e-10))
        level = float(math.exp(res.x if res.fun < vals[i] else grid[i]))
    return level, float(pb.regret(np.full(T, level)))


def _free(pb, sur, T, lo, hi, maxiter, polish, starts, const, const_regret):
    """One free level per round: TNC on log level_t from the starts (Gaussian: on the surrogate, then polished)."""
    if sur is None:   # randomized response: exact descent from each start, the first best kept
        inits = {"constant": np.full(T, const)}
        if starts == "auto" and T > 1:
            inits["geometric"] = _search_geometric(pb, None, T, lo, hi, maxiter, 0, _RATIO_SPAN["epsilon"])[1]
        best_name, best, best_v = "constant", inits["constant"], const_regret
        for name, e0 in inits.items():
            for e in (e0, np.exp(_descend(lambda x: _value_and_grad(x, pb), np.log(e0), lo, hi, maxiter))):
                v = float(pb.regret(e))
                if v < best_v:
                    best_name, best, best_v = name, e, v
        return best, {"start": best_name}
    inits = {"constant": np.full(T, math.log(const))}
    if starts == "auto" and T > 1:
        inits["geometric"] = np.log(_search_geometric(pb, sur, T, lo, hi, maxiter, 0, _RATIO_SPAN["gamma"])[1])
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
        name, best = "constant/start", np.full(T, const)
    return best, {"start": name.split("/")[0]}


def _two_phase(pb, sur, T, lo, hi, maxiter, polish, switches, const, const_regret):
    """Protect then exploit: grid over every switch, TNC for the three best; the constant is kept."""
    if switches:
        x, k, levels = _search_two_phase(pb, sur, T, lo, hi, maxiter, polish, switches)
        if float(pb.regret(levels)) < const_regret:
            return levels, {"first": float(math.exp(x[0])), "then": float(math.exp(x[1])), "switch": k}
    return np.full(T, const), {"first": const, "then": const, "switch": 0}


def _geometric(pb, sur, T, lo, hi, maxiter, polish, const, const_regret):
    """level_t = level_1 ρ^(t-1): grid, TNC; the constant (ρ = 1) is kept."""
    x, levels = _search_geometric(pb, sur, T, lo, hi, maxiter, polish, _RATIO_SPAN[pb.parameter])
    if float(pb.regret(levels)) < const_regret:
        return levels, {"start": float(math.exp(x[0])), "ratio": float(math.exp(x[1]))}
    return np.full(T, const), {"start": const, "ratio": 1.0}


def _check_switches(switches, T):
    if switches is None:
        switches = list(range(1, T))
    else:
        # (object array: ragged nesting reaches check_int, which names switches, instead of numpy's message)
        switches = [check_int('search["switches"]', k, low=0, high=T)
                    for k in np.atleast_1d(np.asarray(switches, dtype=object))]
    check_allocation("the two-phase grid (switches x 41 x 41 x T levels)", len(switches) * 1681.0 * T,
                     name='search["switches"]' if len(switches) > T else "T")
    return switches


#: The families of :func:`optimal_schedule`.
FAMILIES = ("free", "two_phase", "geometric")
#: Default (bracket, maxiter, polish) by searched level and family.
_DEFAULTS = {("gamma", "free"): ((1e-2, 1e3), 200, 40), ("gamma", "two_phase"): ((1e-2, 1e3), 100, 20),
             ("gamma", "geometric"): ((1e-2, 1e3), 100, 20), ("epsilon", "free"): (_EPS_BRACKET, 200, 0),
             ("epsilon", "two_phase"): (_EPS_BRACKET, 100, 0), ("epsilon", "geometric"): (_EPS_BRACKET, 100, 0)}
#: Half-width of the grid of log ρ over the horizon (ρ^(T-1) within e^±span) of the geometric search.
_RATIO_SPAN = {"gamma": 10.0, "epsilon": 8.0}


def optimal_schedule(mechanism, behaviour, *, T, n0, family="free", policy=None, bracket=None, search=None):
    r"""The privacy schedule of a family minimizing the mean-field regret, for either mechanism.

    The regret of a schedule :math:`(ℓ_1, …, ℓ_T)` (:math:`ℓ_t = γ_t` for the
    Gaussian mechanism, :math:`ε_t` for randomized response) is the
    cumulative error :math:`\sum_t \mathbb{E}\|\hat μ_t - μ_t\|^2` of
    :func:`perfpriv.engine.mean_field` with Algorithm 1's indexing (round t
    releases from :math:`N_{t-1}` users). It is minimized over ``family``:

    * ``"free"``: one level per round. TNC on :math:`\log ℓ_t` with the
      engine's adjoint gradient, from several starts; for the Gaussian
      mechanism on a spline surrogate of :math:`p_τ` first, then polished
      on the exact objective.
    * ``"two_phase"`` ("protect then exploit"): :math:`ℓ_{\rm first}` for
      ``switch`` rounds, then :math:`ℓ_{\rm then}`. A 41 x 41 log grid for
      every switch, then TNC for the three best switches (and, Gaussian,
      an exact polish). A one-round horizon has no switch: the best
      constant is returned.
    * ``"geometric"``: :math:`ℓ_t = ℓ_1 ρ^{t-1}` (a smooth change of the
      privacy level, kept inside ``bracket``): a log grid of
      :math:`(ℓ_1, ρ)`, then TNC (and, Gaussian, an exact polish).

    A constant schedule belongs to every family and the best constant
    level (γ* of Remarks 2-3, or ε*) is always a candidate, so
    ``regret <= constant_regret``.

    Parameters
    ----------
    mechanism, behaviour
        The model; the mechanism's level is only a template (the search replaces it). A
        :class:`perfpriv.gaussian.GaussianMean` (statistic ``None``: the paper's; a Monte Carlo
        :math:`p_τ` uses its seed, or 0, so that the regret is a fixed function of the schedule) or
        a :class:`perfpriv.bernoulli.RandomizedResponse`; a :class:`perfpriv.behaviour.Memoryless`
        with scalar q and r (the Gaussian mechanism takes ``rule="leak"`` only).
    T, n0 : int
        Horizon T >= 1 and :math:`N_0`, at least 2 (Gaussian) or 1 (randomized response).
    family : {"free", "two_phase", "geometric"}
    policy : perfpriv.engine.Policy, optional
        Its ``cap`` (at least ``n0``, or None for no cap) and ``floor`` clip the mean field; unset, the
        paper's 20000 and 1 (its other fields concern simulated runs and are not read).
    bracket : (float, float), optional
        Box for every level (and for the best constant), inside [1e-99, 1e99] for γ (the mechanism's
        range with a margin for the search's steps in log γ) and ``EPS_RANGE`` = [1e-50, 500] for ε.
        Default (None): (1e-2, 1e3) for γ, (1e-2, 50) for ε.
    search : dict, optional
        Settings of the search, in the manner of ``scipy.optimize.minimize``'s
        ``options`` (keys left out take their defaults):

        * ``"maxiter"`` (int in [1, 10**6]): objective evaluations of each TNC run (on the
          surrogate, for the Gaussian mechanism). Default: 200 for ``"free"``, 100 otherwise.
        * ``"polish"`` (int in [0, 10**6]): Gaussian mechanism, exact objective evaluations of the
          final TNC run (0: no polish; the result is still evaluated exactly). Default: 40 for
          ``"free"``, 20 otherwise. Randomized response searches the exact objective: 0 only.
        * ``"starts"`` (``"auto"`` or ``"constant"``): starts of the ``"free"`` descent; ``"auto"``
          (default): the best constant and geometric schedules, and for the Gaussian mechanism the
          best two-phase one (found on the surrogate); ``"constant"``: the best constant only
          (faster; used by the explorer). Other families take ``"auto"`` only.
        * ``"switches"`` (array_like of int): ``"two_phase"`` only, the candidate lengths of the
          first phase, each in 0..T (default 1..T−1).

    Returns
    -------
    ScheduleOptimum
        The best schedule of the family, its regret and the best constant's.

    Raises
    ------
    TypeError
        If ``mechanism`` is neither a ``GaussianMean`` nor a ``RandomizedResponse``, ``behaviour``
        is not a ``Memoryless``, ``policy`` not a :class:`perfpriv.engine.Policy`, ``search`` not a
        dict, or an integer argument not a number (``T="x"``).
    ValueError
        Naming the parameter and its allowed range: ``behaviour`` with arrays of q or r, or
        (Gaussian mechanism) a rule other than "leak"; ``family`` not one of the three; ``T < 1``;
        ``n0`` below its least value; the policy's ``cap < n0``; ``bracket`` not a pair low < high
        inside the range above; a ``search`` key not one of the four; ``maxiter`` or ``polish``
        out of range; ``starts`` not "auto" or "constant", or "constant" with another family;
        ``switches`` outside 0..T, or given with another family; a ``T`` (or number of switches)
        too large for the search's arrays.

    References
    ----------
    Paper §5 (discussion: time-varying privacy, suggested there), Remarks
    2-3 (the best constant γ*), Algorithm 1.

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> from perfpriv.bernoulli import RandomizedResponse
    >>> from perfpriv.gaussian import GaussianMean
    >>> gauss, users = GaussianMean(tau=0.02, d=12, R=10), Memoryless(q=0.3, r=0.6)
    >>> res = optimal_schedule(gauss, users, T=4, n0=200)
    >>> bool(res.regret <= res.constant_regret), res.gamma.shape, round(res.gain, 3)
    (True, (4,), 0.031)
    >>> bool(res.gamma[0] > res.gamma[-1])   # more noise first, less later
    True
    >>> two = optimal_schedule(gauss, users, T=6, n0=200, family="two_phase")
    >>> bool(two.params["first"] > two.params["then"]), two.params["switch"]
    (True, 4)
    >>> geo = optimal_schedule(gauss, users, T=6, n0=200, family="geometric")
    >>> round(geo.params["ratio"], 3)
    0.84
    >>> eps = optimal_schedule(RandomizedResponse(1.0), users, T=20, n0=100)
    >>> bool(eps.regret <= eps.constant_regret), bool(eps.epsilon[0] < eps.epsilon[-1])   # protect first
    (True, True)
    >>> eps_geo = optimal_schedule(RandomizedResponse(1.0), users, T=20, n0=100, family="geometric")
    >>> bool(eps_geo.params["ratio"] > 1)   # the budget grows over time
    True
    """
    if isinstance(mechanism, GaussianMean):
        parameter = "gamma"
    elif isinstance(mechanism, RandomizedResponse):
        parameter = "epsilon"
    else:
        raise TypeError(f"mechanism must be a perfpriv.gaussian.GaussianMean or a "
                        f"perfpriv.bernoulli.RandomizedResponse; got {type(mechanism).__name__}")
    family = check_choice("family", family, FAMILIES)
    maxiter, polish, starts, switches = _search_settings(search)
    default_bracket, default_maxiter, default_polish = _DEFAULTS[parameter, family]
    bracket = default_bracket if bracket is None else bracket
    if parameter == "epsilon" and polish is not None and (isinstance(polish, (bool, np.bool_)) or not (
            isinstance(polish, numbers.Number) and polish == 0)):
        raise ValueError(f"search[\"polish\"] must be 0 or left out with randomized response (its search runs "
                         f"on the exact objective); got {polish!r}")
    polish = default_polish if polish is None else polish
    T, lo, hi, maxiter = _common_args(T, bracket, default_maxiter if maxiter is None else maxiter, polish,
                                      parameter=parameter)
    starts = check_choice('search["starts"]', starts, ("auto", "constant"))
    if family != "free" and starts != "auto":
        raise ValueError(f"search[\"starts\"] must be 'auto' with family={family!r} (it chooses the starts of "
                         f"the free search); got {starts!r}")
    if family != "two_phase" and switches is not None:
        raise ValueError(f"search[\"switches\"] must be left out with family={family!r} (it is the two-phase "
                         f"family's); got {switches!r}")
    if family == "two_phase":
        switches = _check_switches(switches, T)
    make = _gauss_problem if parameter == "gamma" else _rr_problem
    pb = make(mechanism, behaviour, n0, engine.check_policy(policy))
    const, const_regret = _constant(pb, T, bracket, lo, hi)
    sur = _surrogate(pb, lo, hi, T) if parameter == "gamma" and (family != "two_phase" or switches) else None
    if family == "free":
        levels, params = _free(pb, sur, T, lo, hi, maxiter, polish, starts, const, const_regret)
    elif family == "two_phase":
        levels, params = _two_phase(pb, sur, T, lo, hi, maxiter, polish, switches, const, const_regret)
    else:
        levels, params = _geometric(pb, sur, T, lo, hi, maxiter, polish, const, const_regret)
    return _result(levels, pb, const, const_regret, family, params)
