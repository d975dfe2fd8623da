"""The noise scale gamma* that minimizes the cumulative error over a finite horizon.

Paper Remarks 2-3, Lemma 9, Figures 4-5 and appendix A. Two routes:

* :func:`optimal_gamma` -- from theory: minimize Lemma 9's closed form
  Ê_total(gamma) (``objective="bound"``, what the paper's theoretical
  heatmaps show) or the mean-field cumulative error with p_tau re-evaluated
  at every N_t and the population cap applied (``objective="mean_field"``)
  over log gamma: a log grid first (the objective can have two local
  minima when r is small and q large), then
  :func:`scipy.optimize.minimize_scalar` (``method="bounded"``) around the
  best grid point (for arrays of cells, a golden-section search vectorized
  over the cells).
* :func:`optimal_gamma_empirical` -- from simulation: grid search of the
  mean cumulative squared Mahalanobis error of Algorithm 1
  (:func:`perfpriv.gaussian.simulate`), the (q, r) cells evaluated through
  :func:`perfpriv.sweep.sweep` (joblib, ``n_jobs=``), each seeded from its
  own coordinates by :func:`perfpriv.sweep.cell_seed`.

Both accept arrays ``q`` and ``r`` (an (r, q) grid of the heatmaps) and
return a :class:`GammaOptimum`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from . import dynamics as _dyn
from . import gaussian
from ._validate import check_choice, check_int, check_probability, check_real, check_same_shape
from .epsilon_search import _sweep_qr

__all__ = ["GammaOptimum", "optimal_gamma", "optimal_gamma_empirical"]

_OBJECTIVES = ("bound", "mean_field")
_COLLAPSE = ("floor", "ran")
_HUGE = 1e300


@dataclass(frozen=True)
class GammaOptimum:
    """Result of a gamma* search.

    Attributes
    ----------
    gamma : float or numpy.ndarray
        gamma*, the minimizing noise scale (one per (q, r) cell; NaN where
        ``constrained=True`` leaves no admissible gamma in the bracket).
    value : float or numpy.ndarray
        The objective at gamma*.
    gammas : numpy.ndarray
        The grid of gamma values evaluated, shape ``(G,)``.
    values : numpy.ndarray
        The objective on that grid, shape ``cells + (G,)`` (``inf`` below
        gamma_c when constrained).
    se : numpy.ndarray
        Monte Carlo standard errors of ``values`` (simulation), zeros for
        the deterministic theory objectives.
    gamma_c : float or numpy.ndarray
        Theorem 2's survival threshold at N_0, for reference.
    objective : str
        ``"bound"``, ``"mean_field"``, ``"empirical/floor"`` or ``"empirical/ran"``.
    constrained : bool
        Whether the search was restricted to gamma >= gamma_c.
    """

    gamma: np.ndarray | float
    value: np.ndarray | float
    gammas: np.ndarray
    values: np.ndarray
    se: np.ndarray
    gamma_c: np.ndarray | float
    objective: str
    constrained: bool


def _out(x):
    x = np.asarray(x, float)
    return float(x) if x.ndim == 0 else x


def _check_qr_tau(q, r, tau):
    q = check_probability("q", q)
    r = check_probability("r", r)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    shape = check_same_shape(q=q, r=r)
    return np.broadcast_to(np.asarray(q, float), shape), np.broadcast_to(np.asarray(r, float), shape), tau, shape


def optimal_gamma(q, r, tau, *, T, n0, d, R, mu=None, Sigma=None, statistic="paper", objective="bound",
                  constrained=False, cap=20000, floor=1, rounds="paper", bracket=(1e-2, 1e3), grid=61,
                  method="auto", samples=None, seed=None):
    r"""gamma* from theory: minimize a deterministic cumulative-error objective over gamma.

    ``objective="bound"`` minimizes Lemma 9's Ê_total(gamma) =
    (gamma^2 Tr Sigma^-1 + d) (1 - C_1^-T) / (N_0 (C_1 - 1)) (Remark 3,
    :func:`perfpriv.dynamics.cumulative_error_bound`); ``"mean_field"``
    minimizes :func:`perfpriv.dynamics.mean_field_cumulative_error` (p_tau
    re-evaluated at every N_t, ``cap`` and ``floor`` applied, releases
    indexed by ``rounds``).

    The search runs on log gamma: the objective is evaluated on ``grid``
    log-spaced points of ``bracket`` (this catches the second local minimum
    that appears for small r and large q), then refined by
    :func:`scipy.optimize.minimize_scalar` (``method="bounded"``) between
    the neighbours of the best grid point. For arrays of (q, r) cells a
    golden-section search vectorized over all cells does that refinement
    instead (one vectorized evaluation per iteration for the whole grid
    rather than a scalar solver cell by cell: much faster for heatmaps,
    especially with the mean-field objective, whose every evaluation walks
    T rounds); both locate the minimum to ~1e-8 in log gamma. The
    mean-field objective is continuous but has kinks (the floor and the cap
    bind at gamma-dependent rounds), hence often several local minima.

    ``constrained=True`` keeps gamma >= gamma_c (Theorem 2 at N_0), the
    literal reading of Remark 3. It is off by default: gamma_c is only a
    sufficient condition for growth -- several times larger than the gamma
    at which C_1 = 1 (:func:`perfpriv.dynamics.exact_critical_gamma`) -- and
    the authors' own code minimizes without it. When gamma_c exceeds the
    bracket (e.g. r = 0) the result is NaN.

    Parameters
    ----------
    q, r : float or array_like
        Leave and recruit probabilities in [0, 1] (broadcast: one gamma*
        per cell).
    tau : float
        tau > 0, leak threshold.
    T : int
        Horizon T >= 1.
    n0 : int
        N_0 >= 2.
    d, R, mu, Sigma, statistic
        Data model (see :mod:`perfpriv.dynamics`).
    objective : {"bound", "mean_field"}
        Objective to minimize.
    constrained : bool
        Restrict to gamma >= gamma_c.
    cap, floor, rounds
        Mean-field options (``objective="mean_field"`` only), see
        :func:`perfpriv.dynamics.mean_field_error`.
    bracket : tuple of float
        Search interval (low, high) for gamma.
    grid : int
        Number of log-spaced grid points (>= 3).
    method, samples, seed
        p_tau evaluation; a Monte Carlo p_tau uses one fixed seed for every
        evaluation, so the objective is deterministic.

    Returns
    -------
    GammaOptimum

    References
    ----------
    Paper, Lemma 9 (eq. 16), Remarks 2-3, Figures 4-5.

    Examples
    --------
    >>> from perfpriv.gamma_search import optimal_gamma
    >>> res = optimal_gamma(0.3, 0.6, 0.02, T=50, n0=1000, d=12, R=10, method="quadrature")
    >>> round(res.gamma, 3)
    0.557
    """
    q, r, tau, shape = _check_qr_tau(q, r, tau)
    T = check_int("T", T, low=1)
    n0 = check_int("n0", n0, low=2)
    objective = check_choice("objective", objective, _OBJECTIVES)
    rounds = check_choice("rounds", rounds, _dyn._ROUNDS)
    if not isinstance(constrained, (bool, np.bool_)):
        raise TypeError(f"constrained must be True or False; got {constrained!r}")
    cap, floor = _dyn._check_cap_floor(cap, floor, n0)
    lo, hi = _dyn._check_bracket(bracket)
    grid = check_int("grid", grid, low=3)
    model = _dyn._model(d, R, mu, Sigma, statistic, method, samples, seed)

    def evaluate(gam, qq, rr):
        """Objective at broadcast arrays gam, qq, rr."""
        if objective == "bound":
            p = _dyn._marginal_p(n0, gam, tau, model)
            return np.asarray(_dyn._bound_from_p(gam, qq, rr, p, T, n0, model), float)
        N = _dyn._mean_field(gam, tau, qq, rr, T, n0, cap, floor, model)
        num = _dyn._release_error(np.broadcast_to(gam, N.shape[:-1]), model)
        with np.errstate(divide="ignore"):
            return (num[..., None] / _dyn._rounds_slice(N, rounds)).sum(axis=-1)

    gammas = np.geomspace(lo, hi, grid)
    values = evaluate(gammas, q[..., None], r[..., None])
    gamma_c = np.asarray(_dyn.critical_gamma(q, r, tau, n0, R), float)
    if constrained:
        values = np.where(gammas < gamma_c[..., None], np.inf, values)

    # bracket of the refinement in every cell: the neighbours of the best grid point
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
        ref_g = _brent(lambda g: evaluate(np.asarray(g), q, r), float(left), float(right))
    else:
        ref_g = _golden(lambda g: evaluate(g, q, r), left, right)
    ref_v = evaluate(ref_g, q, r)
    cands_g = [grid_best_g, ref_g]
    cands_v = [grid_best_v, ref_v]
    if constrained:  # the boundary gamma_c itself
        edge = np.where(feasible, a, lo)
        cands_g.append(edge)
        cands_v.append(evaluate(edge, q, r))
    cg, cv = np.stack(cands_g), np.stack(cands_v)
    cv = np.where(np.isnan(cv), np.inf, cv)
    k = np.argmin(cv, axis=0)
    best_g = np.take_along_axis(cg, k[None], axis=0)[0]
    best_v = np.take_along_axis(cv, k[None], axis=0)[0]
    best_g = np.where(feasible, best_g, np.nan)
    best_v = np.where(feasible, best_v, np.nan)
    return GammaOptimum(_out(best_g), _out(best_v), gammas, values, np.zeros(values.shape),
                        _out(gamma_c), objective, bool(constrained))


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
    """Golden-section search of log fun(e^u) on [log left, log right], vectorized over cells.

    40 iterations shrink the bracket (two grid steps) by 0.618^40 ~ 4e-9.
    """
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


def optimal_gamma_empirical(q, r, tau, gammas, *, T, n0, d, R, trials, mu=None, Sigma=None, statistic="paper",
                            cap=20000, collapse="floor", seed=None, n_jobs=None, progress="auto"):
    r"""gamma* from simulation: grid search of Algorithm 1's mean cumulative error.

    For every gamma of ``gammas`` and every (q, r) cell, ``trials`` runs of
    :func:`perfpriv.gaussian.simulate` are made and the cumulative squared
    Mahalanobis error sum_{t=1}^T ||o_t - mu||^2_{Sigma^-1} of each run is
    averaged; gamma* is the grid point with the smallest mean.

    Rounds after a collapse -- the population at or below 1 user; it then
    never recovers, since a lone user always leaks and so never recruits --
    must count somehow, and the choice can move gamma*:

    * ``collapse="floor"`` (default; Theorem 3's convention): the population
      is floored at one user, so each such round costs the error of a
      one-record release. Its *expected* value gamma^2 Tr Sigma^-1 + d
      (Lemma 3 at N = 1) is used rather than the simulated draw (or the
      repeated last error :func:`perfpriv.gaussian.simulate` stores after
      the population reaches 0): a one-record release is the record plus
      noise, whose error has exactly that mean, and the mean keeps the
      estimate's variance down. A collapse is thus penalized, as it should
      be for a platform that has lost its users, and the objective is the
      simulated counterpart of the mean-field error with ``floor=1``.
    * ``collapse="ran"`` (the authors' published code, which stops a trial
      once N <= 1): the errors of the rounds with at least 2 users are
      averaged and multiplied by T, i.e. a collapsed run is judged only by
      the rounds it ran. This hides the cost of collapsing and favours
      small gamma where collapses are frequent.

    The (q, r) cells are evaluated through :func:`perfpriv.sweep.sweep`
    (joblib). Every cell gets its own random stream,
    ``perfpriv.sweep.cell_seed(seed, q, r)``, so a cell's value does not
    depend on the grid around it, on ``n_jobs`` or on the joblib backend
    (bit-identical); within a cell the same stream is reused for every gamma
    (common random numbers, which makes the comparison between gammas less
    noisy).

    Parameters
    ----------
    q, r : float or array_like
        Leave and recruit probabilities (broadcast; one gamma* per cell).
    tau : float
        tau > 0, leak threshold.
    gammas : array_like
        Candidate noise scales (> 0), 1-D.
    T, n0, d, R, trials, mu, Sigma, statistic, cap
        Passed to :func:`perfpriv.gaussian.simulate`.
    collapse : {"floor", "ran"}
        How rounds after a collapse count (see above).
    seed : int, numpy.random.SeedSequence or None
        Root seed (a non-negative int or a SeedSequence); ``None`` draws
        fresh entropy once for the whole call.
    n_jobs : int, optional
        joblib workers for the (q, r) cells (``-1``: all cores; ``None``:
        joblib's default or an enclosing ``joblib.parallel_config``).
    progress : {"auto", True, False}
        Progress bar of the sweep (``"auto"``: only on an interactive terminal).

    Returns
    -------
    GammaOptimum
        ``values``/``se``: mean cumulative error and its standard error,
        shape ``cells + (len(gammas),)``.

    References
    ----------
    Paper, Algorithm 1, Theorem 3, Figures 4-5 (empirical heatmaps).

    Examples
    --------
    >>> from perfpriv.gamma_search import optimal_gamma_empirical
    >>> kw = dict(T=20, n0=30, d=2, R=5, trials=10, cap=200, seed=1)
    >>> optimal_gamma_empirical(0.6, 0.3, 0.05, [0.1, 2.0, 20.0], **kw).gamma
    2.0
    >>> optimal_gamma_empirical(0.6, 0.3, 0.05, [0.1, 2.0, 20.0], collapse="ran", **kw).gamma
    0.1
    """
    q, r, tau, shape = _check_qr_tau(q, r, tau)
    # the simulator's range (gaussian.GAMMA_RANGE), checked here so the message names ``gammas``
    gammas = np.atleast_1d(check_real("gammas", gammas, low=gaussian.GAMMA_RANGE[0],
                                      high=gaussian.GAMMA_RANGE[1]))
    if gammas.ndim != 1:
        raise ValueError(f"gammas must be a 1-D array of noise scales; got shape {gammas.shape}")
    T = check_int("T", T, low=1)
    n0 = check_int("n0", n0, low=2)
    trials = check_int("trials", trials, low=2)
    collapse = check_choice("collapse", collapse, _COLLAPSE)
    if seed is None:
        seed = np.random.SeedSequence()
    elif not isinstance(seed, np.random.SeedSequence):
        seed = check_int("seed", seed, low=0)
    model = _dyn._model(d, R, mu, Sigma, statistic, fix_seed=False)
    one_record = np.asarray(_dyn._release_error(gammas, model), float) * np.ones(gammas.shape)
    out = _sweep_qr(_gamma_cell, q, r, seed=seed, n_jobs=n_jobs, progress=progress,
                    description=f"gamma* (tau={tau:g})", tau=tau, gammas=gammas, one_record=one_record, T=T,
                    n0=n0, d=d, R=R, trials=trials, mu=mu, Sigma=Sigma, statistic=statistic, cap=cap,
                    collapse=collapse)
    values, se = out[..., 0, :], out[..., 1, :]
    k = np.argmin(values, axis=-1)
    best_g = gammas[k]
    best_v = np.take_along_axis(values, k[..., None], axis=-1)[..., 0]
    gamma_c = _dyn.critical_gamma(q, r, tau, n0, R)
    return GammaOptimum(_out(best_g), _out(best_v), gammas, values, se, _out(gamma_c),
                        f"empirical/{collapse}", False)


def _gamma_cell(q, r, *, seed, tau, gammas, one_record, T, n0, d, R, trials, mu, Sigma, statistic, cap, collapse,
                skip=False):
    """Mean cumulative error and its standard error for every gamma, one (q, r) cell: shape (2, G)."""
    out = np.full((2, gammas.size), np.nan)
    if skip:
        return out
    for j, g in enumerate(gammas):
        # a fresh copy of the cell's SeedSequence for every gamma: simulate spawns children from it
        # (which advances its counter), and every gamma must see the same streams
        fresh = np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size)
        sim = gaussian.simulate(float(g), tau, q, r, T=T, n0=n0, d=d, R=R, trials=trials, mu=mu, Sigma=Sigma,
                                statistic=statistic, cap=cap, seed=fresh)
        per_trial = _cumulative(sim, float(one_record[j]), T, collapse)
        out[0, j] = per_trial.mean()
        out[1, j] = per_trial.std(ddof=1) / math.sqrt(trials)
    return out


def _cumulative(sim, one_record_error, T, collapse):
    """Per-trial cumulative error of a simulation under a collapse convention.

    ``one_record_error``: a number, or one value per round (shape (T,), a
    privacy schedule's :mod:`perfpriv.schedules`).

    Round t (t = 0..T-1) releases from ``sim.population[:, t]`` records; it
    is *live* when that population is at least 2. Once the population is at
    or below 1 it never recovers (a lone user always leaks, so never
    recruits), so the non-live rounds are exactly the rounds after a collapse.
    """
    err = np.asarray(sim.error, float)
    live = np.asarray(sim.population, float)[:, :T] >= 2
    if collapse == "floor":
        return np.where(live, err, one_record_error).sum(axis=-1)
    ran = live.sum(axis=-1)
    total = np.where(live, err, 0.0).sum(axis=-1)
    return total / np.maximum(ran, 1) * T  # n0 >= 2: round 0 always runs
