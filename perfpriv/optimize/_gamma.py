r"""γ*, the noise scale minimizing the cumulative error (Remark 3, Figs. 4-5), for arrays of cells.

:func:`optimal_gamma` from theory (Lemma 9's bound or the mean field), :func:`optimal_gamma_empirical`
from simulation.
"""

from __future__ import annotations

import math
import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from .. import dynamics, engine
from .._stats import float_or_array as _out
from ..sweep import check_execution
from .._validate import check_allocation, check_bracket, check_choice, check_int
from ..behaviour import Memoryless
from ..gaussian import GaussianMean
from ._cells import GAMMA_SEARCH_RANGE, check_users, search_cells

__all__ = ["GammaOptimum", "optimal_gamma", "optimal_gamma_empirical"]

_OBJECTIVES = ("bound", "mean_field")
#: The grid of :func:`optimal_gamma` for a mechanism without levels: 61 log-spaced noise scales of [0.01, 1000].
_DEFAULT_GAMMAS = np.geomspace(1e-2, 1e3, 61)
_HUGE = 1e300


@dataclass(frozen=True, eq=False)
class GammaOptimum:
    r"""Result of a γ* search.

    Attributes
    ----------
    gamma : float or numpy.ndarray
        γ*, the minimizing noise scale (one per (q, r) cell; NaN where
        ``constrained=True`` leaves no admissible γ in the bracket).
    value : float or numpy.ndarray
        The objective at γ*.
    gammas, values : numpy.ndarray
        The grid of γ evaluated, shape (G,), and the objective on it, shape ``cells + (G,)``
        (``inf`` below :math:`γ_c` when constrained).
    se : numpy.ndarray
        Monte Carlo standard errors of ``values`` (simulation), zeros for
        the deterministic theory objectives.
    gamma_c : float or numpy.ndarray
        Theorem 2's survival threshold at :math:`N_0`, for reference.
    objective : str
        ``"bound"``, ``"mean_field"`` or ``"simulation"``.
    constrained : bool
        Whether the search was restricted to :math:`γ \ge γ_c`.
    settings : dict
        Provenance (T, n0, d, R, statistic, conventions, policy, trials, seed, ...).
    """

    gamma: np.ndarray | float
    value: np.ndarray | float
    gammas: np.ndarray
    values: np.ndarray
    se: np.ndarray
    gamma_c: np.ndarray | float
    objective: str
    constrained: bool
    settings: dict

    def __repr__(self) -> str:
        g = self.gamma
        text = f"{g:.6g}" if isinstance(g, float) else f"<array {np.shape(g)}>"
        return (f"GammaOptimum(gamma={text}, objective={self.objective!r}, constrained={self.constrained}, "
                f"grid={self.gammas.size} values)")


def _search_grid(mechanism):
    """The coarse grid of a γ* search: the mechanism's levels (three or more, increasing) or the default."""
    if not isinstance(mechanism, GaussianMean):
        raise TypeError(f"mechanism must be a perfpriv.gaussian.GaussianMean; got {type(mechanism).__name__}")
    levels = mechanism.levels
    if levels is None:
        return _DEFAULT_GAMMAS.copy()
    if levels.per_round or isinstance(levels.given, engine.PerCell) or levels.shape == () or levels.count < 3:
        raise ValueError("mechanism must hold the search's grid of noise scales (GaussianMean(gammas, ...), at least "
                         "three increasing values) or no level (the default grid); got "
                         f"{mechanism.levels.describe()!r:.80}")
    gammas = np.asarray(levels.values, float)
    if np.any(np.diff(gammas) <= 0):
        raise ValueError(f"mechanism's noise scales must increase (the search refines between grid neighbours); "
                         f"got {gammas!r:.80}")
    return gammas


def optimal_gamma(mechanism, users, *, T, n0, objective="bound", constrained=False, policy=None, rounds="paper"):
    r"""γ* from theory: minimize a deterministic cumulative-error objective over γ.

    ``objective="bound"`` minimizes Lemma 9's :math:`Ê_{\mathrm{total}}(γ)` (Remark 3,
    :func:`perfpriv.dynamics.cumulative_error_bound`); ``"mean_field"`` the cumulative error of
    :func:`perfpriv.engine.mean_field` (under ``policy`` and ``rounds``), for any behaviour.

    The objective is evaluated on the mechanism's grid of noise scales (default: 61 log-spaced
    points of [0.01, 1000], fine enough for the second local minimum of small r and large q), then
    refined on log γ between the neighbours of the best grid point -- by bounded Brent for one
    cell, by golden section vectorized over the cells (one mean-field pass per iteration,
    :class:`perfpriv.engine.PerCell` levels) -- to ~1e-8 in log γ. γ* lies between the grid's ends.

    Parameters
    ----------
    mechanism : perfpriv.gaussian.GaussianMean
        The model (:mod:`perfpriv.dynamics`); its levels, if any, are the search's grid (at least
        three increasing values). A Monte Carlo :math:`p_τ` uses seed 0 if the mechanism has none.
    users : perfpriv.behaviour.Behaviour
        One γ* per cell. ``objective="bound"`` and ``constrained=True`` take the paper's users
        (:class:`perfpriv.behaviour.Memoryless`, ``rule="leak"``), of whom Lemma 9 speaks.
    T, n0 : int
        Horizon T >= 1 and :math:`N_0 \ge 2`.
    objective : {"bound", "mean_field"}
    constrained : bool
        Keep :math:`γ \ge γ_c` (Theorem 2 at :math:`N_0`), the literal reading of Remark 3 (NaN where
        :math:`γ_c` exceeds the grid, e.g. r = 0). Off by default, as in the authors' code: :math:`γ_c` is
        only sufficient, several times the exact threshold (:func:`perfpriv.dynamics.exact_critical_gamma`).
    policy : perfpriv.engine.Policy, optional
        Its ``cap`` and ``floor`` clip the mean field (``objective="mean_field"``
        only); unset, the paper's 20000 and 1.
    rounds : {"paper", "algorithm"}
        Release indexing of the mean field (:func:`perfpriv.engine.mean_field`); Lemma 9's
        ``"paper"`` by default here.

    Returns
    -------
    GammaOptimum

    References
    ----------
    Paper, Lemma 9 (eq. 16), Remarks 2-3, Figures 4-5.

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> mech = GaussianMean(tau=0.02, d=12, R=10, leak_method="quadrature")
    >>> res = optimal_gamma(mech, Memoryless(q=0.3, r=0.6), T=50, n0=1000)
    >>> round(res.gamma, 3)
    0.557
    """
    gammas = _search_grid(mechanism)
    users = check_users(users)
    T = check_int("T", T, low=1)
    n0 = check_int("n0", n0, low=2)
    objective = check_choice("objective", objective, _OBJECTIVES)
    rounds = check_choice("rounds", rounds, ("paper", "algorithm"))
    if not isinstance(constrained, (bool, np.bool_)):
        raise TypeError(f"constrained must be True or False; got {constrained!r}")
    if (objective == "bound" or constrained) and not (isinstance(users, Memoryless) and users.rule == "leak"):
        raise ValueError(f"users must be the paper's (Memoryless, rule='leak') for objective='bound' or "
                         f"constrained=True: Lemma 9's bound and Theorem 2's γ_c are about them; got {users!r:.80}")
    shape = tuple(users.shape)
    check_allocation("the objective on the grid (grid x cells values)", float(gammas.size) * max(math.prod(shape), 1),
                     name="mechanism")
    lo, hi = float(gammas[0]), float(gammas[-1])
    if objective == "mean_field":          # the mechanism's range (the bound is a formula, defined beyond it)
        check_bracket((lo, hi), name="mechanism's grid", within=GAMMA_SEARCH_RANGE, what="gamma")
    options = mechanism.options()
    if options["leak_method"].seed is None:
        options["leak_method"] = dataclasses.replace(options["leak_method"], seed=0)
    resolved = engine.check_policy(policy).resolve(GaussianMean(**options), "paper", n0=n0)  # checks, before any work
    grid = gammas.size
    if isinstance(users, Memoryless):
        qq, rr = users.cell_coordinates()
    else:
        qq = rr = None

    def evaluate(gam, on_grid=False):
        """Objective at γ: a 1-D grid shared by the cells (``on_grid``: -> cells + (G,)), or one γ per cell."""
        g = np.asarray(gam, float)
        if objective == "bound":
            qa, ra = (qq[..., None], rr[..., None]) if on_grid else (qq, rr)
            return np.asarray(dynamics.cumulative_error_bound(GaussianMean(**options), Memoryless(q=qa, r=ra),
                                                              T=T, n0=n0, gamma=g), float)
        level = g if (on_grid or shape == ()) else engine.PerCell(np.broadcast_to(g, shape))
        path = engine.mean_field(GaussianMean(float(g) if (shape == () and not on_grid) else level, **options),
                                 users, T=T, n0=n0, cap=resolved.cap, floor=resolved.floor, rounds=rounds)
        return np.asarray(path.cumulative_error, float)

    values = evaluate(gammas, on_grid=True)
    gamma_c = _reference_gamma_c(options, users, n0)
    if constrained:
        values = np.where(gammas < gamma_c[..., None], np.inf, values)
    a = np.maximum(lo, gamma_c) if constrained else np.full(shape, lo)
    feasible = a <= hi
    safe = np.where(np.isnan(values), np.inf, values)
    i = np.argmin(safe, axis=-1)
    grid_best_v = np.take_along_axis(safe, i[..., None], axis=-1)[..., 0]
    grid_best_g = gammas[i]
    left = np.maximum(a, gammas[np.maximum(i - 1, 0)])
    right = np.where(np.isfinite(grid_best_v), gammas[np.minimum(i + 1, grid - 1)], np.minimum(a * 1.0001, hi))
    right = np.maximum(right, left)
    left, right = np.where(feasible, left, lo), np.where(feasible, right, lo)
    if shape == ():
        ref_g = np.asarray(_brent(lambda g: evaluate(np.asarray(g)), float(left), float(right)))
    else:
        ref_g = _golden(evaluate, left, right)
    ref_v = evaluate(ref_g)
    cands_g, cands_v = [grid_best_g, ref_g], [grid_best_v, ref_v]
    if constrained:  # the boundary γ_c itself
        edge = np.where(feasible, a, lo)
        cands_g.append(edge)
        cands_v.append(evaluate(edge))
    cg, cv = np.stack(cands_g), np.stack(cands_v)
    cv = np.where(np.isnan(cv), np.inf, cv)
    k = np.argmin(cv, axis=0)
    best_g = np.take_along_axis(cg, k[None], axis=0)[0]
    best_v = np.take_along_axis(cv, k[None], axis=0)[0]
    best_g = np.where(feasible, best_g, np.nan)
    best_v = np.where(feasible, best_v, np.nan)
    settings = dict(tau=mechanism.tau, T=T, n0=n0, d=mechanism.d, R=mechanism.R, statistic=mechanism.statistic,
                    cap=resolved.cap, floor=resolved.floor, rounds=rounds, bracket=(lo, hi), grid=grid,
                    method=mechanism.leak_method, users=users)
    return GammaOptimum(_out(best_g), _out(best_v), gammas, values, np.zeros(values.shape), _out(gamma_c),
                        objective, bool(constrained), settings)


def _log_objective(v):
    """log of a positive objective, with inf/0 mapped to finite surrogates."""
    v = np.asarray(v, float)
    with np.errstate(divide="ignore"):
        return np.where(v >= _HUGE, math.log(_HUGE), np.where(v > 0, np.log(np.maximum(v, 1e-300)), -_HUGE))


def _brent(fun, left, right):
    """minimize_scalar (bounded) of log fun(e^u) on [log left, log right]."""
    if right <= left:
        return left
    res = optimize.minimize_scalar(lambda u: float(_log_objective(fun(math.exp(u)))),
                                   bounds=(math.log(left), math.log(right)), method="bounded",
                                   options={"xatol": 1e-9})
    return float(math.exp(res.x))


def _golden(fun, left, right, iterations=40):
    """Golden-section search of log fun(e^u) (one γ per cell) on [log left, log right]: 0.618^40 ~ 4e-9."""
    a, b = np.log(np.asarray(left, float)), np.log(np.asarray(right, float))
    phi = (math.sqrt(5) - 1) / 2
    c, d = b - phi * (b - a), a + phi * (b - a)
    fc, fd = _log_objective(fun(np.exp(c))), _log_objective(fun(np.exp(d)))
    for _ in range(iterations):
        go_left = fc <= fd
        b = np.where(go_left, d, b)
        a = np.where(go_left, a, c)
        new = np.where(go_left, b - phi * (b - a), a + phi * (b - a))
        fn = _log_objective(fun(np.exp(new)))
        c, d, fc, fd = (np.where(go_left, new, d), np.where(go_left, c, new),
                        np.where(go_left, fn, fd), np.where(go_left, fc, fn))
    return np.exp(np.where(fc <= fd, c, d))


def _reference_gamma_c(options, users, n0):
    """Theorem 2's γ_c at n0 for the paper's users (the users' cell shape), NaN for other users."""
    if isinstance(users, Memoryless) and users.rule == "leak":
        qq, rr = users.cell_coordinates()
        return np.asarray(dynamics.critical_gamma(GaussianMean(**options), Memoryless(q=qq, r=rr), n=n0), float)
    return np.full(tuple(users.shape), np.nan)


def optimal_gamma_empirical(mechanism, users, *, T, n0, trials, policy=None, conventions="paper", seed=None,
                            options=None):
    r"""γ* from simulation: grid search of Algorithm 1's mean cumulative error.

    For every γ of the mechanism's grid and every cell of ``users``, the cumulative squared
    Mahalanobis error :math:`Σ_t \|o_t - μ\|^{2}_{Σ^{-1}}` of ``trials`` runs of Algorithm 1
    (:func:`perfpriv.engine.simulate`) is averaged; γ* is the grid point with the smallest mean.
    All γ of a cell share their random numbers round by round (common random numbers).

    Unless ``policy`` says otherwise, a run down to one user stops (``stop=1``: a lone user always
    leaks) and its remaining rounds are scored by ``collapse`` (:class:`perfpriv.engine.Policy`):
    ``"floor"`` under ``conventions="paper"`` (Theorem 3's: :math:`γ^{2} \mathrm{Tr} Σ^{-1} + d` per round,
    Lemma 3 at N = 1, as the mean field with ``floor=1``), ``"ran"`` under ``"authors"``, which hides
    the cost of collapsing and favours small γ where collapses are frequent.

    Parameters
    ----------
    mechanism : perfpriv.gaussian.GaussianMean
        Its noise scales are the grid searched (a number or a 1-D grid); the rest is the model.
    users : perfpriv.behaviour.Behaviour
        One γ* per cell (e.g. ``Memoryless(q=Q, r=R)`` over a meshgrid; any behaviour).
    T, n0, trials, policy, conventions, seed
        As in :func:`perfpriv.engine.simulate` (:math:`N_0 \ge 2`; ``trials`` >= 2 per (cell, γ);
        the policy's ``stop`` and ``collapse`` as above unless set). Each cell has its own key
        (:func:`perfpriv.engine.cell_keys`), whatever the grid around it, the batches or the workers.
    options : perfpriv.sweep.Execution, optional
        Workers, cells per batch (default 4), progress and a per-batch
        callback (:func:`perfpriv.sweep.map_grid`).

    Returns
    -------
    GammaOptimum
        ``values``/``se`` of shape ``users.shape + (len(gammas),)``; ``gamma_c`` NaN for users
        other than the paper's.

    References
    ----------
    Paper, Algorithm 1, Theorem 3, Figures 4-5 (empirical heatmaps).

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> from perfpriv.engine import Policy
    >>> mech = GaussianMean([0.1, 2.0, 20.0], tau=0.05, d=2, R=5)
    >>> kw = dict(T=20, n0=30, trials=10, policy=Policy(cap=200), seed=1)
    >>> optimal_gamma_empirical(mech, Memoryless(q=0.6, r=0.3), **kw).gamma
    2.0
    """
    gammas = engine.level_grid(mechanism, kind=GaussianMean)
    users = check_users(users)
    T = check_int("T", T, low=1)
    n0 = check_int("n0", n0, low=2)
    trials = check_int("trials", trials, low=2)
    conventions = check_choice("conventions", conventions, engine.CONVENTIONS)
    policy = engine.check_policy(policy)
    policy = dataclasses.replace(
        policy, stop=1 if policy.stop is engine.UNSET else policy.stop,
        collapse="floor" if policy.collapse is engine.UNSET and conventions == "paper" else policy.collapse)
    policy.resolve(mechanism, conventions, n0=n0)        # checks the policy against n0, before any work
    options = check_execution(options, chunk=4, description=f"gamma* (tau={mechanism.tau:g})")
    model = mechanism.options()
    values, se = search_cells(GaussianMean(gammas, **model), users, seed=seed, options=options, T=T, n0=n0,
                              trials=trials, policy=policy, conventions=conventions)
    k = np.argmin(values, axis=-1)
    best_g = gammas[k]
    best_v = np.take_along_axis(values, k[..., None], axis=-1)[..., 0]
    gamma_c = _reference_gamma_c(model, users, n0)
    settings = dict(tau=mechanism.tau, T=T, n0=n0, d=mechanism.d, R=mechanism.R, trials=trials,
                    statistic=mechanism.statistic, conventions=conventions, policy=policy.describe(),
                    draw=mechanism.draw, seed=seed, users=users)
    return GammaOptimum(_out(best_g), _out(best_v), gammas, values, se, _out(gamma_c), "simulation", False,
                        settings)
